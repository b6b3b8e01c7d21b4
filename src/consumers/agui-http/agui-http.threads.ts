import type { IncomingMessage, ServerResponse } from 'node:http';
import { Subscription } from 'rxjs';
import { AgentRxError, isAgentRxError, toAgentRxError } from '../../core/errors.js';
import type { AgUiEvent, RunFinishedEvent } from '../../core/events/agui-event.js';
import type { SessionEvent } from '../../core/events/session-event.js';
import type { ToolUse } from '../../core/model.js';
import type { Session } from '../../core/session/session.js';
import { ClientTools } from './agui-http.client-tools.js';
import { ClientWait } from './agui-http.client-wait.js';
import { RunMessages } from './agui-http.messages.js';
import type { AgUiHttpOptions } from './agui-http.config.js';
import { ThreadFrames, isTerminal, type FrameGroup } from './agui-http.frames.js';
import { withContext, type AgUiRunRequest } from './agui-http.input.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';
import type { AgUiLiveSession, AgUiSessionPlacement, AgUiThreadHooks, LocalThread } from './agui-http.sessions.js';
import { AgUiEventStream } from './agui-http.stream.js';

/** How long (ms) a request waits for its thread's streaming run to end before it gets 409. */
const BUSY_WAIT_MS = 1_000;

/** One run being streamed to one response. */
interface Run {
  readonly runId: string;
  readonly stream: AgUiEventStream;
  started: boolean;
  done: boolean;
  /** The client went away; the run goes on for `reconnectGraceMs`, then is cancelled. */
  detached: boolean;
  graceTimer: NodeJS.Timeout | undefined;
  /** Reconnected readers following this run (they hold off the grace timer). */
  followers: number;
  /** The client address it counts against (`maxRunsPerClient`). */
  readonly client: string;
  /** The conversation as the client will hold it at the run's end (its MESSAGES_SNAPSHOT). */
  readonly messages: RunMessages;
  /** Called once the run stops counting (see `runOver`): requests of the thread waiting for it. */
  readonly whenOver: (() => void)[];
  /**
   * Set for a run that continues the session's request a suspended run left waiting: called once
   * the stream is open (after RUN_STARTED), it hands the client's answers to the session.
   */
  continueWith?: () => void;
}

/** One client thread: its live session and the run streaming now, if any. */
interface Thread {
  readonly id: string;
  readonly session: AgUiLiveSession;
  readonly subscriptions: Subscription[];
  /** The client frames of the session's envelopes (ids, message id renames). */
  readonly frames: ThreadFrames;
  /** The session's run ids → the client's (for replays on this server). */
  readonly clientRunIds: Map<string, string>;
  /** The store key of the session's log (known from its first `run_started`). */
  logId: string | undefined;
  /** The highest `seq` seen live (the store may lag behind it by an append in flight). */
  lastSeq: number;
  run: Run | undefined;
  lastError: { code: string; message: string } | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  ended: boolean;
  /** The client's frontend tools, handed to the session (sessions of this process only). */
  clientTools: ClientTools | undefined;
  /** What the session waits for from the client between two of its runs. */
  readonly wait: ClientWait;
}

/**
 * The endpoint's threads and runs. The first request of a `threadId` starts a live agentrx
 * session with the last user message as prompt; a later request on that thread sends its last
 * user message with `session.message()` and streams that next run. RUN_STARTED / RUN_FINISHED
 * carry the client's `threadId` and `runId`. Exactly one terminal event (RUN_FINISHED or
 * RUN_ERROR) ends every stream; if the session dies first, a RUN_ERROR with its error code is
 * sent, and the thread's next request starts a new session. A client that disconnects before the
 * terminal cancels the session (provider work aborted), at once or, with `reconnectGraceMs`, once
 * that long has passed with no reconnected client following the run. Each group of frames (the
 * client events of one envelope, see {@link ThreadFrames}) is written in one chunk with the
 * envelope's `seq` as the SSE id of its last frame. A thread idle for `threadIdleMs`, or the
 * least recently used idle one when `maxThreads` is reached, has its session closed.
 */
