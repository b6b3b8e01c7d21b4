import type { IncomingMessage, ServerResponse } from 'node:http';
import { Subscription, type Observable } from 'rxjs';
import { isAgentRxError, toAgentRxError } from '../../core/errors.js';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import type { SessionEvent } from '../../core/events/session-event.js';
import type { ToolUse } from '../../core/model.js';
import type { Session } from '../../core/session/session.js';
import type { ConfirmTool, SessionOptions } from '../../core/session/session-options.js';
import type { SessionStore } from '../../core/store/session-store.js';
import type { AgUiHttpOptions } from './agui-http.config.js';
import { ThreadFrames, isTerminal, type FrameGroup } from './agui-http.frames.js';
import { withContext, type AgUiRunRequest } from './agui-http.input.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';
import { AgUiEventStream } from './agui-http.stream.js';

/** What the endpoint needs from agentrx: starting live sessions (an `AgentRx` instance fits). */
export interface AgUiSessionHost {
  /** Starts a live session (it stays open for `message()` after each run). */
  start(opts: SessionOptions): Session;
  /** The store its sessions' logs are written to (reconnects replay from it). */
  readonly sessionStore?: SessionStore;
  /** A reader of a session's log (`AgentRx.attach`): reconnects to this endpoint's own threads use it when no store is given. */
  attach?(sessionId: string, opts?: { readonly afterSeq?: number }): { readonly events$: Observable<SessionEvent> };
}

/** How the threads start and observe sessions (see `AgUiHandlerOptions`). */
export interface AgUiThreadHooks {
  readonly onSession?: ((session: Session, threadId: string) => void) | undefined;
  readonly confirmTool?: ConfirmTool | undefined;
}

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
}

/** One client thread: its live session and the run streaming now, if any. */
interface Thread {
  readonly id: string;
  readonly session: Session;
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
}

/** What a reconnect needs to know of a thread served by this endpoint. */
export interface LocalThread {
  /** The store key of its session's log, once its first run started. */
  readonly logId: string | undefined;
  /** The highest `seq` its session has emitted. */
  readonly lastSeq: number;
  /** The client's run id for one of the session's run ids, when this endpoint streamed that run. */
  clientRunId(logRunId: string): string | undefined;
  /** Resolves once the session has closed (its log is complete). */
  readonly closed: Promise<void>;
  /**
   * A reconnected reader follows the thread's run: a detached run's grace timer is held off
   * until the returned release is called (then re-armed if the run is still detached).
   */
  hold(): () => void;
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
  private closing: Promise<void> | undefined;

  constructor(
    private readonly rx: AgUiSessionHost,
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
   * with `Retry-After`) or 409 (a run of that thread is still streaming). A thread this endpoint
   * does not run continues `resumeSessionId` (its stored session) when given, else starts a
   * session with the client's history.
   */
  startRun(req: IncomingMessage, res: ServerResponse, request: AgUiRunRequest, cors: HeaderMap, client: string, resumeSessionId?: string): void {
    if (this.closing) return sendJson(res, 503, { error: 'unavailable', message: 'the endpoint is shutting down' }, cors);
    const tooMany = (why: string): void =>
      sendJson(res, 429, { error: 'too_many_runs', message: why, retryAfterSeconds: this.options.retryAfterSeconds }, { ...cors, 'retry-after': String(this.options.retryAfterSeconds) });
    if (this.activeRuns >= this.options.maxConcurrentRuns) return tooMany(`${this.activeRuns} runs are streaming (limit ${this.options.maxConcurrentRuns}); retry later`);
    const mine = this.clientRuns.get(client) ?? 0;
    if (mine >= this.options.maxRunsPerClient) return tooMany(`this client has ${mine} runs streaming (limit ${this.options.maxRunsPerClient} per client); retry later`);
    let thread = this.threads.get(request.threadId);
    if (thread?.run) {
      return sendJson(res, 409, { error: 'thread_busy', message: `thread ${request.threadId} is still streaming run ${thread.run.runId}; wait for its terminal event (or abort it) first` }, cors);
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
    };
    this.activeRuns++;
    this.clientRuns.set(client, mine + 1);
    try {
      if (thread) {
        thread.run = run;
        try {
          thread.session.message(withContext(request.text, request.context));
        } catch (e) {
          // The session closed between its last run and this request: start a new one.
          if (!isAgentRxError(e, 'session_closed')) throw e;
          thread.run = undefined;
          this.forget(thread);
          thread = undefined;
        }
      }
      if (!thread) {
        const confirmTool = this.hooks.confirmTool;
        const prompt = withContext(request.text, request.context);
        // Continue the thread's stored session, else start one carrying the client's history.
        const where = resumeSessionId !== undefined ? { sessionId: resumeSessionId } : request.history.length > 0 ? { history: request.history } : {};
        thread = this.adopt(request.threadId, this.rx.start({ prompt, threadId: request.threadId, ...where, ...(confirmTool ? { confirmTool } : {}) }));
        thread.run = run;
      }
    } catch (e) {
      this.runOver(run);
      if (thread) thread.run = undefined;
      const err = toAgentRxError(e);
      return sendJson(res, 503, { error: 'unavailable', message: `cannot start the run: ${err.message}`, code: err.code }, cors);
    }
    const current = thread;
    clearTimeout(current.idleTimer);
    // Most recently used last: eviction takes the first idle thread.
    this.threads.delete(current.id);
    this.threads.set(current.id, current);

    run.stream.open(cors);
    // Not req 'close': on Node 20 that fires once the body has been read (STYLE pitfall 13).
    res.on('close', () => this.clientGone(current, run));
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
      const sessions = [...this.threads.values()].map((t) => t.session);
      for (const s of sessions) s.cancel();
      await Promise.all(sessions.map((s) => s.closed));
      for (const t of [...this.threads.values()]) this.sessionEnded(t);
    })();
    return this.closing;
  }

  /** Starts following a new session for `threadId`. */
  private adopt(threadId: string, session: Session): Thread {
    const clientRunIds = new Map<string, string>();
    const frames = new ThreadFrames(threadId, (logRunId) => {
      // The run a session starts now is the one the client's request is waiting for.
      const runId = thread.run?.runId;
      if (runId !== undefined) clientRunIds.set(logRunId, runId);
      return runId;
    });
    const thread: Thread = { id: threadId, session, subscriptions: [], frames, clientRunIds, logId: undefined, lastSeq: 0, run: undefined, lastError: undefined, idleTimer: undefined, ended: false };
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
      this.hooks.onSession?.(session, threadId);
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
    thread.session.cancel();
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
        case 'agentrx.confirmation_required':
          this.cannotConfirm(thread, ev.toolUses);
          break;
        default:
          break;
      }
    }
    this.forward(thread, thread.frames.push(env), true);
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
    run.graceTimer = setTimeout(() => this.abandon(thread, run), this.options.reconnectGraceMs);
    run.graceTimer.unref();
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
    thread.session.cancel();
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
        thread.session.close();
      }
    }, this.options.threadIdleMs);
    thread.idleTimer.unref();
  }

  /** Closes the least recently used idle thread; false when every thread is running. */
  private evictIdleThread(): boolean {
    for (const thread of this.threads.values()) {
      if (!thread.run) {
        this.forget(thread);
        thread.session.close();
        return true;
      }
    }
    return false;
  }
}
