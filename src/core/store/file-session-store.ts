import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { defer, type Observable } from 'rxjs';
import { AgentRxError } from '../errors.js';
import type { SessionEvent } from '../events/session-event.js';
import type { LedgerEntry, LedgerState } from '../tools/tool-ledger.js';
import { followLog } from './follow-log.js';
import { ownerState, readOwner, takeLock } from './owner-lock.js';
import { selectForPrune, type PrunableSessionStore, type PruneOptions } from './retention.js';
import { SessionLedgerFile } from './session-ledger-file.js';
import { SessionLogFile } from './session-log-file.js';
import { writeRecord } from './session-record-file.js';
import type { SessionRecord, SessionStore, StoreLease } from './session-store.js';
import { storeError } from './store-error.js';

/** Tuning of the file engine; the defaults suit a server and the CLI alike. */
export interface FileSessionStoreOptions {
  /** Buffered appends (bytes of JSON) that make `append` write before the next `flush`. Default 64 KiB. */
  readonly bufferBytes?: number;
  /** How often a `tail` looks for appends made by another process (only while subscribed). Default 100 ms. */
  readonly pollMs?: number;
  /**
   * Session logs whose line offsets stay in memory, and held sessions whose record and ledger stay
   * in memory with `ledger.jsonl` open; idle ones beyond it are dropped (re-read on use). Default 1,000.
   */
  readonly maxOpenLogs?: number;
  /**
   * `save` of a held session folds `ledger.jsonl` into `record.json` (an extra folder fsync) once
   * the file holds this many bytes, or when the saved ledger is not the stored one. 0: every save
   * with transitions since the last one. Default 64 KiB.
   */
  readonly ledgerCompactBytes?: number;
}

const RECORD = 'record.json';
const LOG = 'log.jsonl';
const LEDGER = 'ledger.jsonl';
const LOCK = 'owner.lock';

/**
 * The embedded engine: a folder per session under `dir` (`encodeURIComponent(sessionId)`) holding
 * `record.json` (written atomically: temp file, fsync, rename, then an fsync of the folder when
 * needed — see `SessionLedgerFile.save`), `ledger.jsonl` (the ledger transitions since the last
 * save, one line each: one write and one fdatasync per `transition`; `load` merges them, `save`
 * folds them into the record and empties the file), `log.jsonl` (a `{"version":2}` header line,
 * then one envelope per line) and, while a process holds the session, `owner.lock`. Appends are
 * buffered per session and written in one write on `flush` (which fdatasyncs) or once
 * `bufferBytes` are buffered. While this instance holds a session (`acquire`), its record and
 * ledger stay in memory (it is their only writer); otherwise every call reads the files. A torn
 * last line (a crash mid-write) of either `.jsonl` is cut and reported through `onRepair`, as is
 * the takeover of a dead owner's lock; anything else wrong with a file is a `store_error` naming it.
 */
export class FileSessionStore implements SessionStore, PrunableSessionStore {
  private readonly logs = new Map<string, SessionLogFile>();
  /** Record and ledger views of the sessions this instance holds (filled on first use). */
  private readonly ledgers = new Map<string, SessionLedgerFile>();
  /** Sessions this instance holds (acquired, not released). */
  private readonly held = new Set<string>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly bufferBytes: number;
  private readonly pollMs: number;
  private readonly maxOpenLogs: number;
  private readonly ledgerCompactBytes: number;