export class AgUiThreads {
  /** Runs streaming now. */
  activeRuns = 0;
  /** Runs streaming now, per client address. */
  private readonly clientRuns = new Map<string, number>();
  /** By thread id, least recently used first. */
  private readonly threads = new Map<string, Thread>();
  /** Threads whose session is being opened or found elsewhere (a round trip). */
  private readonly opening = new Set<string>();
  /** Threads whose session the endpoint let go of and that has not closed yet → its closing. */
  private readonly releasing = new Map<string, Promise<void>>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly placement: AgUiSessionPlacement,
    private readonly options: AgUiHttpOptions,
    private readonly hooks: AgUiThreadHooks,
  ) {}

  /** Live threads (sessions), running or idle. */
  get threadCount(): number {
    return this.threads.size;
  }

  /**
   * Starts streaming a run of `request` to `res`, or answers 503 (closing, or the session cannot
   * start), 429 (`maxConcurrentRuns`, `maxRunsPerClient` for `client` or `maxThreads` reached,
   * with `Retry-After`) or 409 (a run of that thread is still streaming — callers wait `settled` first —, or its session is being
   * opened). Synchronous when the session runs in this process; with a placement that opens
   * sessions elsewhere, the returned promise settles once the stream is open or the answer sent
   * (it never rejects).
   */
  startRun(req: IncomingMessage, res: ServerResponse, request: AgUiRunRequest, cors: HeaderMap, client: string, resumeSessionId?: string): void | Promise<void> {
    if (this.closing) return sendJson(res, 503, { error: 'unavailable', message: 'the endpoint is shutting down' }, cors);
    const tooMany = (why: string): void =>
      sendJson(res, 429, { error: 'too_many_runs', message: why, retryAfterSeconds: this.options.retryAfterSeconds }, { ...cors, 'retry-after': String(this.options.retryAfterSeconds) });
    if (this.activeRuns >= this.options.maxConcurrentRuns) return tooMany(`${this.activeRuns} runs are streaming (limit ${this.options.maxConcurrentRuns}); retry later`);
    const mine = this.clientRuns.get(client) ?? 0;
    if (mine >= this.options.maxRunsPerClient) return tooMany(`this client has ${mine} runs streaming (limit ${this.options.maxRunsPerClient} per client); retry later`);
    const thread = this.threads.get(request.threadId);
    if (thread?.run) {
      return sendJson(res, 409, { error: 'thread_busy', message: `thread ${request.threadId} is still streaming run ${thread.run.runId}; wait for its terminal event (or abort it) first` }, cors);
    }
    if (this.opening.has(request.threadId)) {
      return sendJson(res, 409, { error: 'thread_busy', message: `thread ${request.threadId} is opening its session for another request; wait for that run's terminal event (or abort it) first` }, cors);
    }
    if (!thread && this.threads.size >= this.options.maxThreads && !this.evictIdleThread()) {
      return tooMany(`${this.threads.size} threads are running (limit ${this.options.maxThreads}); retry later`);
    }

    const run: Run = {
      runId: request.runId,
      stream: new AgUiEventStream(res, req.headers.accept, this.options.heartbeatMs),
      started: false,
      done: false,
      detached: false,
      graceTimer: undefined,
      followers: 0,
      client,
      messages: new RunMessages(request.messages),
      whenOver: [],
    };
    this.activeRuns++;
    this.clientRuns.set(client, mine + 1);
    let attached: Thread | Promise<Thread>;
    try {
      attached = this.attach(request, run, thread, resumeSessionId);
    } catch (e) {
      return this.refuse(run, res, cors, e);
    }
    if (!isPromise(attached)) return this.begin(attached, run, res, cors);
    // Opening elsewhere takes a round trip: a second request of the thread meanwhile gets a 409.
    this.opening.add(request.threadId);
    return attached
      .then(
        (t) => this.begin(t, run, res, cors),
        (e: unknown) => this.refuse(run, res, cors, e),
      )
      .finally(() => this.opening.delete(request.threadId));
  }

  /**
   * Gives `run` a session: the thread's live one gets the message; a thread this endpoint does
   * not serve continues its live session elsewhere (`find`) or opens one.
   */
  private attach(request: AgUiRunRequest, run: Run, thread: Thread | undefined, resumeSessionId: string | undefined): Thread | Promise<Thread> {
    const text = withContext(request.text, request.context);
    if (thread?.wait.suspended) return this.continueRun(thread, run, request);
    if (request.toolResults.length > 0) {
      const ids = request.toolResults.map((r) => r.toolCallId).join(', ');
      throw new AgentRxError('invalid_options', `messages: the run ends with tool results (${ids}) but no run of thread ${request.threadId} waits for frontend tool results here (it ended, expired or the server restarted); send a new user message to go on`);
    }
    if (request.resume.length > 0) {
      throw new AgentRxError('invalid_options', `resume: no run of thread ${request.threadId} waits for an answer to ${request.resume.map((r) => r.interruptId).join(', ')} (it ended, expired or the server restarted)`);
    }
    if (thread) return this.send(thread, run, text, request.state, () => this.open(request, run, resumeSessionId));
    const find = this.placement.find?.bind(this.placement);
    if (!find) return this.open(request, run, resumeSessionId);
    return find(request.threadId).then((found) => {
      if (!found) return this.open(request, run, resumeSessionId);
      if (this.closing) {
        quietly(() => found.detach?.());
        throw new AgentRxError('session_closed', 'the endpoint is shutting down');
      }
      return this.send(this.adopt(request.threadId, found), run, text, request.state, () => this.open(request, run, resumeSessionId));
    });
  }

  /** Sends the run's message to the thread's session; one that has closed meanwhile is replaced by `reopen()`. */
  private send(thread: Thread, run: Run, text: string, state: AgUiRunRequest['state'], reopen: () => Thread | Promise<Thread>): Thread | Promise<Thread> {
    thread.run = run;
    const closedNow = (e: unknown): Thread | Promise<Thread> => {
      thread.run = undefined;
      if (!isAgentRxError(e, 'session_closed')) throw e;
      // The session closed between its last run and this request: start a new one.
      this.forget(thread);
      if (thread.session.detach) quietly(() => thread.session.detach!());
      return reopen();
    };
    let sent: void | Promise<void>;
    try {
      // The client's state is the agent's: it replaces the session's before the run.
      if (state !== undefined) thread.session.setState?.(state);
      sent = thread.session.message(text);
    } catch (e) {
      return closedNow(e);
    }
    return isPromise(sent) ? sent.then(() => thread, closedNow) : thread;
  }

  /**
   * The run answers what the thread's suspended run left waiting: the frontend tool results, or
   * the interrupts (tool confirmations) in `resume`. Checked now (a mismatch is `invalid_options`,
   * answered 400, and the thread keeps waiting); handed to the session once the stream is open.
   */
  private continueRun(thread: Thread, run: Run, request: AgUiRunRequest): Thread {
    const session = thread.session;
    const answer = thread.wait.answer(request, thread.clientTools, (events) => {
      for (const ev of events) session.sendEvent!(ev).catch((e: unknown) => this.answerFailed(thread, e));
    });
    // The client's state is the agent's: what it changed meanwhile replaces the session's (the
    // next delta is then taken against an empty snapshot, which applies to any client state).
    if (request.state !== undefined) session.setState?.(request.state);
    thread.run = run;
    run.continueWith = answer;
    return thread;
  }

  /** Posting an answer to the session failed: the run cannot go on. */
  private answerFailed(thread: Thread, e: unknown): void {
    const run = thread.run;
    const err = toAgentRxError(e);
    if (run && !run.done) {
      run.stream.write({ type: 'RUN_ERROR', message: `could not hand the answer to the agent: ${err.message}`, code: err.code, timestamp: Date.now() });
      this.endRun(thread, run);
    }
    this.forget(thread);
    quietly(() => thread.session.cancel());
  }

  /** Opens the thread's session: it continues its stored session, else starts one carrying the client's history. */
  private open(request: AgUiRunRequest, run: Run, resumeSessionId: string | undefined): Thread | Promise<Thread> {
    const confirmTool = this.hooks.confirmTool;
    const prompt = withContext(request.text, request.context);
    // A stored session goes on (its log, ledger and the host's history); the client's messages come
    // too, for a host whose conversation the client holds (Local takes them instead of its stored copy).
    const where = { ...(resumeSessionId !== undefined ? { sessionId: resumeSessionId } : {}), ...(request.history.length > 0 ? { history: request.history } : {}) };
    // Frontend tools go to a session of this process (its tool handlers wait on this thread).
    const clientTools = request.clientTools.length > 0 && this.placement.inProcess === true ? new ClientTools(request.clientTools, this.options.threadIdleMs) : undefined;
    const opened = this.placement.open({
      prompt,
      threadId: request.threadId,
      ...where,
      ...(request.state !== undefined ? { state: request.state } : {}),
      ...(confirmTool ? { confirmTool } : {}),
      ...(clientTools ? { tools: clientTools.tools } : {}),
      // The endpoint never reads a result's raw provider events: an idle thread need not keep them.
      retainEvents: false,
    });
    if (!isPromise(opened)) {
      const thread = this.adopt(request.threadId, opened, opened);
      thread.run = run;
      if (clientTools) {
        thread.clientTools = clientTools;
        clientTools.onWaiting = () => this.maybeSuspend(thread);
      }
      return thread;
    }
    return opened.then((session) => {
      if (this.closing) {
        quietly(() => session.detach?.() ?? session.cancel());
        throw new AgentRxError('session_closed', 'the endpoint is shutting down');
      }
      const thread = this.adopt(request.threadId, session);
      thread.run = run;
      return thread;
    });
  }

  /** The run has its session: opens the stream (or, when the client left meanwhile, treats it as gone). */
  private begin(thread: Thread, run: Run, res: ServerResponse, cors: HeaderMap): void {
    clearTimeout(thread.idleTimer);
    // Most recently used last: eviction takes the first idle thread.
    this.threads.delete(thread.id);
    this.threads.set(thread.id, thread);
    if (res.destroyed) return this.clientGone(thread, run);
    run.stream.open(cors);
    // Not req 'close': on Node 20 that fires once the body has been read (STYLE pitfall 13).
    res.on('close', () => this.clientGone(thread, run));
    const answer = run.continueWith;
    if (answer) {
      // The session's request goes on under the client's new run id.
      run.continueWith = undefined;
      run.started = true;
      const logRunId = thread.frames.continueAs(run.runId);
      // A reader reconnecting to the run from now on sees the client's new run id.
      if (logRunId !== undefined) thread.clientRunIds.set(logRunId, run.runId);
      run.stream.writeGroup([{ type: 'RUN_STARTED', threadId: thread.id, runId: run.runId, timestamp: Date.now() }], undefined);
      answer();
    }
  }

  /** The run could not get a session: 503 with the reason. */
  private refuse(run: Run, res: ServerResponse, cors: HeaderMap, e: unknown): void {
    this.runOver(run);
    const err = toAgentRxError(e);
    if (res.headersSent || res.destroyed) return;
    if (err.details?.['threadBusy'] === true) return sendJson(res, 409, { error: 'thread_busy', message: err.message }, cors);
    if (err.code === 'invalid_options') return sendJson(res, 400, { error: 'invalid_request', message: err.message }, cors);
    sendJson(res, 503, { error: 'unavailable', message: `cannot start the run: ${err.message}`, code: err.code }, cors);
  }

  /** The thread `threadId` if this endpoint serves it now (for a reconnect). */
  local(threadId: string): LocalThread | undefined {
    const thread = this.threads.get(threadId);
    if (!thread) return undefined;
    return {
      get logId() {
        return thread.logId;
      },
      get lastSeq() {
        return thread.lastSeq;
      },
      clientRunId: (logRunId) => thread.clientRunIds.get(logRunId),
      closed: thread.session.closed,
      hold: () => this.hold(thread),
      onSuspended: (listener) => thread.wait.onSuspended(listener),
    };
  }

  /** True while the endpoint refuses new runs. */
  get isClosing(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Refuses new runs (503), cancels every session (open streams get a RUN_ERROR `cancelled`) and
   * resolves once all have closed. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const threads = [...this.threads.values()];
      // Sessions that live elsewhere go on: the endpoint stops reading them; an open run is told
      // where to continue. Sessions of this process are cancelled.
      const remote = threads.filter((t) => t.session.detach !== undefined);
      const local = threads.filter((t) => t.session.detach === undefined).map((t) => t.session);
      for (const t of remote) this.letGo(t);
      for (const s of local) quietly(() => s.cancel());
      await Promise.all([...local.map((s) => s.closed), ...remote.map((t) => t.session.detach!().catch(() => undefined))]);
      for (const t of [...this.threads.values()]) this.sessionEnded(t);
      await this.placement.close?.().catch(() => undefined);
    })();
    return this.closing;
  }

  /** The endpoint shuts down while a session elsewhere goes on: end the thread's open run, forget the thread. */
  private letGo(thread: Thread): void {
    thread.ended = true;
    const run = thread.run;
    if (run && !run.done) {
      run.stream.write({ type: 'RUN_ERROR', message: 'this endpoint is shutting down; the run goes on: reconnect with Last-Event-ID to another endpoint', code: 'unavailable', timestamp: Date.now() });
      this.endRun(thread, run);
    }
    this.forget(thread);
  }

  /** Starts following a new session for `threadId`. */
  private adopt(threadId: string, session: AgUiLiveSession, local?: Session): Thread {
    const clientRunIds = new Map<string, string>();
    const frames = new ThreadFrames(threadId, (logRunId) => {
      // The run a session starts now is the one the client's request is waiting for.
      const runId = thread.run?.runId;
      if (runId !== undefined) clientRunIds.set(logRunId, runId);
      return runId;
    });
    const thread: Thread = {
      id: threadId,
      session,
      subscriptions: [],
      frames,
      clientRunIds,
      logId: undefined,
      lastSeq: 0,
      run: undefined,
      lastError: undefined,
      idleTimer: undefined,
      ended: false,
      clientTools: undefined,
      wait: new ClientWait(threadId),
    };
    this.threads.set(threadId, thread);
    thread.subscriptions.push(
      session.events$.subscribe({
        next: (env) => this.envelope(thread, env),
        error: () => this.sessionEnded(thread),
        complete: () => {
          this.forward(thread, { seq: thread.lastSeq, events: frames.complete() }, false);
          this.sessionEnded(thread);
        },
      }),
      new Subscription(() => frames.dispose()),
    );
    void session.closed.then(() => this.sessionEnded(thread));
    try {
      // Only a session of this process can be observed (one elsewhere is read from the store).
      if (local) this.hooks.onSession?.(local, threadId);
    } catch {
      // Observation hooks must not break the endpoint.
    }
    return thread;
  }

  /**
   * The host waits for a tool confirmation that no `confirmTool` answers (the endpoint has no way
   * to ask its client): end the run with a RUN_ERROR that says what to configure, cancel the session.
   */
  private cannotConfirm(thread: Thread, toolUses: readonly ToolUse[]): void {
    const names = toolUses.map((u) => `'${u.name}' (${u.id})`).join(', ');
    const run = thread.run;
    if (run && !run.done) {
      const message = `the agent asks to confirm ${names || 'a tool'} before running it; this endpoint answers no confirmations (pass confirmTool to createAgUiHandler, or agentrx serve --confirm allow|deny)`;
      run.stream.write({ type: 'RUN_ERROR', message, code: 'unresolved_requires_action', timestamp: Date.now() });
      this.endRun(thread, run);
    }
    this.forget(thread);
    quietly(() => thread.session.cancel());
  }

  /** One envelope of the thread's session: its side effects, then its client frames. */
  private envelope(thread: Thread, env: SessionEvent): void {
    thread.lastSeq = env.seq;
    if (env.source === 'agentrx') {
      const ev = env.raw;
      switch (ev.type) {
        case 'agentrx.run_started':
          // The Session keys its log by its provider-side id, else by its own thread id.
          thread.logId ??= env.sessionId ?? ev.threadId;
          break;
        case 'agentrx.run_error':
          thread.lastError = { code: ev.code, message: ev.message };
          break;
        case 'agentrx.tool_started':
          thread.wait.toolStarted(ev.toolUse.id);
          break;
        case 'agentrx.tool_result':
          thread.wait.toolAnswered(ev.toolUse.id);
          thread.clientTools?.settled(ev.toolUse.id);
          break;
        default:
          break;
      }
    }
    this.forward(thread, thread.frames.push(env), true);
    if (env.source !== 'agentrx') return;
    if (env.raw.type === 'agentrx.tool_result') this.maybeSuspend(thread);
    else if (env.raw.type === 'agentrx.confirmation_required') this.askToConfirm(thread, env.raw.toolUses);
  }

  /** Every tool the session runs now waits on the client's frontend tools: end the client's run; its next run brings the results. */
  private maybeSuspend(thread: Thread): void {
    const outcome = thread.wait.waitForTools(thread.clientTools?.waiting ?? []);
    if (outcome) this.suspend(thread, outcome);
  }

  /**
   * The session waits for tool confirmations: end the client's run with the interrupt outcome;
   * its next run answers them in `resume`. Without a way to post the answers (`sendEvent`), the
   * run fails as before.
   */
  private askToConfirm(thread: Thread, toolUses: readonly ToolUse[]): void {
    if (!thread.session.sendEvent || toolUses.length === 0) return this.cannotConfirm(thread, toolUses);
    this.suspend(thread, thread.wait.waitForConfirmations(toolUses));
  }

  /** Ends the client's run with `outcome` while the session's request waits for the client's next run. */
  private suspend(thread: Thread, outcome: NonNullable<RunFinishedEvent['outcome']>): void {
    thread.wait.endedAt(thread.lastSeq, outcome);
    const run = thread.run;
    if (!run || run.done) return;
    const now = Date.now();
    if (run.started) run.stream.writeGroup([run.messages.snapshot(now), { type: 'RUN_FINISHED', threadId: thread.id, runId: run.runId, outcome, timestamp: now }], undefined);
    this.endRun(thread, run);
  }

  /**
   * Writes one envelope's client frames to the thread's current run, in one chunk, with the
   * envelope's `seq` as the SSE id of its last frame (`withId`; frames synthesized at the end of
   * the stream have none).
   */
  private forward(thread: Thread, group: FrameGroup, withId: boolean): void {
    const run = thread.run;
    if (!run || run.done) return;
    const out: AgUiEvent[] = [];
    let terminal: AgUiEvent | undefined;
    for (const ev of group.events) {
      if (ev.type === 'RUN_STARTED') {
        if (run.started) continue;
        run.started = true;
      }
      // AG-UI: a stream starts with RUN_STARTED (or is a lone RUN_ERROR).
      if (!run.started && ev.type !== 'RUN_ERROR') continue;
      // The client sent this frontend tool's result itself.
      if (ev.type === 'TOOL_CALL_RESULT' && thread.clientTools?.clientAnswered(ev.toolCallId)) continue;
      // The run's conversation goes out whole before it finishes (AG-UI MESSAGES_SNAPSHOT).
      if (ev.type === 'RUN_FINISHED') out.push(run.messages.snapshot(ev.timestamp ?? Date.now()));
      run.messages.apply(ev);
      out.push(ev);
      if (isTerminal(ev)) {
        terminal = ev;
        break;
      }
    }
    run.stream.writeGroup(out, withId ? group.seq : undefined);
    if (terminal?.type === 'RUN_FINISHED') this.endRun(thread, run);
    if (terminal?.type === 'RUN_ERROR') {
      // A failed request ends a live session: the thread's next request starts a new one.
      this.endRun(thread, run);
      this.forget(thread);
    }
  }

  /** A run stops counting against the limits (once: its callers set `done` first, or it never started). */
  private runOver(run: Run): void {
    run.whenOver.splice(0).forEach((f) => f());
    this.activeRuns--;
    const left = (this.clientRuns.get(run.client) ?? 1) - 1;
    if (left > 0) this.clientRuns.set(run.client, left);
    else this.clientRuns.delete(run.client);
  }

  /** The run reached its terminal event: end the response; the session stays for the next message. */
  private endRun(thread: Thread, run: Run): void {
    if (run.done) return;
    run.done = true;
    clearTimeout(run.graceTimer);
    this.runOver(run);
    if (thread.run === run) thread.run = undefined;
    run.stream.end();
    if (!thread.ended) this.armIdle(thread);
    if (this.threads.size > this.options.maxIdleThreads) this.trimIdle();
  }

  /**
   * The response closed: if its run has not ended, the client left. With `reconnectGraceMs`, the
   * run goes on that long for the client to reconnect; then (or at once) the session is cancelled.
   */
  private clientGone(thread: Thread, run: Run): void {
    if (run.done) return;
    run.stream.stop();
    if (this.options.reconnectGraceMs > 0 && !this.closing) {
      run.detached = true;
      this.armGrace(thread, run);
      return;
    }
    this.abandon(thread, run);
  }

  /** Starts the grace timer of a detached run, unless a reconnected reader follows it. */
  private armGrace(thread: Thread, run: Run): void {
    clearTimeout(run.graceTimer);
    if (run.done || !run.detached || run.followers > 0) return;
    run.graceTimer = setTimeout(() => void this.graceOver(thread, run), this.options.reconnectGraceMs);
    run.graceTimer.unref();
  }

  /** The grace of a detached run is over: cancel it, unless a reader on another endpoint follows it (then wait again). */
  private async graceOver(thread: Thread, run: Run): Promise<void> {
    const followed = this.placement.followed?.bind(this.placement);
    if (followed && (await followed(thread.id).catch(() => false))) return this.armGrace(thread, run);
    if (run.followers > 0) return;
    this.abandon(thread, run);
  }

  /**
   * A reader of this endpoint follows `threadId`'s run, whichever endpoint streams it: announced
   * to the other endpoints sharing the pool (their grace timers wait for it). A no-op release
   * when sessions run in this process.
   */
  holdElsewhere(threadId: string): () => void {
    return this.placement.hold?.(threadId) ?? (() => undefined);
  }

  /** A reconnected reader follows the thread's run: hold off its grace timer until released. */
  private hold(thread: Thread): () => void {
    const run = thread.run;
    if (!run || run.done) return () => undefined;
    run.followers++;
    clearTimeout(run.graceTimer);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      run.followers--;
      this.armGrace(thread, run);
    };
  }

  /** Nobody reads the run any more: cancel its session. */
  private abandon(thread: Thread, run: Run): void {
    if (run.done) return;
    run.done = true;
    clearTimeout(run.graceTimer);
    this.runOver(run);
    if (thread.run === run) thread.run = undefined;
    // Forget the thread now: its next request must start a new session, not wait on this one.
    this.forget(thread);
    quietly(() => thread.session.cancel());
    this.trackClosing(thread);
  }

  /** The session completed, errored or closed: end an open run with a RUN_ERROR, forget the thread. */
  private sessionEnded(thread: Thread): void {
    if (thread.ended) return;
    thread.ended = true;
    clearTimeout(thread.idleTimer);
    const run = thread.run;
    if (run && !run.done) {
      const error = thread.lastError ?? { code: 'session_closed', message: 'the session ended before the run finished' };
      run.stream.write({ type: 'RUN_ERROR', message: error.message, code: error.code, timestamp: Date.now() });
      this.endRun(thread, run);
    }
    this.forget(thread);
  }

  private forget(thread: Thread): void {
    if (this.threads.get(thread.id) === thread) this.threads.delete(thread.id);
    clearTimeout(thread.idleTimer);
    // Deferred: this may run inside one of these subscriptions' callbacks.
    queueMicrotask(() => thread.subscriptions.forEach((s) => s.unsubscribe()));
  }

  /** Closes the thread's session after `threadIdleMs` without a run (it has no request running). */
  private armIdle(thread: Thread): void {
    clearTimeout(thread.idleTimer);
    thread.idleTimer = setTimeout(() => {
      if (!thread.run) {
        this.forget(thread);
        this.release(thread);
      }
    }, this.options.threadIdleMs);
    thread.idleTimer.unref();
  }

  /** Closes the least recently used idle threads beyond `maxIdleThreads`; threads waiting on the client are kept. */
  private trimIdle(): void {
    const idle = (t: Thread): boolean => !t.run && !t.wait.suspended && !t.ended;
    let count = 0;
    for (const t of this.threads.values()) if (idle(t)) count++;
    for (const t of this.threads.values()) {
      if (count <= this.options.maxIdleThreads) return;
      if (!idle(t)) continue;
      this.forget(t);
      this.release(t);
      count--;
    }
  }

  /**
   * Settles once `threadId` can take a new run. A run of the thread still streaming is waited
   * for, at most `BUSY_WAIT_MS`: its client may have aborted it and sent this request at once,
   * and the disconnect can arrive after it (past the wait, `startRun` answers 409). Then a
   * session the endpoint let go of (idle, evicted, abandoned) is waited for until it has closed
   * (its store lease released), so the run resumes it instead of finding it still held.
   */
  async settled(threadId: string): Promise<void> {
    const run = this.threads.get(threadId)?.run;
    if (run && !run.done) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        run.whenOver.push(resolve);
        timer = setTimeout(resolve, BUSY_WAIT_MS);
      });
      clearTimeout(timer);
    }
    await this.releasing.get(threadId);
  }

  /** Closes the least recently used idle thread; false when every thread is running. */
  private evictIdleThread(): boolean {
    for (const thread of this.threads.values()) {
      if (!thread.run) {
        this.forget(thread);
        this.release(thread);
        return true;
      }
    }
    return false;
  }

  /** Lets go of an idle thread's session: closes it here, or stops reading it when it lives elsewhere (its worker closes it when idle). */
  private release(thread: Thread): void {
    const session = thread.session;
    if (session.detach) {
      // Its worker closes it when idle: the next run may follow it at once.
      quietly(() => session.detach!());
      return;
    }
    // A session waiting on the client would wait for its answers in close(): cancel it.
    quietly(() => (thread.wait.suspended ? session.cancel() : session.close()));
    this.trackClosing(thread);
  }

  /** The thread's session (of this process) is closing: the thread's next run waits for it to close (see `settled`). */
  private trackClosing(thread: Thread): void {
    if (thread.session.detach) return;
    const closed = thread.session.closed.then(
      () => undefined,
      () => undefined,
    );
    this.releasing.set(thread.id, closed);
    void closed.then(() => {
      if (this.releasing.get(thread.id) === closed) this.releasing.delete(thread.id);
    });
  }
}

/** True for a promise (an async placement or input) as opposed to a value of this process. */
function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | undefined)?.then === 'function';
}

/** Calls a session input whose failure does not matter (the session is being let go of): a sync throw or a rejection is ignored. */
function quietly(call: () => void | Promise<void> | undefined): void {
  try {
    const r = call();
    if (isPromise(r)) r.catch(() => undefined);
  } catch {
    // nothing to do: the session is ending anyway
  }
}
