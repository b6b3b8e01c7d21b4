import type { Subscription } from 'rxjs';
import type { RawEvent } from '../../../core/model.js';
import { CmaToolBatches } from './cma-batches.js';
import { CmaTextDeltas, isCmaTurnBoundary } from './cma-normalize.js';
import { idOf, typeOf } from './cma-wire.js';

/**
 * The per-session state of the `claude-managed-agents` provider and the resume bookkeeping on it.
 * The provider itself is shared by every session, so everything one session owns (its stream
 * attachments, the resume gate, its text-delta tracker) lives here.
 */

/** Per-session state of the provider. Opaque to the Session. */
export interface CmaConn {
  /** The Managed Agents session id (`sesn_…`). */
  readonly sessionId: string;
  /** True when `open` attached to an existing session instead of creating one. */
  readonly resumed: boolean;
  /** True once `close` ran: streams error with `session_closed`. */
  closed: boolean;
  /**
   * Resume only: ids of the history that was complete (up to its last turn boundary) when the
   * session was resumed. Those events are never fed again, even if a stream re-sends them.
   */
  old: Set<string> | undefined;
  /** Resume only: live events are held until `reconnect` has computed `old`. */
  gated: boolean;
  /** Release functions of gated attachments. */
  readonly flushers: Set<() => void>;
  /** Live stream attachments (closed by `close`/`interrupt`). */
  readonly attachments: Set<Subscription>;
  /** This session's text-delta tracker (`decode`): its unfinished previews, emptied by `close`. */
  readonly deltas: CmaTextDeltas;
  /** This session's custom tool uses and the batches idles ask them in (`decode`), emptied by `close`. */
  readonly batches: CmaToolBatches;
}

/**
 * A new conn for the Managed Agents session `sessionId` (what `open` returns): no stream attached,
 * its own text-delta and tool-use trackers, and, when `resumed`, live events held until the first `reconnect`.
 */
export function newCmaConn(sessionId: string, resumed: boolean): CmaConn {
  return {
    sessionId,
    resumed,
    closed: false,
    old: undefined,
    gated: resumed,
    flushers: new Set(),
    attachments: new Set(),
    deltas: new CmaTextDeltas(),
    batches: new CmaToolBatches(),
  };
}

/** Closes every stream attached to `conn` and drops their release functions (`close`/`interrupt`). */
export function detachAll(conn: CmaConn): void {
  for (const sub of [...conn.attachments]) sub.unsubscribe();
  conn.attachments.clear();
  conn.flushers.clear();
}

/**
 * The ids of `history` up to its last turn boundary: on a resume that part is already settled,
 * so it must not be replayed as turns (see `CmaConn.old`).
 */
export function settledEventIds(history: readonly RawEvent[]): Set<string> {
  let cut = -1;
  history.forEach((e, i) => {
    if (isCmaTurnBoundary(e)) cut = i;
  });
  return new Set(
    history
      .slice(0, cut + 1)
      .map(idOf)
      .filter((id): id is string => id !== undefined),
  );
}

/**
 * Opens the resume gate of `conn`, releasing the live events its attachments held; a no-op once
 * open. Held until `old` is known so no settled event slips through before it can be filtered.
 */
export function releaseHeld(conn: CmaConn): void {
  if (conn.gated) {
    conn.gated = false;
    for (const flush of [...conn.flushers]) flush();
  }
}

/** True when the last status event of `history` says the session is working (running or rescheduled). */
export function isRunning(history: readonly RawEvent[]): boolean {
  for (let i = history.length - 1; i >= 0; i--) {
    const type = typeOf(history[i]!);
    if (typeof type === 'string' && type.startsWith('session.status_')) return type === 'session.status_running' || type === 'session.status_rescheduled';
  }
  return false;
}