  /**
   * @param dir the store's directory (created on the first write).
   * @param onRepair called (synchronously, must not throw) when the store repaired something:
   *   `file` is the path, `what` says what was done.
   */
  constructor(
    private readonly dir: string,
    private readonly onRepair: (file: string, what: string) => void = () => undefined,
    options: FileSessionStoreOptions = {},
  ) {
    this.bufferBytes = options.bufferBytes ?? 64 * 1024;
    this.pollMs = options.pollMs ?? 100;
    this.maxOpenLogs = options.maxOpenLogs ?? 1_000;
    this.ledgerCompactBytes = options.ledgerCompactBytes ?? 64 * 1024;
  }

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    return this.withLedger(sessionId, async (ledger) => ledger.record);
  }

  async save(record: SessionRecord): Promise<void> {
    const { sessionId } = record;
    if (!this.held.has(sessionId)) {
      // Not held: no view to tell what changed; the full write, then the stale lines are dropped.
      const folder = this.folderOf(sessionId);
      return this.serial(`r:${sessionId}`, async () => {
        await writeRecord(join(folder, RECORD), record, { epoch: randomUUID() });
        await SessionLedgerFile.compact(join(folder, LEDGER));
      });
    }
    return this.withLedger(sessionId, (ledger) => ledger.save(record, this.ledgerCompactBytes));
  }

  async delete(sessionId: string): Promise<void> {
    const folder = this.folderOf(sessionId);
    return this.serial(`r:${sessionId}`, () =>
      this.serial(`l:${sessionId}`, async () => {
        await this.dropLedger(sessionId);
        this.held.delete(sessionId); // the lock goes with the folder
        try {
          await rm(folder, { recursive: true, force: true });
        } catch (e) {
          throw storeError(folder, `cannot delete session '${sessionId}'`, e);
        }
        this.logs.get(sessionId)?.reset();
      }),
    );
  }

  async list(): Promise<SessionRecord[]> {
    const records: SessionRecord[] = [];
    for (const sessionId of await this.sessionIds()) {
      const record = await this.load(sessionId);
      if (record) records.push(record);
    }
    return records.sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async transition(sessionId: string, expected: LedgerState | undefined, entry: LedgerEntry): Promise<boolean> {
    return this.withLedger(sessionId, (ledger) => ledger.transition(expected, entry));
  }

  async append(sessionId: string, envelopes: readonly SessionEvent[]): Promise<void> {
    const log = this.logOf(sessionId);
    return this.serial(`l:${sessionId}`, async () => {
      if (!log.isLoaded) await log.refresh();
      await log.append(envelopes);
    });
  }

  async flush(sessionId: string): Promise<void> {
    const log = this.logOf(sessionId);
    return this.serial(`l:${sessionId}`, async () => {
      if (!log.isLoaded) await log.refresh();
      await log.write(true);
    });
  }

  read(sessionId: string, afterSeq: number, limit = 1_000): Promise<SessionEvent[]> {
    return this.page(sessionId, afterSeq, limit, true);
  }

  async lastSeq(sessionId: string): Promise<number> {
    const log = this.logOf(sessionId);
    return this.serial(`l:${sessionId}`, async () => {
      await log.refresh();
      return log.lastSeq;
    });
  }

  tail(sessionId: string, afterSeq: number): Observable<SessionEvent> {
    return defer(() =>
      // Appends by other processes (or other instances on the same dir) are seen by polling the file size.
      followLog(afterSeq, (after, refresh) => this.page(sessionId, after, 1_000, refresh), this.logOf(sessionId).appended, this.pollMs),
    );
  }

  async acquire(sessionId: string): Promise<StoreLease> {
    const folder = this.folderOf(sessionId);
    try {
      await mkdir(folder, { recursive: true });
    } catch (e) {
      throw storeError(folder, `cannot create the folder of session '${sessionId}'`, e);
    }
    const lockFile = join(folder, LOCK);
    const unlock = await takeLock(lockFile, sessionId, (dead) =>
      this.onRepair(lockFile, `took over session '${sessionId}' from process ${dead.pid}, which is no longer running`),
    );
    this.held.add(sessionId);
    const release = async (): Promise<void> => {
      this.held.delete(sessionId);
      try {
        await this.serial(`r:${sessionId}`, () => this.dropLedger(sessionId));
      } finally {
        await unlock();
      }
    };
    // Another process may have written the log while it held the session: read it afresh.
    const log = this.logs.get(sessionId);
    if (log) {
      await this.serial(`l:${sessionId}`, async () => {
        if (!log.hasPending) log.reset();
      });
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        try {
          await this.flush(sessionId);
        } finally {
          await release();
        }
      },
    };
  }

  /**
   * Deletes sessions by age and count (see `PruneOptions`), never one held by a live process or
   * `running`. A session whose record cannot be read is kept and reported through `onRepair`.
   * A folder without a record (a session that never saved one) is aged by the folder's mtime.
   */
  async prune(options: PruneOptions): Promise<string[]> {
    if (options.maxAgeMs === undefined && options.maxSessions === undefined) return [];
    const sessions: { sessionId: string; updatedAt: number; status?: string }[] = [];
    for (const sessionId of await this.sessionIds()) {
      try {
        const record = await this.load(sessionId);
        const updatedAt = record?.updatedAt ?? (await stat(this.folderOf(sessionId))).mtimeMs;
        sessions.push({ sessionId, updatedAt, status: record?.status });
      } catch (e) {
        this.onRepair(join(this.folderOf(sessionId), RECORD), `kept by retention: ${(e as Error).message}`);
      }
    }
    const running = new Set(sessions.filter((s) => s.status === 'running').map((s) => s.sessionId));
    const deleted: string[] = [];
    for (const sessionId of selectForPrune(sessions, options)) {
      if (running.has(sessionId) || (await this.isHeld(sessionId))) continue;
      let lease: StoreLease;
      try {
        lease = await this.acquire(sessionId); // so no process takes it while it is deleted
      } catch {
        continue;
      }
      const record = await this.load(sessionId).catch(() => undefined);
      if (record?.status === 'running') {
        await lease.release();
        continue;
      }
      await this.delete(sessionId);
      deleted.push(sessionId);
    }
    return deleted;
  }

  private async isHeld(sessionId: string): Promise<boolean> {
    const owner = await readOwner(join(this.folderOf(sessionId), LOCK)).catch(() => 'unreadable' as const);
    return owner === 'unreadable' || (owner !== undefined && ownerState(owner) !== 'dead');
  }

  /**
   * Runs `fn` on the session's record and ledger view, under the session's record mutex: the
   * cached one of a held session (read on first use), else one read from the files for this call.
   * A call that fails drops the cached view (the next one reads the files again).
   */
  private withLedger<T>(sessionId: string, fn: (ledger: SessionLedgerFile) => Promise<T>): Promise<T> {
    const folder = this.folderOf(sessionId);
    return this.serial(`r:${sessionId}`, async () => {
      const held = this.held.has(sessionId);
      let ledger = held ? this.ledgers.get(sessionId) : undefined;
      if (ledger) {
        // Most recently used last, so eviction drops the ones used longest ago.
        this.ledgers.delete(sessionId);
        this.ledgers.set(sessionId, ledger);
      } else {
        const hooks = {
          foreignOwner: async () => {
            const owner = await readOwner(join(folder, LOCK)).catch(() => undefined);
            return owner !== undefined && ownerState(owner) === 'live';
          },
          onRepair: this.onRepair,
        };
        ledger = await SessionLedgerFile.read(join(folder, RECORD), join(folder, LEDGER), sessionId, hooks, held);
        if (held) {
          this.ledgers.set(sessionId, ledger);
          if (this.ledgers.size > this.maxOpenLogs) this.evictLedgers();
        }
      }
      try {
        return await fn(ledger);
      } catch (e) {
        if (this.ledgers.get(sessionId) === ledger) this.ledgers.delete(sessionId);
        await ledger.close();
        throw e;
      } finally {
        if (this.ledgers.get(sessionId) !== ledger) await ledger.close();
      }
    });
  }

  /** Forgets the session's cached view and closes its `ledger.jsonl` (call under the record mutex). */
  private async dropLedger(sessionId: string): Promise<void> {
    const ledger = this.ledgers.get(sessionId);
    this.ledgers.delete(sessionId);
    await ledger?.close();
  }

  /** Drops the views used longest ago beyond `maxOpenLogs` (not one in use: its mutex is busy). */
  private evictLedgers(): void {
    for (const [id, ledger] of this.ledgers) {
      if (this.ledgers.size <= this.maxOpenLogs) return;
      if (this.queues.has(`r:${id}`)) continue;
      this.ledgers.delete(id);
      void ledger.close();
    }
  }

  /** One page of the log, under the session's mutex; `refresh` looks at the file for other writers' appends first. */
  private async page(sessionId: string, afterSeq: number, limit: number, refresh: boolean): Promise<SessionEvent[]> {
    const log = this.logOf(sessionId);
    return this.serial(`l:${sessionId}`, async () => {
      if (refresh || !log.isLoaded) await log.refresh();
      return log.read(afterSeq, limit);
    });
  }

  /** The session ids that have a folder in `dir`. */
  private async sessionIds(): Promise<string[]> {
    let entries;
    try {
      entries = await readdir(this.dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw storeError(this.dir, 'cannot list the session store', e);
    }
    const ids: string[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      try {
        ids.push(decodeURIComponent(entry.name));
      } catch {
        // Not a folder this store made (its name is not URI-encoded).
      }
    }
    return ids;
  }

  private folderOf(sessionId: string): string {
    if (sessionId === '' || sessionId === '.' || sessionId === '..') {
      throw new AgentRxError('store_error', `invalid session id ${JSON.stringify(sessionId)} for the file store in ${this.dir}`, { sessionId });
    }
    return join(this.dir, encodeURIComponent(sessionId));
  }

  private logOf(sessionId: string): SessionLogFile {
    let log = this.logs.get(sessionId);
    if (log) {
      // Most recently used last, so eviction drops the idle ones used longest ago.
      this.logs.delete(sessionId);
      this.logs.set(sessionId, log);
      return log;
    }
    const file = join(this.folderOf(sessionId), LOG);
    log = new SessionLogFile(file, {
      foreignOwner: async () => {
        const owner = await readOwner(join(this.folderOf(sessionId), LOCK)).catch(() => undefined);
        return owner !== undefined && ownerState(owner) === 'live';
      },
      onRepair: this.onRepair,
    }, this.bufferBytes);
    this.logs.set(sessionId, log);
    if (this.logs.size > this.maxOpenLogs) this.evict();
    return log;
  }

  private evict(): void {
    for (const [id, log] of this.logs) {
      if (this.logs.size <= this.maxOpenLogs) return;
      if (!log.hasPending && !log.appended.observed && !this.queues.has(`l:${id}`)) this.logs.delete(id);
    }
  }

  /** Runs `fn` after every earlier call with the same key (one session's log, or its record). */
  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.queues.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return run;
  }
}
