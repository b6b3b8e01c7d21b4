import { toAgentRxError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RawEvent } from '../model.js';
import type { AgentProvider, Reconnected } from '../plugin/agent-provider.js';

/**
 * How the request loop talks to a host, whatever its mode: it sends inputs, and closed turns come
 * back through `HostLinkEvents.turn` (a request/response host: the batch the input produced; a
 * streaming host: every turn the stream closes, asked for or not). One per session.
 */
export interface HostLink {
  /**
   * Connects the opened session. On a resume, what the host recorded meanwhile is fed into
   * ingestion and reported through `HostLinkEvents.recovered` before this resolves.
   */
  connect(resumed: boolean, signal: AbortSignal): Promise<void>;
  /** Posts one input; its turn arrives through `HostLinkEvents.turn`. */
  send(input: unknown, signal: AbortSignal): Promise<void>;
  /** True when turns may arrive without an input (a streaming host); false when only `send` produces them. */
  readonly unprompted: boolean;
  /** The host is in the middle of a turn it started before this link knew it: input waits for its boundary. */
  readonly hostMidTurn: boolean;
  /** A request reached a real terminal: the next drop starts its backoff afresh. */
  terminalReached(): void;
  /**
   * Ends the link for good (nothing is reported afterwards) and releases the session's conn
   * (`provider.close`). With `interrupt` (a cancel or a timeout), a streaming host is first asked
   * to stop its turn, bounded by `timeouts.interruptMs`. Never rejects: failures are logged.
   */
  release(interrupt: boolean): Promise<void>;
}

/** What a HostLink reports to its session. */
export interface HostLinkEvents {
  /** A closed turn's raw events (already ingested). */
  turn(events: readonly RawEvent[]): void;
  /** After a resume or a re-attach: what the host still waits on. */
  recovered(rec: Reconnected): void;
  /** The link cannot go on (reconnect attempts exhausted, a non-retryable reconnect error): end the session. */
  failed(error: Error): void;
}

/** Calls `provider.close(conn)` once the session ends (when it was opened); a failure is logged. */
export async function releaseConn(provider: AgentProvider, conn: unknown, logger: Logger): Promise<void> {
  if (conn === undefined) return;
  await Promise.resolve()
    .then(() => provider.close?.(conn))
    .catch((e: unknown) => logger.warn('provider close failed', { provider: provider.id, error: toAgentRxError(e).message }));
}
