import { Observable } from '../../util/rxjs.js';
import { AgentRxError } from '../../errors.js';
import type { SessionEvent } from '../../events/session-event.js';
import type { LedgerEntry, LedgerState } from '../../tools/tool-ledger.js';
import { selectForPrune, type PrunableSessionStore, type PruneOptions } from '../retention.js';
import type { SessionRecord, SessionStore, StoreLease } from '../session-store.js';
import { malformedRecordError } from '../record-shape.js';
import { MemorySessionEntry } from './memory-session-entry.js';

/** What the memory store keeps of a session once it closed (its lease released); see `MemoryStoreConfig.memoryKeep`. */
export type MemoryKeep = 'recent' | 'none';

/** The memory store's bounds besides the log limit and the session count. */
export interface MemorySessionStoreOptions {
  /**
   * Bytes kept of closed sessions (their logs and records, compressed; open sessions are bounded
   * by the log limit). Once over, the least recently updated sessions that are neither running,
   * held nor followed are dropped down to 90% of it; the most recently updated one always stays.
   * 0: no bound. Default 0.
   */
  readonly maxBytes?: number;
  /** `recent` (default): closed sessions stay within the bounds, compressed; `none`: a session is dropped once released. */
  readonly keep?: MemoryKeep;
}

/**
 * Keeps sessions in process memory (tests, and the library's default). An open session's record
 * and envelopes are kept by reference, not copied (the Session hands over immutable snapshots);
 * once it is released they are sealed: serialized and compressed, parsed again on each read (see
 * `MemorySessionEntry`). Each log keeps its most recent `logLimit` envelopes (at most twice as
 * many; 0: all), so a long live session's memory stays bounded; reading before the kept part is
 * a `store_error`. Closed sessions are bounded by count and by bytes. With `keep: 'none'` a
 * session is gone once its lease is released (and no tail follows it).
 */
export class MemorySessionStore implements SessionStore, PrunableSessionStore {
  /** Nothing outlives the process: crash-recovery checkpoints are skipped. */
  readonly durable = false;
  /** False with `keep: 'none'`: a closed session cannot be read, resumed or replayed. */
  readonly keepsClosed: boolean;
  private readonly sessions = new Map<string, MemorySessionEntry>();
  /** Thread id → the session last saved with it (checked against the entry on lookup). */
  private readonly threads = new Map<string, string>();
  private readonly maxBytes: number;
  /** Bytes of sealed text kept (`MemorySessionEntry.chars` summed). */
  private chars = 0;
  /** A pass over the byte bound runs only above this (raised after a pass that could not get under the bound). */
  private evictAbove: number;

  /**
   * @param logLimit Most recent envelopes always kept per session; 0 keeps all. Default 0 (tests);
   *   the memory engine's registration passes `store.memoryLogLimit`.
   * @param maxSessions Sessions kept: once 10% more are saved, the least recently updated ones
   *   that are neither running nor held are dropped down to this many. 0 keeps all. Default 0;
   *   the registration passes `store.memoryMaxSessions`.
   * @param options The byte bound and what is kept of a closed session (default: no byte bound,
   *   `recent`); the registration passes `store.memoryMaxBytes` and `store.memoryKeep`.
   */
  constructor(
    private readonly logLimit = 0,
    private readonly maxSessions = 0,
    options: MemorySessionStoreOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 0;
    this.evictAbove = this.maxBytes;
    this.keepsClosed = options.keep !== 'none';
  }

