import { Observable, Subject } from 'rxjs';
import { AgentRxError } from '../../errors.js';
import type { SessionEvent } from '../../events/session-event.js';
import type { LedgerEntry, LedgerState } from '../../tools/tool-ledger.js';
import { selectForPrune, type PrunableSessionStore, type PruneOptions } from '../retention.js';
import type { SessionRecord, SessionStore, StoreLease } from '../session-store.js';
import { malformedRecordError } from '../record-shape.js';

interface Stored {
  record: SessionRecord | undefined;
  /** Envelopes `base + 1 … base + log.length` (older ones were dropped by the log limit). */
  log: SessionEvent[];
  base: number;
  readonly appended: Subject<void>;
  held: boolean;
  /** Tails subscribed now: while there are any, an entry with nothing else in it is kept for them. */
  tails: number;
}

/**
 * Keeps sessions in process memory (tests, and the library's default). Records and envelopes are
 * kept by reference, not copied: the Session hands over immutable snapshots, and a deep copy per
 * save was a measurable share of CPU and GC with many concurrent sessions. Each log keeps its
 * most recent `logLimit` envelopes (at most twice as many; 0: all), so a long live session's
 * memory stays bounded; reading before the kept part is a `store_error`.
 */
export class MemorySessionStore implements SessionStore, PrunableSessionStore {
  /** Nothing outlives the process: crash-recovery checkpoints are skipped. */
  readonly durable = false;
  private readonly sessions = new Map<string, Stored>();

  /**
   * @param logLimit Most recent envelopes always kept per session; 0 keeps all. Default 0 (tests);
   *   the memory engine's registration passes `store.memoryLogLimit`.
   * @param maxSessions Sessions kept: once 10% more are saved, the least recently updated ones
   *   that are neither running nor held are dropped down to this many. 0 keeps all. Default 0;
   *   the registration passes `store.memoryMaxSessions`.
   */
  constructor(
    private readonly logLimit = 0,
    private readonly maxSessions = 0,
  ) {}

