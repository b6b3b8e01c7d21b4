import { IsInt, Max, Min } from 'class-validator';
import { CoerceNumber } from '../../config/config-section.js';
import { StoreConfig } from '../../config/store-config.js';

/** `store: { type: 'memory' }` (the default): sessions live as long as the process, within these bounds. */
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
}
