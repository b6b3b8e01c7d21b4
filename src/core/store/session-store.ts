import type { Observable } from 'rxjs';
import type { AgentRxError } from '../errors.js';
import type { SessionEvent } from '../events/session-event.js';
import type { RawEvent } from '../model.js';
import type { LedgerEntry, LedgerState } from '../tools/tool-ledger.js';
import type { PruneOptions } from './retention.js';

/** The version of the records and logs this build writes; a store refuses newer ones with `store_error`. */
export const SESSION_LOG_VERSION = 2;

/** Where a session stands, as its record says. */
export type SessionStatus = 'running' | 'idle' | 'completed' | 'failed' | 'cancelled';

/**
 * Durable state of one session besides its log: enough to resume it in a new process (Local
 * included) without re-running a tool whose result was recorded.
 */
export interface SessionRecord {
  readonly version: typeof SESSION_LOG_VERSION;
  /** The store key: the provider-side session id (or the id agentrx gave a host without one). */
  readonly sessionId: string;
  readonly provider: string;
  /** The AG-UI thread id of the session's runs. */
  readonly threadId: string;
  readonly status: SessionStatus;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The at-most-once tool ledger (entries change only through `transition`, or whole in `save`). */
  readonly ledger: readonly LedgerEntry[];
  /** The host's history where it lives with the client (Local): `open` restores it on a resume. */
  readonly transcript?: readonly RawEvent[];
  /** Why the session failed (status `failed`/`cancelled`). */
  readonly error?: { readonly code: string; readonly message: string };
}

/** How a write becomes durable. */
export interface WriteOptions {
  /**
   * False: the write may become durable only with the session's next synced write (a crash
   * before that may lose it, never tear it). Default true: durable when the call resolves.
   */
  readonly sync?: boolean;
}

/** A session taken by one process: released when the session closes. */
export interface StoreLease {
  release(): Promise<void>;
  /**
   * Resolves (never rejects) with a `store_error` once this process is known to have lost the
   * session: another owner took it over, or the lease could not be renewed within its expiry.
   * Never settles while held or after `release`. From then on every write of this process for the
   * session is refused; the Session stops without further writes and reports the error. Absent
   * for engines whose leases cannot be lost to another live owner (memory, files).
   */
  readonly lost?: Promise<AgentRxError>;
}

/**
 * Persists sessions: a record, a ledger and an append-only log of envelopes per session, whose
 * `seq` is the log's own offset (1-based, gap-free). One contract, several engines (memory, file,
 * Redis, each registered with `bindStore`); `test/core/store/session-store.conformance.ts` holds
 * what every engine must do, and `store-engines.spec.ts` runs it over every registered engine.
 * Every failure is an AgentRxError `store_error` naming the session (and the file, for files).
 *
 * Ordering: the writes of one session (`save`, `transition`, `append`) take effect in call order,
 * and a synced write (`flush`, or `save`/`transition` without `sync: false`) makes every earlier
 * write of that session durable too. So a caller that appends, then transitions, needs one sync.
 */
export const SessionStore = Symbol('SessionStore');

export interface SessionStore {
  /**
   * False for an engine whose sessions do not outlive the process (memory): the Session then skips
   * the checkpoints that exist only for crash recovery (the record before tools run). Default true.
   */
  readonly durable?: boolean;
  /**
   * False for an engine that forgets a session once its lease is released and no `tail` follows
   * it (the memory store with `memoryKeep: 'none'`): a closed session cannot be loaded, read,
   * resumed or replayed. Default true.
   */
  readonly keepsClosed?: boolean;
  /** The record, or undefined if there is none. A record that cannot be read is a `store_error`, never "none". */
  load(sessionId: string): Promise<SessionRecord | undefined>;
  /** Writes the whole record atomically (its ledger included). */
  save(record: SessionRecord, options?: WriteOptions): Promise<void>;
  /** Removes the record and the log. */
  delete(sessionId: string): Promise<void>;
  /** Every record, newest `updatedAt` first. */
  list(): Promise<SessionRecord[]>;
  /**
   * The id of the session whose record was last saved with `threadId` (a thread's session, as an
   * AG-UI endpoint looks it up), without reading every record; undefined when none is stored.
   * Optional: without it, callers fall back to `list()`.
   */
  findByThread?(threadId: string): Promise<string | undefined>;
  /**
   * Compare-and-set of one ledger entry: writes `entry` only if the entry for `entry.toolUseId` is
   * now in state `expected` (undefined: absent). Returns false, changing nothing, otherwise.
   * Callers pass `sync: false` where losing the write is harmless: `posted` (a resume re-posts the
   * recorded result) and the `executing` entry of an idempotent tool (a resume may re-run it).
   */
  transition(sessionId: string, expected: LedgerState | undefined, entry: LedgerEntry, options?: WriteOptions): Promise<boolean>;
  /**
   * Appends envelopes to the log, idempotent by `seq`: an envelope whose `seq` the log already
   * holds is skipped; one that would leave a gap (`seq` > last + 1) is a `store_error`. Durable
   * only after `flush` (an engine may buffer).
   */
  append(sessionId: string, envelopes: readonly SessionEvent[]): Promise<void>;
  /** Makes every append so far durable (the file engine: fsync). */
  flush(sessionId: string): Promise<void>;
  /** Up to `limit` envelopes with `seq` > `afterSeq`, in order (a page; default limit 1,000). */
  read(sessionId: string, afterSeq: number, limit?: number): Promise<SessionEvent[]>;
  /** The highest `seq` in the log (0 when empty or absent). */
  lastSeq(sessionId: string): Promise<number>;
  /**
   * Replays the log after `afterSeq`, then follows new appends (made by any process sharing the
   * store, for engines that can see them), in `seq` order, without gaps or repeats. Never
   * completes on its own; unsubscribe to stop. Errors with `store_error`.
   */
  tail(sessionId: string, afterSeq: number): Observable<SessionEvent>;
  /**
   * Takes the session for this process. A session held by another live owner is refused with
   * `store_error` naming the owner; an owner that died is taken over.
   */
  acquire(sessionId: string): Promise<StoreLease>;
  /**
   * Deletes sessions past the retention limits (see `PruneOptions`), never one that is running or
   * held; resolves with the deleted ids. Optional: without it, `store.retention` does nothing.
   */
  prune?(options: PruneOptions): Promise<string[]>;
  /**
   * Releases what the engine holds open (the Redis engine: its connections). Optional; called once
   * by whoever opened the store (the container, when the instance stops); later calls fail.
   */
  close?(): Promise<void>;
}
