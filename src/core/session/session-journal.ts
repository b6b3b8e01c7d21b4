import type { Observable, Subscription } from 'rxjs';
import { AgentRxError, toAgentRxError } from '../errors.js';
import type { SessionEvent } from '../events/session-event.js';
import type { RawEvent } from '../model.js';
import { SESSION_LOG_VERSION, type SessionRecord, type SessionStatus, type SessionStore, type StoreLease, type WriteOptions } from '../store/session-store.js';

/** How long appended envelopes wait to be written together (a flush writes them at once). */
const APPEND_BATCH_MS = 5;

/** Where a session's log ends when it is (re)opened. */
export interface LogEnd {
  readonly lastSeq: number;
  /** Provider event ids of the last envelopes, oldest first. */
  readonly recentIds: readonly string[];
}

/** What a checkpoint changes in the record. */
export interface RecordPatch {
  readonly status?: SessionStatus;
  readonly transcript?: readonly RawEvent[];
  readonly error?: { readonly code: string; readonly message: string };
}

/**
 * The session's side of its durable log: it takes the session in the store (`acquire`), writes
 * its record, appends every envelope (batched over a few milliseconds, one append in flight at a
 * time, in order), and makes them durable at each checkpoint (a tool record, a terminal). A store
 * failure ends the session through `onError` with the `store_error`; nothing is retried blindly.
 */
export class SessionJournal {
  private sessionId: string | undefined;
  private record: SessionRecord | undefined;
  private lease: StoreLease | undefined;
  private pending: SessionEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private sub: Subscription | undefined;
  /** The first append that failed: later flushes fail with it. */
  private failure: AgentRxError | undefined;

  constructor(
    private readonly store: SessionStore,
    private readonly providerId: string,
    private readonly onError: (error: AgentRxError) => void,
    /** True for a tool that may run again after a crash (declared idempotent): its start is not synced. */
    private readonly rerunnable: (toolName: string) => boolean = () => false,
  ) {}

  /** The record of `sessionId` if the store has one (a resume); a record that cannot be read fails. */
  load(sessionId: string): Promise<SessionRecord | undefined> {
    return this.store.load(sessionId);
  }

  /**
   * Takes `sessionId` for this process and writes its record (status `running`), then starts
   * appending `events$`. Returns where the log ends: its last `seq` (the session's numbering goes
   * on from there) and the provider event ids among its last `window` envelopes (so a host's
   * history listed on a resume is placed after them instead of ingested again).
   */
  async open(sessionId: string, threadId: string, prior: SessionRecord | undefined, events$: Observable<SessionEvent>, window: number): Promise<LogEnd> {
    const lease = await this.store.acquire(sessionId);
    let lastSeq: number;
    let recent: SessionEvent[];
    try {
      lastSeq = await this.store.lastSeq(sessionId);
      recent = prior && lastSeq > 0 ? await this.store.read(sessionId, Math.max(0, lastSeq - window), window) : [];
      // Checked before anything is written: a session that cannot be resumed is left as it was.
      if (prior) checkLedgerAgainstLog(prior, recent, this.rerunnable);
    } catch (e) {
      await lease.release().catch(() => undefined);
      throw e;
    }
    this.lease = lease;
    // Another process took the session over (a Redis lease expired): stop, writing nothing more.
    void lease.lost?.then((error) => {
      if (this.lease === lease) this.onError(error);
    });
    this.sessionId = sessionId;
    const now = Date.now();
    this.record = prior
      ? { ...prior, status: 'running', updatedAt: now }
      : { version: SESSION_LOG_VERSION, sessionId, provider: this.providerId, threadId, status: 'running', createdAt: now, updatedAt: now, ledger: [] };
    // Durable with the first synced write: a crash before it leaves the session as it was.
    await this.store.save(this.record, { sync: false });
    this.sub = events$.subscribe((env) => this.push(env));
    return { lastSeq, recentIds: recent.flatMap((e) => (e.source === 'provider' && e.id !== undefined ? [e.id] : [])) };
  }

  /**
   * Hands every envelope so far to the store: the store keeps a session's writes in order, so the
   * next synced write (a ledger transition, a checkpoint) makes them durable with it.
   */
  async handOver(): Promise<void> {
    if (this.sessionId === undefined) return;
    this.drain();
    await this.chain;
    if (this.failure) throw this.failure;
  }

