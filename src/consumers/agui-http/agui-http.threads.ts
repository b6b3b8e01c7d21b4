import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Subscription } from 'rxjs';
import { isAgentRxError, toAgentRxError } from '../../core/errors.js';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import type { ToolUse } from '../../core/model.js';
import type { Session } from '../../core/session/session.js';
import type { ConfirmTool, SessionOptions } from '../../core/session/session-options.js';
import type { AgUiHttpOptions } from './agui-http.config.js';
import type { AgUiRunRequest } from './agui-http.input.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';
import { AgUiEventStream } from './agui-http.stream.js';

/** What the endpoint needs from agentrx: starting live sessions (an `AgentRx` instance fits). */
export interface AgUiSessionHost {
  /** Starts a live session (it stays open for `message()` after each run). */
  start(opts: SessionOptions): Session;
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
  /** Session message id → the id the client sees (renamed when it repeats one of an earlier run). */
  readonly messageIds: Map<string, string>;
  started: boolean;
  done: boolean;
}

/** One client thread: its live session and the run streaming now, if any. */
interface Thread {
  readonly id: string;
  readonly session: Session;
  readonly subscriptions: Subscription[];
  /** Message ids already shown to the client in this thread. */
  readonly shownMessageIds: Set<string>;
  run: Run | undefined;
  lastError: { code: string; message: string } | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  ended: boolean;
}

/**
 * The endpoint's threads and runs. The first request of a `threadId` starts a live agentrx
 * session with the last user message as prompt; a later request on that thread sends its last
 * user message with `session.message()` and streams that next run. RUN_STARTED / RUN_FINISHED
 * carry the client's `threadId` and `runId`. Exactly one terminal event (RUN_FINISHED or
 * RUN_ERROR) ends every stream; if the session dies first, a RUN_ERROR with its error code is
 * sent, and the thread's next request starts a new session. A client that disconnects before the
 * terminal cancels the session (provider work aborted). A thread idle for `threadIdleMs`, or the
 * least recently used idle one when `maxThreads` is reached, has its session closed.
 */
export class AgUiThreads {
  /** Runs streaming now. */
  activeRuns = 0;
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
   * start), 429 (`maxConcurrentRuns` or `maxThreads` reached, with `Retry-After`) or 409 (a run
   * of that thread is still streaming).
   */
  startRun(req: IncomingMessage, res: ServerResponse, request: AgUiRunRequest, cors: HeaderMap): void {
    if (this.closing) return sendJson(res, 503, { error: 'unavailable', message: 'the endpoint is shutting down' }, cors);
    const tooMany = (why: string): void =>
      sendJson(res, 429, { error: 'too_many_runs', message: why, retryAfterSeconds: this.options.retryAfterSeconds }, { ...cors, 'retry-after': String(this.options.retryAfterSeconds) });
    if (this.activeRuns >= this.options.maxConcurrentRuns) return tooMany(`${this.activeRuns} runs are streaming (limit ${this.options.maxConcurrentRuns}); retry later`);
    let thread = this.threads.get(request.threadId);
    if (thread?.run) {
      return sendJson(res, 409, { error: 'thread_busy', message: `thread ${request.threadId} is still streaming run ${thread.run.runId}; wait for its terminal event (or abort it) first` }, cors);
    }
    if (!thread && this.threads.size >= this.options.maxThreads && !this.evictIdleThread()) {
      return tooMany(`${this.threads.size} threads are running (limit ${this.options.maxThreads}); retry later`);
    }

    const run: Run = { runId: request.runId, stream: new AgUiEventStream(res, req.headers.accept, this.options.heartbeatMs), messageIds: new Map(), started: false, done: false };
    this.activeRuns++;
    try {
      if (thread) {
        thread.run = run;
        try {
          thread.session.message(request.text);
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
        thread = this.adopt(request.threadId, this.rx.start({ prompt: request.text, ...(confirmTool ? { confirmTool } : {}) }));
        thread.run = run;
      }
    } catch (e) {
      this.activeRuns--;
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
    const thread: Thread = { id: threadId, session, subscriptions: [], shownMessageIds: new Set(), run: undefined, lastError: undefined, idleTimer: undefined, ended: false };
    this.threads.set(threadId, thread);
    thread.subscriptions.push(
      session.events$.subscribe((env) => {
        if (env.source !== 'agentrx') return;
        const ev = env.raw;
        switch (ev.type) {
          case 'agentrx.run_error':
            thread.lastError = { code: ev.code, message: ev.message };
            break;
          case 'agentrx.confirmation_required':
            this.cannotConfirm(thread, ev.toolUses);
            break;
          default:
            break;
        }
      }),
    );
    thread.subscriptions.push(
      session.agui$.subscribe({
        next: (ev) => this.forward(thread, ev),
        error: () => this.sessionEnded(thread),
        complete: () => this.sessionEnded(thread),
      }),
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

  /** Writes one session event to the thread's current run, with the client's ids. */
  private forward(thread: Thread, ev: AgUiEvent): void {
    const run = thread.run;
    if (!run || run.done) return;
    let out: AgUiEvent = ev;
    switch (ev.type) {
      case 'RUN_STARTED':
        if (run.started) return;
        run.started = true;
        out = { ...ev, threadId: thread.id, runId: run.runId };
        break;
      case 'RUN_FINISHED':
        out = { ...ev, threadId: thread.id, runId: run.runId };
        break;
      case 'TEXT_MESSAGE_START':
      case 'TEXT_MESSAGE_CONTENT':
      case 'TEXT_MESSAGE_END':
        out = { ...ev, messageId: this.clientMessageId(thread, run, ev.messageId) };
        break;
      default:
        break;
    }
    // AG-UI: a stream starts with RUN_STARTED (or is a lone RUN_ERROR).
    if (!run.started && out.type !== 'RUN_ERROR') return;
    run.stream.write(out);
    if (out.type === 'RUN_FINISHED') this.endRun(thread, run);
    if (out.type === 'RUN_ERROR') {
      // A failed request ends a live session: the thread's next request starts a new one.
      this.endRun(thread, run);
      this.forget(thread);
    }
  }

  /**
   * The id the client sees for a session message id. Providers without message ids reuse
   * `msg-<turn>` in every run; the AG-UI client would append a repeated id's text to the earlier
   * message, so a repeat gets the run id appended.
   */
  private clientMessageId(thread: Thread, run: Run, id: string): string {
    let mapped = run.messageIds.get(id);
    if (mapped === undefined) {
      mapped = thread.shownMessageIds.has(id) ? `${id}@${run.runId}` : id;
      run.messageIds.set(id, mapped);
      thread.shownMessageIds.add(mapped);
    }
    return mapped;
  }

  /** The run reached its terminal event: end the response; the session stays for the next message. */
  private endRun(thread: Thread, run: Run): void {
    if (run.done) return;
    run.done = true;
    this.activeRuns--;
    if (thread.run === run) thread.run = undefined;
    run.stream.end();
    if (!thread.ended) this.armIdle(thread);
  }

  /** The response closed: if its run has not ended, the client left; cancel the session. */
  private clientGone(thread: Thread, run: Run): void {
    if (run.done) return;
    run.done = true;
    run.stream.stop();
    this.activeRuns--;
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
