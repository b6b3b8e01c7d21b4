import type { Observable } from 'rxjs';
import type { AgUiEvent } from '../events/agui-event.js';
import type { SessionEvent } from '../events/session-event.js';
import type { RawEvent, SessionResult } from '../model.js';
import type { ClientAnswers } from './session-options.js';

/**
 * A request's result as every live session gives it: a session of this process adds the raw
 * provider `events` and the host's `transcript`; a handle on a session that runs elsewhere (the
 * worker pool) has neither.
 */
export type LiveResult = Omit<SessionResult, 'events' | 'transcript'> & Partial<Pick<SessionResult, 'events' | 'transcript'>>;

/**
 * One live agent session, wherever it runs: a `Session` of this process or a `RemoteSession`
 * handle on one a worker of the pool runs. Everything that drives a session (the AG-UI server,
 * the CLI, a worker) drives this surface; only a {@link SessionPlacement} knows where it runs.
 */
export interface LiveSession {
  /** Every event of the session, in `seq` order, gap-free; completes when the session closed (and, for a handle, its log was read). */
  readonly events$: Observable<SessionEvent>;
  /** The AG-UI translation of `events$`. */
  readonly agui$: Observable<AgUiEvent>;
  /** A result per request; completes when the session closes; errors with the AgentRxError of a failed or cancelled session. */
  readonly results$: Observable<LiveResult>;
  /** The first request's result; rejects with a typed AgentRxError. */
  readonly result: Promise<LiveResult>;
  /** Resolves once the session has closed for good and its events were all emitted. */
  readonly closed: Promise<void>;
  /** The provider-side session id (the store's key), once the session opened. */
  readonly sessionId: string | undefined;
  /** Queues a follow-up user message; it is sent when the running request reaches a terminal. Throws (or rejects) `session_closed` once closed. */
  message(text: string): void | Promise<void>;
  /** Replaces the agent's state before the next request (a JSON object). */
  setState(state: Readonly<Record<string, unknown>>): void | Promise<void>;
  /** Posts a raw user event (a tool confirmation); rejects `unsupported` on a host without raw input. */
  sendEvent(event: RawEvent): Promise<void>;
  /**
   * Hands the client's answers to what the running request waits on: tool results to the waiting
   * calls of its client-answered session tools (`SessionOptions.tools` built by `ClientCalls`, as
   * the AG-UI endpoint's and a worker's frontend tools are), decisions as `user.tool_confirmation`
   * events (`sendEvent`). Resolves once handed; rejects `invalid_options` (nothing handed) when a result names
   * no waiting call, or with the error of posting a decision.
   */
  answerClient(answers: ClientAnswers): Promise<void>;
  /** Cancels the session now ('cancelled'). */
  cancel(): void | Promise<void>;
  /** Ends the session once its running request and the messages queued before are answered. */
  close(): void | Promise<void>;
  /**
   * The caller is done with this handle while the session may go on: a session of this process
   * closes as with `close()`; a handle on a session elsewhere stops reading it (its host closes it
   * after its own idle time, and another handle may take it up). Resolves once let go of.
   */
  release(): Promise<void>;
  /**
   * The process holding this handle shuts down: a session of this process is cancelled as a
   * shutdown (`results$` completes, `result` rejects `cancelled`) and this resolves once it closed;
   * a handle on a session elsewhere stops reading it (the session goes on).
   */
  leave(): Promise<void>;
}
