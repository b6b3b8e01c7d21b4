import type { Subscription } from 'rxjs';
import type { LiveSession } from '../../core/plugin/live-session.js';
import type { ClientTools } from './agui-http.client-tools.js';
import { ClientWait } from './agui-http.client-wait.js';
import { ThreadFrames } from './agui-http.frames.js';
import type { Run } from './agui-http.run.js';

/** One client thread: its live session, and the run streaming now, if any. */
export class Thread {
  /** The client frames of the session's events (ids, message id renames). */
  readonly frames: ThreadFrames;
  /** The session's run ids → the client's (for replays on this server). */
  readonly clientRunIds = new Map<string, string>();
  /** The client's run ids → the messages its request started with (for replays on this server; the most recent runs). */
  readonly runInputs = new Map<string, readonly Record<string, unknown>[]>();
  /** What the session waits for from the client between two of its runs. */
  readonly wait: ClientWait;
  /** The store key of the session's log (known from its first `run_started`). */
  logId: string | undefined;
  /** The highest `seq` seen live (the store may lag behind it by an append in flight). */
  lastSeq = 0;
  run: Run | undefined;
  lastError: { code: string; message: string } | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  /** The thread no longer serves runs (its session ended, or the endpoint let go of it). */
  ended = false;
  /** The reading of the session (set once followed). */
  subscription: Subscription | undefined;

  /**
   * @param id The client's thread id.
   * @param session Its live session, wherever it runs.
   * @param clientTools The client's frontend tools handed to the session, if any.
   */
  constructor(
    readonly id: string,
    readonly session: LiveSession,
    readonly clientTools: ClientTools | undefined,
  ) {
    this.wait = new ClientWait(id);
    this.frames = new ThreadFrames(id, (logRunId) => {
      // The run a session starts now is the one the client's request is waiting for.
      const run = this.run;
      if (run !== undefined) this.runStarted(logRunId, run);
      return run?.runId;
    });
  }

  /** The session's run `logRunId` streams as the client's `run`: replays on this server map it and know its conversation. */
  runStarted(logRunId: string, run: Run): void {
    this.clientRunIds.set(logRunId, run.runId);
    this.runInputs.set(run.runId, run.messages.input);
    if (this.runInputs.size > MAX_RUN_INPUTS) this.runInputs.delete(this.runInputs.keys().next().value as string);
  }
}

/** Runs whose starting conversation a thread keeps for replays. */
const MAX_RUN_INPUTS = 8;

/** Calls a session input whose failure does not matter (the session is being let go of): a sync throw or a rejection is ignored. */
export function quietly(call: () => void | Promise<void>): void {
  try {
    void Promise.resolve(call()).catch(() => undefined);
  } catch {
    // nothing to do: the session is ending anyway
  }
}

/** `p`, settled either way (a let-go session's release never rejects the endpoint's waits). */
export function settledOf(p: void | Promise<void>): Promise<void> {
  return Promise.resolve(p).then(
    () => undefined,
    () => undefined,
  );
}