  /** Makes every envelope so far durable. */
  async flush(): Promise<void> {
    await this.handOver();
    if (this.sessionId === undefined) return;
    const id = this.sessionId;
    await this.guard(() => this.store.flush(id));
  }

  /**
   * Saves the record with `patch` (its ledger as the store holds it), after every envelope so far.
   * `sync: false` when a synced write follows before anything depends on it (the record before
   * tools run: the `executing` entry of a non-idempotent tool, or a result recorded for a host
   * that keeps it, syncs it).
   */
  async checkpoint(patch: RecordPatch, options: WriteOptions = {}): Promise<void> {
    if (this.sessionId === undefined || this.record === undefined) return;
    await this.handOver();
    const stored = await this.guard(() => this.store.load(this.sessionId!));
    this.record = { ...this.record, ...(stored ? { ledger: stored.ledger } : {}), ...patch, updatedAt: Date.now() };
    const record = this.record;
    await this.guard(() => this.store.save(record, options));
  }

  /**
   * The session ended (with `failure`, or completed): final checkpoint (status `completed`,
   * `cancelled` or `failed` with the error, and the transcript), then release. Idempotent; failures
   * are reported, never thrown.
   */
  async close(failure: AgentRxError | undefined, transcript: readonly RawEvent[] | undefined): Promise<void> {
    this.sub?.unsubscribe();
    this.sub = undefined;
    const status: SessionStatus = !failure ? 'completed' : failure.code === 'cancelled' ? 'cancelled' : 'failed';
    try {
      await this.checkpoint({ status, transcript, ...(failure ? { error: { code: failure.code, message: failure.message } } : {}) });
    } catch (e) {
      this.onError(toAgentRxError(e, 'store_error'));
    }
    const lease = this.lease;
    this.lease = undefined;
    await lease?.release().catch((e: unknown) => this.onError(toAgentRxError(e, 'store_error')));
  }

  private push(env: SessionEvent): void {
    this.pending.push(env);
    if (this.timer !== undefined) return;
    // Events of a streamed answer arrive one network read at a time: batching them over a few
    // milliseconds makes one append of many instead of an append (and its promises) per event.
    this.timer = setTimeout(() => this.drain(), APPEND_BATCH_MS);
  }

  private drain(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0 || this.sessionId === undefined) return;
    const batch = this.pending;
    const id = this.sessionId;
    this.pending = [];
    this.chain = this.chain
      .then(() => (this.failure ? undefined : this.guard(() => this.store.append(id, batch))))
      .catch((e: unknown) => {
        this.failure = toAgentRxError(e, 'store_error');
        this.onError(this.failure);
      });
  }

  private async guard<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (e) {
      const err = toAgentRxError(e, 'store_error');
      throw err.code === 'store_error' ? err : new AgentRxError('store_error', `session '${this.sessionId}': ${err.message}`, undefined, { cause: e });
    }
  }
}

/**
 * A tool the log shows running to a result must be in the ledger: the `executing` entry of a tool
 * that is not idempotent is durable before the tool starts. A result without an entry means the
 * record and the log are not of the same history (a replaced or restored record): resuming would
 * run the tool again. (An idempotent tool's start is not synced, so a crash may lose it.)
 */
function checkLedgerAgainstLog(record: SessionRecord, recent: readonly SessionEvent[], rerunnable: (toolName: string) => boolean): void {
  const known = new Set(record.ledger.map((e) => e.toolUseId));
  for (const env of recent) {
    if (
      env.source !== 'agentrx' ||
      env.raw.type !== 'agentrx.tool_result' ||
      env.raw.replayed ||
      known.has(env.raw.toolUse.id) ||
      rerunnable(env.raw.toolUse.name)
    )
      continue;
    throw new AgentRxError(
      'store_error',
      `session '${record.sessionId}': the log shows tool use ${env.raw.toolUse.id} ('${env.raw.toolUse.name}') returning a result at seq ${env.seq}, but the record's ledger has no entry for it; the record and the log disagree (was the record replaced or restored from an older copy?). Resuming could run the tool again, so the session is not resumed`,
      { sessionId: record.sessionId, toolUseId: env.raw.toolUse.id, seq: env.seq },
    );
  }
}
