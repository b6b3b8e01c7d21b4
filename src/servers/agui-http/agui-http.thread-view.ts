import type { RunFinishedEvent } from '../../core/events/agui-event.js';
import type { RunMessages } from './agui-http.messages.js';

/*
 * What the endpoint's parts know of a thread beyond their own: a reconnect's view of a thread this
 * endpoint serves, and where a thread's run ended waiting on its client.
 */

/** What a reconnect needs to know of a thread served by this endpoint. */
export interface LocalThread {
  /** The store key of its session's log, once its first run started. */
  readonly logId: string | undefined;
  /** The highest `seq` its session has emitted. */
  readonly lastSeq: number;
  /** The client's run id for one of the session's run ids, when this endpoint streamed that run. */
  clientRunId(logRunId: string): string | undefined;
  /** The conversation the client's run `runId` started with, when this endpoint streamed it (to apply the run's events to). */
  conversationOf(runId: string): RunMessages | undefined;
  /** Resolves once the session has closed (its log is then complete in the store). */
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
