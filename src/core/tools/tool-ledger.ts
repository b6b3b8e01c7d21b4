import type { ToolResult } from '../model.js';

/**
 * Where one tool use stands. `executing` is persisted before the handler runs, `executed` with
 * its result as soon as it settles, `posted` once the host accepted the result.
 * `awaiting_client` is persisted (synced) when the use waits on a client instead: the result of a
 * frontend tool the client runs (an AG-UI page), or the client's decision to run a tool that needs
 * approval. Unlike `executing`, a wait is not lost with the process: a resume answers it with the
 * client's answer (`SessionOptions.clientAnswers`) or waits for it again, until its `deadline`.
 */
export type LedgerState = 'executing' | 'awaiting_client' | 'executed' | 'posted';

/** What an `awaiting_client` entry waits for: a frontend tool's result, or a decision on running the tool. */
export type ClientWaitKind = 'tool' | 'confirmation';

export interface LedgerEntry {
  readonly toolUseId: string;
  readonly name: string;
  readonly state: LedgerState;
  readonly result?: ToolResult;
  /** With `awaiting_client`: what the client is asked for. */
  readonly awaits?: ClientWaitKind;
  /** With `awaiting_client`: epoch ms at which the wait ends with an `is_error` result (the wait's own timeout), when it has one. */
  readonly deadline?: number;
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

  /**
   * Marks the start of an execution. Returns false if the id is already known (do not run),
   * except for a use that waited for the client's approval (`awaiting_client` `confirmation`):
   * once allowed, it runs.
   */
  begin(toolUseId: string, name: string): boolean {
    const prev = this.entries.get(toolUseId);
    if (prev && !(prev.state === 'awaiting_client' && prev.awaits === 'confirmation')) return false;
    this.entries.set(toolUseId, { toolUseId, name, state: 'executing' });
    return true;
  }

  /**
   * Marks a use as waiting on the client (`awaits`) until `deadline` (none: as long as the
   * session waits). Returns false, changing nothing, when the id already has a result or runs; an
   * entry already waiting keeps its deadline when it waits for the same thing (a wait resumed
   * after a restart does not start over).
   */
  awaitClient(toolUseId: string, name: string, awaits: ClientWaitKind, deadline?: number): boolean {
    const prev = this.entries.get(toolUseId);
    if (prev && prev.state !== 'awaiting_client') return false;
    if (prev?.awaits === awaits) return true;
    this.entries.set(toolUseId, { toolUseId, name, state: 'awaiting_client', awaits, ...(deadline !== undefined ? { deadline } : {}) });
    return true;
  }

  /** The entries waiting on the client, oldest first. */
  awaiting(): LedgerEntry[] {
    return [...this.entries.values()].filter((e) => e.state === 'awaiting_client');
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
