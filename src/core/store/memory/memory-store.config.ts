import { IsIn, IsInt, Max, Min } from '../../util/class-validator.js';
import { CoerceNumber } from '../../config/config-section.js';
import { StoreConfig } from '../../config/store-config.js';
import type { MemoryKeep } from './memory-session-store.js';

/** The values of `store.memoryKeep`. */
export const MEMORY_KEEP = ['recent', 'none'] as const satisfies readonly MemoryKeep[];

/**
 * `store: { type: 'memory' }` (the default): sessions live as long as the process, within these
 * bounds. By default the store keeps the most recent closed sessions, so that they can be resumed,
 * listed and replayed (an AG-UI client reconnecting, `attach`) in this process: at most
 * `memoryMaxSessions` of them and `memoryMaxBytes` of their text, each log's last
 * `memoryLogLimit` envelopes. A closed session's log and record are kept as compressed JSON
 * text, not as objects (a five-turn streamed tool session: 60 KB of JSON, about 3.5 KB of heap
 * once closed, against 67 KB as objects; compressing it costs about 0.5 ms of CPU). A process
 * that never reads a session after its result (a CLI run, a worker, a server without reconnects)
 * sets `memoryKeep: 'none'`: a session is kept only while it is open. `memoryMaxBytes: 0` with
 * `memoryMaxSessions: 0` keeps every session (tests, recordings).
 */
export class MemoryStoreConfig extends StoreConfig {
  /**
   * The most recent envelopes kept per session log (it holds at most twice as many; older ones
   * are dropped in blocks, and reading before them is a `store_error`). Bounds a long live
   * session's memory. 0 keeps every envelope. Default 10,000.
   */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(100_000_000)
  memoryLogLimit: number = 10_000;

  /**
   * Sessions kept; once 10% more were saved, the least recently updated ones that are neither
   * running nor open are dropped down to this many. Bounds a long-running process's memory. 0
   * keeps all. Default 1,000.
   */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(100_000_000)
  memoryMaxSessions: number = 1_000;

  /**
   * Bytes kept of closed sessions: their logs and records, compressed. Once over, the least
   * recently updated sessions that are neither running, open nor followed by a reader are
   * dropped down to 90% of it (the most recently updated one always stays). An open session is
   * neither counted nor dropped: `memoryLogLimit` bounds its log. 0: no bound. Default 2.5 MiB:
   * about 820 closed sessions of five streamed turns with tool calls (3.2 KB compressed each).
   */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(2 ** 40)
  memoryMaxBytes: number = 2.5 * 2 ** 20;

  /**
   * What is kept of a session once it closed: `recent` (default) keeps the most recent ones
   * within the bounds above; `none` drops a session as soon as it is closed and no reader
   * follows its log, so it cannot be resumed, listed or replayed afterwards (its result was
   * delivered), and none is ever serialized. An open session always keeps its record, its ledger
   * and its log for live readers.
   */
  @IsIn(MEMORY_KEEP)
  memoryKeep: MemoryKeep = 'recent';
}
