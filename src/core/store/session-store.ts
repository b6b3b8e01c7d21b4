import type { LedgerEntry } from '../tools/tool-ledger.js';

/**
 * Durable state of one session: enough to resume it in a new process without re-running a
 * tool whose result was recorded. Saved after every ledger change.
 */
export interface SessionRecord {
  readonly version: 1;
  readonly sessionId: string;
  readonly provider: string;
  readonly ledger: readonly LedgerEntry[];
  /** Id of the last provider event ingested (a resume cursor where the host supports one). */
  readonly cursor?: string;
  readonly updatedAt: number;
}

/** Persists SessionRecords. Implementations must make `save` atomic. */
export const SessionStore = Symbol('SessionStore');

export interface SessionStore {
  /** The record, or undefined if none (a corrupt record is reported through `onCorrupt` and treated as none). */
  load(sessionId: string): Promise<SessionRecord | undefined>;
  save(record: SessionRecord): Promise<void>;
  delete(sessionId: string): Promise<void>;
}

/**
 * Keeps records in process memory. Records are kept by reference, not copied: the Session saves a
 * fresh snapshot each time (ledger entries are immutable objects), and a deep copy per save was a
 * measurable share of CPU and GC with many concurrent sessions.
 */
export class MemorySessionStore implements SessionStore {
  private readonly records = new Map<string, SessionRecord>();
  async load(sessionId: string): Promise<SessionRecord | undefined> {
    return this.records.get(sessionId);
  }
  async save(record: SessionRecord): Promise<void> {
    this.records.set(record.sessionId, record);
  }
  async delete(sessionId: string): Promise<void> {
    this.records.delete(sessionId);
  }
}