  /** Bytes this store keeps as `memoryMaxBytes` counts them: closed sessions' logs and records, compressed. */
  get keptBytes(): number {
    return this.chars;
  }

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    return this.sessions.get(sessionId)?.record();
  }

  async save(record: SessionRecord): Promise<void> {
    const malformed = malformedRecordError(record);
    if (malformed) throw malformed;
    const s = this.of(record.sessionId);
    const added = !s.hasRecord;
    this.measure(s, () => s.setRecord(record));
    if (record.threadId !== undefined && record.threadId !== record.sessionId) this.threads.set(record.threadId, record.sessionId);
    // Pruned in blocks (10% over the bound), not per save: a prune sorts every session.
    if (added && this.maxSessions > 0 && this.sessions.size > Math.floor(this.maxSessions * 1.1) + 1) await this.prune({ maxSessions: this.maxSessions });
  }

  async delete(sessionId: string): Promise<void> {
    const s = this.sessions.get(sessionId);
    if (s) this.remove(sessionId, s);
  }

  async findByThread(threadId: string): Promise<string | undefined> {
    const id = this.threads.get(threadId);
    if (id !== undefined && this.sessions.get(id)?.threadId === threadId) return id;
    // Deleted or pruned since, or saved again under another thread.
    if (id !== undefined) this.threads.delete(threadId);
    return undefined;
  }

  async list(): Promise<SessionRecord[]> {
    return [...this.sessions.values()].flatMap((s) => s.record() ?? []).sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async transition(sessionId: string, expected: LedgerState | undefined, entry: LedgerEntry): Promise<boolean> {
    const s = this.sessions.get(sessionId);
    const record = s?.record();
    if (!s || !record) throw new AgentRxError('store_error', `session '${sessionId}' has no record to hold its ledger; save the record first`);
    const current = record.ledger.find((e) => e.toolUseId === entry.toolUseId);
    if (current?.state !== expected) return false;
    const ledger = current ? record.ledger.map((e) => (e === current ? entry : e)) : [...record.ledger, entry];
    this.measure(s, () => s.setRecord({ ...record, ledger, updatedAt: Date.now() }));
    return true;
  }

  async append(sessionId: string, envelopes: readonly SessionEvent[]): Promise<void> {
    const s = this.of(sessionId);
    const added: SessionEvent[] = [];
    try {
      let last = s.lastSeq;
      for (const env of envelopes) {
        if (env.seq <= last) continue;
        if (env.seq !== last + 1)
          throw new AgentRxError('store_error', `session '${sessionId}': append of seq ${env.seq} would leave a gap after seq ${last}`, {
            sessionId,
            seq: env.seq,
            last,
          });
        added.push(env);
        last = env.seq;
      }
    } finally {
      // What was appended before a gap is kept, and tails see it.
      if (added.length > 0) {
        this.measure(s, () => {
          s.push(added);
          if (this.logLimit > 0 && s.count > 2 * this.logLimit) s.dropOldest(s.count - this.logLimit);
        });
        s.notify();
      }
    }
  }

  async flush(): Promise<void> {}

  async read(sessionId: string, afterSeq: number, limit = 1_000): Promise<SessionEvent[]> {
    const s = this.sessions.get(sessionId);
    if (!s) return [];
    const from = this.indexAfter(sessionId, s, afterSeq);
    const to = Math.min(s.count, from + Math.max(0, limit));
    return s.slice(from, to);
  }

  async lastSeq(sessionId: string): Promise<number> {
    return this.sessions.get(sessionId)?.lastSeq ?? 0;
  }

  tail(sessionId: string, afterSeq: number): Observable<SessionEvent> {
    return new Observable<SessionEvent>((subscriber) => {
      const s = this.of(sessionId);
      let seq = Math.max(0, afterSeq);
      try {
        this.indexAfter(sessionId, s, seq);
      } catch (e) {
        subscriber.error(e);
        this.dropIfEmpty(sessionId, s);
        return undefined;
      }
      const drain = (): void => {
        while (seq < s.lastSeq && !subscriber.closed) {
          let from: number;
          try {
            from = this.indexAfter(sessionId, s, seq);
          } catch (e) {
            subscriber.error(e);
            return;
          }
          for (const env of s.slice(from, s.count)) {
            // A drain re-entered from `next` (an append made by a subscriber) has moved on.
            if (subscriber.closed || env.seq !== seq + 1) break;
            seq++;
            subscriber.next(env);
          }
        }
      };
      s.tails.add(drain);
      drain();
      return () => {
        s.tails.delete(drain);
        if (s.closed && s.tails.size === 0) this.remove(sessionId, s);
        else this.dropIfEmpty(sessionId, s);
      };
    });
  }

  async acquire(sessionId: string): Promise<StoreLease> {
    const s = this.of(sessionId);
    if (s.held)
      throw new AgentRxError('store_error', `session '${sessionId}' is already open in this process; close it before resuming it again`, { sessionId });
    s.held = true;
    s.closed = false;
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        s.held = false;
        if (this.sessions.get(sessionId) !== s) return;
        if (!this.keepsClosed) {
          // Nobody will read it again: gone now, or once the tails following it leave.
          if (s.tails.size === 0) this.remove(sessionId, s);
          else s.closed = true;
          return;
        }
        this.measure(s, () => s.compact());
        this.dropIfEmpty(sessionId, s);
        this.checkBytes();
      },
    };
  }

  /**
   * Deletes sessions by age and count (see `PruneOptions`), never one that is held (acquired and
   * not released) or `running`. Sessions without a record are left alone.
   */
  async prune(options: PruneOptions): Promise<string[]> {
    const sessions = [...this.sessions].flatMap(([sessionId, s]) => (s.hasRecord ? [{ sessionId, updatedAt: s.updatedAt }] : []));
    const deleted: string[] = [];
    for (const sessionId of selectForPrune(sessions, options)) {
      const s = this.sessions.get(sessionId);
      if (!s || s.held || s.status === 'running') continue;
      this.remove(sessionId, s);
      deleted.push(sessionId);
    }
    return deleted;
  }

  /**
   * Once the text kept is over `maxBytes`, drops the least recently updated sessions with a
   * record that are neither held, running nor followed by a tail, down to 90% of it; the most
   * recently updated session stays whatever its size. A pass that cannot get under the bound
   * (what is left is running or followed) lets the text grow 10% before the next one, so that
   * each release does not sort every session; the threshold is back to `maxBytes` once the text
   * is under it.
   */
  private checkBytes(): void {
    if (this.maxBytes === 0) return;
    if (this.chars <= this.maxBytes) {
      this.evictAbove = this.maxBytes;
      return;
    }
    if (this.chars <= this.evictAbove) return;
    const target = Math.floor(this.maxBytes * 0.9);
    const ranked = [...this.sessions].filter(([, s]) => s.hasRecord).sort((a, b) => a[1].updatedAt - b[1].updatedAt);
    ranked.pop();
    for (const [sessionId, s] of ranked) {
      if (this.chars <= target) break;
      if (!s.held && s.status !== 'running' && s.tails.size === 0) this.remove(sessionId, s);
    }
    this.evictAbove = Math.max(this.maxBytes, Math.floor(this.chars * 1.1));
  }

  /** Runs `change` on `s`, keeping the store's character count in step. */
  private measure(s: MemorySessionEntry, change: () => void): void {
    const before = s.chars;
    try {
      change();
    } finally {
      this.chars += s.chars - before;
    }
  }

  /** The log index of the first envelope after `afterSeq`; a `store_error` when the limit dropped it. */
  private indexAfter(sessionId: string, s: MemorySessionEntry, afterSeq: number): number {
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

  /** Forgets `s` (its record, log and thread index entry); a tail following it sees nothing more. */
  private remove(sessionId: string, s: MemorySessionEntry): void {
    if (this.sessions.get(sessionId) !== s) return;
    this.sessions.delete(sessionId);
    this.chars -= s.chars;
    if (s.threadId !== undefined && this.threads.get(s.threadId) === sessionId) this.threads.delete(s.threadId);
  }

  /**
   * Forgets an entry that only a tail or a lease had made (no record, no envelope) once neither is
   * left: attaching to an id that never had a session, or leasing one that was never saved, must
   * not keep an entry forever (`prune` leaves entries without a record alone).
   */
  private dropIfEmpty(sessionId: string, s: MemorySessionEntry): void {
    if (s.tails.size > 0 || s.held || s.hasRecord || s.lastSeq > 0) return;
    this.remove(sessionId, s);
  }

  private of(sessionId: string): MemorySessionEntry {
    let s = this.sessions.get(sessionId);
    if (!s) {
      s = new MemorySessionEntry();
      this.sessions.set(sessionId, s);
    }
    return s;
  }
}
