import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentRxError, isAgentRxError, toAgentRxError } from '../../core/errors.js';
import type { LiveSession } from '../../core/plugin/live-session.js';
import type { ClientAnswers, ConfirmTool } from '../../core/plugin/session-options.js';
import type { SessionPlacement } from '../../core/plugin/session-placement.js';
import { RunAdmission } from './agui-http.admission.js';
import { ClientTools } from './agui-http.client-tools.js';
import type { AgUiHttpOptions } from './agui-http.config.js';
import { Forwarding } from './agui-http.forwarding.js';
import { withContext, type AgUiRunRequest } from './agui-http.input.js';
import { confirmationDecision } from './agui-http.interrupts.js';
import { RunMessages } from './agui-http.messages.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';
import { Run } from './agui-http.run.js';
import { RunLifecycle } from './agui-http.run-lifecycle.js';
import { AgUiEventStream } from './agui-http.stream.js';
import { Suspensions } from './agui-http.suspension.js';
import { Thread, quietly, settledOf } from './agui-http.thread.js';
import { ThreadPool } from './agui-http.thread-pool.js';
import type { LocalThread } from './agui-http.thread-view.js';
import { liveTranslation } from './agui-http.translation.js';

/** How the threads observe and configure the sessions they open (see `AgUiHandlerOptions`). */
export interface AgUiThreadHooks {
  readonly onSession?: ((session: LiveSession, threadId: string) => void) | undefined;
  readonly confirmTool?: ConfirmTool | undefined;
}

/**
 * The endpoint's threads and runs. The first request of a `threadId` continues the thread's live
 * session when the placement finds one (opened through another endpoint), else opens one with
 * the last user message as prompt; a later request on that thread sends its last user message
 * with `session.message()` and streams that next run. RUN_STARTED / RUN_FINISHED carry the
 * client's `threadId` and `runId`. Exactly one terminal event (RUN_FINISHED or RUN_ERROR) ends
 * every stream; if the session dies first, a RUN_ERROR with its error code is sent, and the
 * thread's next request starts a new session. The parts: admission ({@link RunAdmission}), the
 * threads' idle lifecycle ({@link ThreadPool}), how runs end ({@link RunLifecycle}), the waits on
 * the client ({@link Suspensions}) and the way to the client ({@link Forwarding}).
 */
