import type { Observable } from 'rxjs';
import type { RunFinishedEvent } from '../../core/events/agui-event.js';
import type { SessionEvent } from '../../core/events/session-event.js';
import type { Session } from '../../core/session/session.js';
import type { ConfirmTool, SessionOptions } from '../../core/session/session-options.js';
import type { SessionStore } from '../../core/store/session-store.js';
import type { RemoteSession } from '../../distributed/remote-session.js';
import type { SubmitOptions } from '../../distributed/submit-options.js';

/*
 * What the AG-UI endpoint's threads need from agentrx and from where sessions run: the host
 * (an AgentRx), a live session (of this process or of the worker pool), its placement, and what a
 * reconnect needs of a thread this endpoint serves. The threads themselves are in
 * agui-http.threads.ts.
 */
/** What the endpoint needs from agentrx: starting live sessions (an `AgentRx` instance fits). */
export interface AgUiSessionHost {
  /** Starts a live session (it stays open for `message()` after each run). */
  start(opts: SessionOptions): Session;
  /** The store its sessions' logs are written to (reconnects replay from it). */
  readonly sessionStore?: SessionStore;
  /** A reader of a session's log (`AgentRx.attach`): reconnects to this endpoint's own threads use it when no store is given. */
  attach?(sessionId: string, opts?: { readonly afterSeq?: number }): { readonly events$: Observable<SessionEvent> };
  /**
   * The host's config (`AgentRx.config`): with `runtime.mode: 'distributed'` the endpoint places
   * each thread's session on the worker pool with `submit` instead of running it with `start`.
   */
  readonly config?: { readonly runtime: { readonly mode: string; readonly queueName?: string }; readonly store: { readonly url?: string; readonly keyPrefix?: string } };
  /** `AgentRx.submit`: enqueues a session for the worker pool (`runtime.mode: 'distributed'`). */
  submit?(opts: SubmitOptions): Promise<RemoteSession>;
  /** `AgentRx.remote`: a handle on a submitted session by its submission id, from any process. */
  remote?(submissionId: string, opts?: { readonly afterSeq?: number }): Promise<RemoteSession>;
}

/**
 * The part of a live session the threads drive: a `Session` of this process, or a handle on one a
 * worker of the pool runs (`RemoteSession`, whose inputs resolve once they are on their way).
 */
export interface AgUiLiveSession {
  /** The session's envelopes (a remote handle's completes once the session closed and its log was read). */
  readonly events$: Observable<SessionEvent>;
  /** Resolves once the session has closed and its envelopes were all emitted. */
  readonly closed: Promise<void>;
  /** Sends a follow-up user message; throws (or rejects) `session_closed` when the session has closed. */
  message(text: string): void | Promise<void>;
  /** Replaces the agent's state before the next run (a session of this process; a remote one keeps the state it was submitted with). */
  setState?(state: Readonly<Record<string, unknown>>): void;
  /**
   * Posts a raw user event (a `user.tool_confirmation` answering an interrupt). Absent: the
   * endpoint cannot ask its client to confirm a tool, and a run that needs it ends with RUN_ERROR.
   */
  sendEvent?(event: Record<string, unknown>): Promise<void>;
  /** Cancels the session now. */
  cancel(): void | Promise<void>;
  /** Ends the session once its running request is over. */
  close(): void | Promise<void>;
  /**
   * Present for a session that lives elsewhere (the worker pool): the endpoint lets go of it
   * (stops reading it) instead of closing it when the thread idles, is evicted or the endpoint
   * shuts down, so another endpoint may serve the thread; the worker closes it after its own idle time.
   */
  detach?(): Promise<void>;
}

/**
 * Where the threads' sessions run: `open` starts one in this process (a `Session`, synchronously)
 * or places it elsewhere (a promise of the handle). Built by `createAgUiHandler` from its `rx`.
 */
export interface AgUiSessionPlacement {
  /** True when sessions run in this process: only then can a thread's frontend tools be handed to its session. */
  readonly inProcess?: boolean;
  /** Opens the session of a thread (the prompt is its first run). */
  open(opts: SessionOptions): Session | Promise<AgUiLiveSession>;
  /**
   * The live session of `threadId` that another endpoint sharing the pool opened, when it is still
   * open: the thread's next run goes to it with `message()` instead of a new session. Its events
   * start after the log's current end. Rejects with `details.threadBusy` when a request of that
   * session is still running (answered 409, like a busy thread of this endpoint).
   */
  find?(threadId: string): Promise<AgUiLiveSession | undefined>;
  /**
   * The dependencies' health for `GET /healthz`: `healthy`, and one entry per dependency (`ok`, or
   * what is wrong, credentials redacted). Resolves within a short timeout; never rejects.
   */
  health?(): Promise<{ readonly healthy: boolean; readonly checks: Readonly<Record<string, string>> }>;
  /**
   * A reader on this endpoint follows `threadId`'s run (a reconnect): announced where every
   * endpoint sharing the pool sees it, until the returned release is called.
   */
  hold?(threadId: string): () => void;
  /**
   * True when a reader on any endpoint follows `threadId`'s run (see `hold`): a run whose client
   * left then goes on past its reconnect grace.
   */
  followed?(threadId: string): Promise<boolean>;
  /** Lets go of what the placement holds (connections); the sessions are the threads' to end. */
  close?(): Promise<void>;
}

/** The placement of an embedded host: every session runs in this process (`rx.start`). */
export function localPlacement(rx: AgUiSessionHost): AgUiSessionPlacement {
  return { inProcess: true, open: (opts) => rx.start(opts) };
}

/** How the threads start and observe sessions (see `AgUiHandlerOptions`). */
export interface AgUiThreadHooks {
  readonly onSession?: ((session: Session, threadId: string) => void) | undefined;
  readonly confirmTool?: ConfirmTool | undefined;
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
  /**
   * Calls `listener` when the thread's run ends waiting on the client (frontend tools or
   * interrupts), at once when it already does: `seq` is the last envelope before it, `outcome`
   * its RUN_FINISHED outcome. That end is not in the log, so a reader replaying the log learns it
   * here. Returns the unsubscribe.
   */
  onSuspended(listener: (suspension: ThreadSuspension) => void): () => void;
}

/** Where a thread's run ended waiting on the client, and how (see `LocalThread.onSuspended`). */
export interface ThreadSuspension {
  readonly seq: number;
  readonly outcome: NonNullable<RunFinishedEvent['outcome']>;
}
