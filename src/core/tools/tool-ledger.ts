import type { ToolResult } from '../model.js';

/**
 * Where one tool use stands. `executing` is persisted before the handler runs, `executed` with
 * its result as soon as it settles, `posted` once the host accepted the result.
 */
export type LedgerState = 'executing' | 'executed' | 'posted';

export interface LedgerEntry {
  readonly toolUseId: string;
  readonly name: string;
  readonly state: LedgerState;
  readonly result?: ToolResult;
}

/**
 * At-most-once bookkeeping of tool executions, keyed by tool-use id. Bounded: once it holds more
 * than `maxEntries`, the oldest `posted` entries are compacted away (the host has their results,
 * and a re-ask of one that old is answered by re-running only if nothing is recorded — the
 * bound is large enough that this does not happen in practice).
 */
export class ToolLedger {
  private readonly entries = new Map<string, LedgerEntry>();

  constructor(
    entries: readonly LedgerEntry[] = [],
    private readonly maxEntries = 10_000,
  ) {
    for (const e of entries) this.entries.set(e.toolUseId, e);
  }

  get(toolUseId: string): LedgerEntry | undefined {
    return this.entries.get(toolUseId);
  }

  /** Marks the start of an execution. Returns false if the id is already known (do not run). */
  begin(toolUseId: string, name: string): boolean {
    if (this.entries.has(toolUseId)) return false;
    this.entries.set(toolUseId, { toolUseId, name, state: 'executing' });
    return true;
  }

  /** Records the result of an execution (or of a synthesized answer). */
  record(toolUseId: string, name: string, result: ToolResult): void {
    const prev = this.entries.get(toolUseId);
    if (prev?.state === 'posted') return;
    this.entries.set(toolUseId, { toolUseId, name, state: 'executed', result });
  }

  /** Marks results as accepted by the host. */
  markPosted(toolUseIds: readonly string[]): void {
    for (const id of toolUseIds) {
      const prev = this.entries.get(id);
      if (prev?.result) this.entries.set(id, { ...prev, state: 'posted' });
    }
    this.compact();
  }

  /** A snapshot, oldest first (for persistence). */
  snapshot(): LedgerEntry[] {
    return [...this.entries.values()];
  }

  get size(): number {
    return this.entries.size;
  }

  private compact(): void {
    if (this.entries.size <= this.maxEntries) return;
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.maxEntries) break;
      if (e.state === 'posted') this.entries.delete(id);
    }
  }
}