export class AgUiThreads {
  private readonly admission: RunAdmission;
  private readonly pool: ThreadPool;
  private readonly runs: RunLifecycle;
  private readonly suspensions: Suspensions;
  private readonly forwarding: Forwarding;
  /** Threads whose session is being found or opened (a round trip). */
  private readonly opening = new Set<string>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly placement: SessionPlacement,
    private readonly options: AgUiHttpOptions,
    private readonly hooks: AgUiThreadHooks,
  ) {
    this.admission = new RunAdmission(options);
    this.pool = new ThreadPool(options);
    this.runs = new RunLifecycle(placement, this.pool, this.admission, options);
    this.suspensions = new Suspensions(this.runs, this.pool);
    this.forwarding = new Forwarding(this.runs, this.pool, this.suspensions);
  }

  /** Runs streaming now. */
  get activeRuns(): number {
    return this.admission.activeRuns;
  }

  /** Live threads (sessions), running or idle. */
  get threadCount(): number {
    return this.pool.size;
  }

  /** True while the endpoint refuses new runs. */
  get isClosing(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Streams a run of `request` to `res`, or answers 503 (closing, or the session cannot start),
   * 429 (`maxConcurrentRuns`, `maxRunsPerClient` for `client` or `maxThreads` reached, with
   * `Retry-After`), 409 (a run of that thread is still streaming — callers wait `settled` first —,
   * or its session is being opened) or 400 (the run answers nothing that waits, or options the
   * placement refuses). Settles once the stream is open or the answer sent; never rejects.
   */
  async startRun(req: IncomingMessage, res: ServerResponse, request: AgUiRunRequest, cors: HeaderMap, client: string, resumeSessionId?: string): Promise<void> {
    if (this.closing) return sendJson(res, 503, { error: 'unavailable', message: 'the endpoint is shutting down' }, cors);
    if (this.admission.refuse(res, cors, client)) return;
    const threadId = request.threadId;
    const thread = this.pool.get(threadId);
    if (thread?.run) {
      return sendJson(
        res,
        409,
        { error: 'thread_busy', message: `thread ${threadId} is still streaming run ${thread.run.runId}; wait for its terminal event (or abort it) first` },
        cors,
      );
    }
    if (this.opening.has(threadId)) {
      return sendJson(
        res,
        409,
        {
          error: 'thread_busy',
          message: `thread ${threadId} is opening its session for another request; wait for that run's terminal event (or abort it) first`,
        },
        cors,
      );
    }
    if (!thread && this.pool.size >= this.options.maxThreads && !this.pool.evictIdle()) {
      this.admission.tooMany(res, cors, `${this.pool.size} threads are running (limit ${this.options.maxThreads}); retry later`);
      return;
    }
    const run = new Run(request.runId, AgUiEventStream.forRun(req, res, this.options, request.wireVersion), client, new RunMessages(request.messages));
    this.admission.count(run);
    // Finding or opening the session takes a round trip: a second request of the thread meanwhile gets a 409.
    this.opening.add(threadId);
    try {
      this.begin(await this.attach(request, run, thread, resumeSessionId), run, res, cors);
    } catch (e) {
      this.refuse(run, res, cors, e);
    } finally {
      this.opening.delete(threadId);
    }
  }

  /** Settles once `threadId` can take a new run (see `ThreadPool.settled`). */
  settled(threadId: string): Promise<void> {
    return this.pool.settled(threadId);
  }

  /**
   * Gives `run` a session: a suspended thread's run answers what it waits for; a run answering a
   * wait of a thread this endpoint does not serve (it restarted, or let go of the thread) resumes
   * the thread's stored session with the answers, which its ledger must hold as waiting
   * (`awaiting_client`); the thread's live session gets the message; a thread this endpoint does
   * not serve continues its live session elsewhere (`find`) or opens one.
   */
  private async attach(request: AgUiRunRequest, run: Run, thread: Thread | undefined, resumeSessionId: string | undefined): Promise<Thread> {
    if (thread?.wait.suspended) return this.suspensions.continueRun(thread, run, request);
    const answering = request.toolResults.length > 0 || request.resume.length > 0;
    if (answering && !thread) {
      // The thread's session may still run elsewhere (the worker pool), waiting for these answers.
      const found = await this.placement.find(request.threadId);
      if (found) return this.answerLive(request, run, found);
      if (resumeSessionId !== undefined) return this.open(request, run, resumeSessionId, clientAnswersOf(request));
    }
    if (request.toolResults.length > 0) {
      const ids = request.toolResults.map((r) => r.toolCallId).join(', ');
      throw new AgentRxError(
        'invalid_options',
        `messages: the run ends with tool results (${ids}) but no run of thread ${request.threadId} waits for frontend tool results here (it ended, expired or the server restarted); send a new user message to go on`,
      );
    }
    if (request.resume.length > 0) {
      throw new AgentRxError(
        'invalid_options',
        `resume: no run of thread ${request.threadId} waits for an answer to ${request.resume.map((r) => r.interruptId).join(', ')} (it ended, expired or the server restarted)`,
      );
    }
    const reopen = (): Promise<Thread> => this.open(request, run, resumeSessionId);
    if (thread) return this.send(thread, run, request, reopen);
    const found = await this.placement.find(request.threadId);
    if (!found) return reopen();
    this.checkOpen(found);
    return this.send(this.adopt(request.threadId, found, undefined), run, request, reopen);
  }

  /** Sends the run's message (and the client's state) to the thread's session; one that has closed meanwhile is replaced by `reopen()`. */
  private async send(thread: Thread, run: Run, request: AgUiRunRequest, reopen: () => Promise<Thread>): Promise<Thread> {
    thread.run = run;
    const session = thread.session;
    try {
      // The client's state is the agent's: it replaces the session's before the run. Both inputs
      // are handed over before either is awaited, so they reach the session in this order.
      const state = request.state;
      const stateSet = Promise.resolve(state !== undefined ? session.setState(state) : undefined);
      stateSet.catch(() => undefined);
      await Promise.all([stateSet, session.message(withContext(request.text, request.context))]);
      return thread;
    } catch (e) {
      thread.run = undefined;
      if (!isAgentRxError(e, 'session_closed')) throw e;
      // The session closed between its last run and this request: start a new one.
      this.pool.forget(thread);
      quietly(() => session.release());
      return reopen();
    }
  }

  /**
   * Opens the thread's session: it continues its stored session, else starts one carrying the
   * client's history. With `answers` (the run answers a wait of the stored session), the stored
   * session resumes from its own conversation and ledger with them instead of a prompt.
   */
  private async open(request: AgUiRunRequest, run: Run, resumeSessionId: string | undefined, answers?: ClientAnswers): Promise<Thread> {
    const confirmTool = this.hooks.confirmTool;
    // Frontend tools go with the session: a placement that runs it where their handlers cannot wait on this thread leaves them out.
    const clientTools = request.clientTools.length > 0 || answers ? new ClientTools(request.clientTools, this.options.clientWaitMs) : undefined;
    // The client holds its own results: the session's TOOL_CALL_RESULT of them is not sent back to it.
    clientTools?.answeredByClient(answers?.toolResults?.map((r) => r.toolUseId) ?? []);
    const session = await this.placement
      .open({
        threadId: request.threadId,
        // A stored session goes on (its log, ledger and the host's history); the client's messages come
        // too, for a host whose conversation the client holds (Local takes them instead of its stored
        // copy) — except with answers: the stored conversation is the one whose tool calls they answer.
        ...(answers ? { clientAnswers: answers } : { prompt: withContext(request.text, request.context) }),
        ...(resumeSessionId !== undefined ? { sessionId: resumeSessionId } : {}),
        ...(request.history.length > 0 && !answers ? { history: request.history } : {}),
        ...(request.state !== undefined ? { state: request.state } : {}),
        ...(confirmTool ? { confirmTool } : {}),
        ...(clientTools && clientTools.tools.length > 0 ? { tools: clientTools.tools } : {}),
        // The endpoint never reads a result's raw provider events: an idle thread need not keep them.
        retainEvents: false,
      })
      .catch((e: unknown) => {
        if (!answers || !isAgentRxError(e, 'invalid_options')) throw e;
        throw new AgentRxError('invalid_options', `thread ${request.threadId}: its stored session cannot take this run's answers: ${e.message}`);
      });
    this.checkOpen(session);
    const thread = this.adopt(request.threadId, session, clientTools);
    thread.run = run;
    try {
      this.hooks.onSession?.(session, request.threadId);
    } catch {
      // Observation hooks must not break the endpoint.
    }
    return thread;
  }

  /**
   * `run` answers what the thread's live session, found elsewhere, waits on (its run ended waiting
   * through another endpoint): the answers are handed to it now (`answerClient`), and the thread
   * follows its request from there under the client's new run id. Answers it cannot take reject
   * (`invalid_options`, answered 400) and the session keeps waiting.
   */
  private async answerLive(request: AgUiRunRequest, run: Run, session: LiveSession): Promise<Thread> {
    this.checkOpen(session);
    const clientTools = new ClientTools(request.clientTools, this.options.clientWaitMs);
    // The client holds its own results: the session's TOOL_CALL_RESULT of them is not sent back to it.
    clientTools.answeredByClient(request.toolResults.map((r) => r.toolCallId));
    const thread = this.adopt(request.threadId, session, clientTools);
    thread.run = run;
    // The session's request goes on under the client's run id; RUN_STARTED is held until the stream opens, before what follows.
    run.started = true;
    thread.frames.continueAs(run.runId);
    run.writeGroup([{ type: 'RUN_STARTED', threadId: thread.id, runId: run.runId, timestamp: Date.now() }], undefined);
    try {
      await session.answerClient(clientAnswersOf(request));
    } catch (e) {
      thread.run = undefined;
      this.pool.letGo(thread, false);
      throw e;
    }
    return thread;
  }

  /** A session found or opened while the endpoint started shutting down: let go of it, refuse the run. */
  private checkOpen(session: LiveSession): void {
    if (!this.closing) return;
    quietly(() => session.leave());
    throw new AgentRxError('session_closed', 'the endpoint is shutting down');
  }

  /** Starts following a session for `threadId`: its translated envelopes go to the thread's runs. */
  private adopt(threadId: string, session: LiveSession, clientTools: ClientTools | undefined): Thread {
    const thread = new Thread(threadId, session, clientTools);
    this.pool.touch(thread);
    thread.subscription = liveTranslation(session).subscribe({
      next: (translated) => this.forwarding.envelope(thread, translated),
      error: () => this.runs.sessionEnded(thread),
      complete: () => this.runs.sessionEnded(thread),
    });
    return thread;
  }

  /** The run has its session: opens the stream (or, when the client left meanwhile, treats it as gone). */
  private begin(thread: Thread, run: Run, res: ServerResponse, cors: HeaderMap): void {
    // Most recently used now; a thread the endpoint dropped meanwhile (its session ended) stays dropped.
    if (this.pool.get(thread.id) === thread) this.pool.touch(thread);
    if (res.destroyed) return this.runs.clientGone(thread, run);
    run.open(cors);
    // Not req 'close': on Node 20 that fires once the body has been read (STYLE pitfall 13).
    res.on('close', () => this.runs.clientGone(thread, run));
    const answer = run.continueWith;
    if (answer) {
      // The session's request goes on under the client's new run id.
      run.continueWith = undefined;
      run.started = true;
      const logRunId = thread.frames.continueAs(run.runId);
      // A reader reconnecting to the run from now on sees the client's new run id.
      if (logRunId !== undefined) thread.runStarted(logRunId, run);
      run.writeGroup([{ type: 'RUN_STARTED', threadId: thread.id, runId: run.runId, timestamp: Date.now() }], undefined);
      answer();
    }
  }

  /** The run could not get a session: 409, 400 or 503 with the reason. */
  private refuse(run: Run, res: ServerResponse, cors: HeaderMap, e: unknown): void {
    this.admission.uncount(run);
    const err = toAgentRxError(e);
    if (res.headersSent || res.destroyed) return;
    if (err.details?.['threadBusy'] === true) return sendJson(res, 409, { error: 'thread_busy', message: err.message }, cors);
    if (err.code === 'invalid_options') return sendJson(res, 400, { error: 'invalid_request', message: err.message }, cors);
    sendJson(res, 503, { error: 'unavailable', message: `cannot start the run: ${err.message}`, code: err.code }, cors);
  }

  /** The thread `threadId` if this endpoint serves it now (for a reconnect). */
  local(threadId: string): LocalThread | undefined {
    const thread = this.pool.get(threadId);
    if (!thread) return undefined;
    return {
      get logId() {
        return thread.logId;
      },
      get lastSeq() {
        return thread.lastSeq;
      },
      clientRunId: (logRunId) => thread.clientRunIds.get(logRunId),
      conversationOf: (runId) => {
        const input = thread.runInputs.get(runId);
        return input !== undefined ? new RunMessages(input) : undefined;
      },
      closed: thread.session.closed,
      hold: () => this.runs.hold(thread),
      onSuspended: (listener) => thread.wait.onSuspended(listener),
    };
  }

  /** A reader of this endpoint follows `threadId`'s run, whichever endpoint streams it (see `SessionPlacement.follow`). */
  follow(threadId: string): () => void {
    return this.placement.follow(threadId);
  }

  /**
   * Refuses new runs (503) and leaves every session (`LiveSession.leave`): one of this process is
   * cancelled (its open run gets its RUN_ERROR `cancelled`), one that runs elsewhere goes on and
   * its open run is told to continue on another endpoint. Resolves once all were left. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.runs.closing = true;
      const threads = this.pool.values();
      await Promise.all(threads.map((t) => settledOf(t.session.leave())));
      for (const t of threads) if (!t.ended) this.continueElsewhere(t);
      for (const t of this.pool.values()) this.runs.sessionEnded(t);
    })();
    return this.closing;
  }

  /** The endpoint shut down while the thread's session goes on: end its open run, forget the thread. */
  private continueElsewhere(thread: Thread): void {
    thread.ended = true;
    const run = thread.run;
    if (run && !run.done) {
      run.write({
        type: 'RUN_ERROR',
        message: 'this endpoint is shutting down; the run goes on: reconnect with Last-Event-ID to another endpoint',
        code: 'unavailable',
        timestamp: Date.now(),
      });
      this.runs.endRun(thread, run);
    }
    this.pool.forget(thread);
  }
}

/** What a run answering a wait brings: its tool messages' results and its interrupt answers. */
function clientAnswersOf(request: AgUiRunRequest): ClientAnswers {
  return {
    toolResults: request.toolResults.map((r) => ({ toolUseId: r.toolCallId, content: r.content })),
    confirmations: request.resume.map(confirmationDecision),
  };
}