  /** Thread id → the session last saved with it (checked against the record on lookup). */
  private readonly threads = new Map<string, string>();

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    return this.sessions.get(sessionId)?.record;
  }

  async save(record: SessionRecord): Promise<void> {
    const malformed = malformedRecordError(record);
    if (malformed) throw malformed;
    const s = this.of(record.sessionId);
    const added = s.record === undefined;
    s.record = record;
    if (record.threadId !== undefined && record.threadId !== record.sessionId) this.threads.set(record.threadId, record.sessionId);
    // Pruned in blocks (10% over the bound), not per save: a prune sorts every session.
    if (added && this.maxSessions > 0 && this.sessions.size > Math.floor(this.maxSessions * 1.1) + 1) await this.prune({ maxSessions: this.maxSessions });
  }

  async delete(sessionId: string): Promise<void> {
    const threadId = this.sessions.get(sessionId)?.record?.threadId;
    this.sessions.delete(sessionId);
    // Its thread's index entry goes with it (unless the thread has a newer session).
    if (threadId !== undefined && this.threads.get(threadId) === sessionId) this.threads.delete(threadId);
  }

  async findByThread(threadId: string): Promise<string | undefined> {
    const id = this.threads.get(threadId);
    if (id !== undefined && this.sessions.get(id)?.record?.threadId === threadId) return id;
    // Deleted or pruned since, or saved again under another thread.
    if (id !== undefined) this.threads.delete(threadId);
    return undefined;
  }

  async list(): Promise<SessionRecord[]> {
    return [...this.sessions.values()].flatMap((s) => (s.record ? [s.record] : [])).sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async transition(sessionId: string, expected: LedgerState | undefined, entry: LedgerEntry): Promise<boolean> {
    const s = this.sessions.get(sessionId);
    const record = s?.record;
    if (!s || !record) throw new AgentRxError('store_error', `session '${sessionId}' has no record to hold its ledger; save the record first`);
    const current = record.ledger.find((e) => e.toolUseId === entry.toolUseId);
    if (current?.state !== expected) return false;
    const ledger = current ? record.ledger.map((e) => (e === current ? entry : e)) : [...record.ledger, entry];
    s.record = { ...record, ledger, updatedAt: Date.now() };
    return true;
  }

  async append(sessionId: string, envelopes: readonly SessionEvent[]): Promise<void> {
    const s = this.of(sessionId);
    let added = false;
    try {
      for (const env of envelopes) {
        const last = s.base + s.log.length;
        if (env.seq <= last) continue;
        if (env.seq !== last + 1)
          throw new AgentRxError('store_error', `session '${sessionId}': append of seq ${env.seq} would leave a gap after seq ${last}`, {
            sessionId,
            seq: env.seq,
            last,
          });
        s.log.push(env);
        added = true;
      }
      if (this.logLimit > 0 && s.log.length > 2 * this.logLimit) {
        const drop = s.log.length - this.logLimit;
        s.log = s.log.slice(drop);
        s.base += drop;
      }
    } finally {
      // Tails see what was appended before a gap too.
      if (added) s.appended.next();
    }
  }

  async flush(): Promise<void> {}

  async read(sessionId: string, afterSeq: number, limit = 1_000): Promise<SessionEvent[]> {
    const s = this.sessions.get(sessionId);
    if (!s) return [];
    const from = this.indexAfter(sessionId, s, afterSeq);
    return s.log.slice(from, from + limit);
  }

  async lastSeq(sessionId: string): Promise<number> {
    const s = this.sessions.get(sessionId);
    return s ? s.base + s.log.length : 0;
  }

  tail(sessionId: string, afterSeq: number): Observable<SessionEvent> {
    return new Observable<SessionEvent>((subscriber) => {
      const s = this.of(sessionId);
      let seq = Math.max(0, afterSeq);
      try {
        this.indexAfter(sessionId, s, seq);
      } catch (e) {
        subscriber.error(e);
        return undefined;
      }
      const drain = (): void => {
        while (seq < s.base + s.log.length && !subscriber.closed) subscriber.next(s.log[seq++ - s.base]!);
      };
      s.tails++;
      const sub = s.appended.subscribe(drain);
      drain();
      return () => {
        sub.unsubscribe();
        s.tails--;
        this.dropIfEmpty(sessionId, s);
      };
    });
  }

  async acquire(sessionId: string): Promise<StoreLease> {
    const s = this.of(sessionId);
    if (s.held)
      throw new AgentRxError('store_error', `session '${sessionId}' is already open in this process; close it before resuming it again`, { sessionId });
    s.held = true;
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        s.held = false;
        this.dropIfEmpty(sessionId, s);
      },
    };
  }

  /**
   * Deletes sessions by age and count (see `PruneOptions`), never one that is held (acquired and
   * not released) or `running`. Sessions without a record are left alone.
   */
  async prune(options: PruneOptions): Promise<string[]> {
    const sessions = [...this.sessions].flatMap(([sessionId, s]) => (s.record ? [{ sessionId, updatedAt: s.record.updatedAt }] : []));
    const deleted: string[] = [];
    for (const sessionId of selectForPrune(sessions, options)) {
      const s = this.sessions.get(sessionId);
      if (!s || s.held || s.record?.status === 'running') continue;
      this.sessions.delete(sessionId);
      deleted.push(sessionId);
    }
    return deleted;
  }

  /** The log index of the first envelope after `afterSeq`; a `store_error` when the limit dropped it. */
  private indexAfter(sessionId: string, s: Stored, afterSeq: number): number {
    const after = Math.max(0, afterSeq);
    if (after < s.base) {
      throw new AgentRxError(
        'store_error',
        `session '${sessionId}': the memory store keeps only its last ${this.logLimit} envelopes (from seq ${s.base + 1}); seq ${after + 1} was dropped. Raise store.memoryLogLimit (0 keeps all) or use the file store`,
        { sessionId, afterSeq: after, first: s.base + 1 },
      );
    }
    return after - s.base;
  }

  /**
   * Forgets an entry that only a tail or a lease had made (no record, no envelope) once neither is
   * left: attaching to an id that never had a session, or leasing one that was never saved, must
   * not keep an entry forever (`prune` leaves entries without a record alone).
   */
  private dropIfEmpty(sessionId: string, s: Stored): void {
    if (s.tails > 0 || s.held || s.record !== undefined || s.base + s.log.length > 0) return;
    if (this.sessions.get(sessionId) === s) this.sessions.delete(sessionId);
  }

  private of(sessionId: string): Stored {
    let s = this.sessions.get(sessionId);
    if (!s) {
      s = { record: undefined, log: [], base: 0, appended: new Subject<void>(), held: false, tails: 0 };
      this.sessions.set(sessionId, s);
    }
    return s;
  }
}
