import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { defer, type Observable } from 'rxjs';
import { AgentRxError } from '../errors.js';
import type { SessionEvent } from '../events/session-event.js';
import type { LedgerEntry, LedgerState } from '../tools/tool-ledger.js';
import { followLog } from './follow-log.js';
import { ownerState, readOwner, takeLock } from './owner-lock.js';
import { selectForPrune, type PrunableSessionStore, type PruneOptions } from './retention.js';
import { SessionLogFile } from './session-log-file.js';
import { readRecord, writeRecord } from './session-record-file.js';
import type { SessionRecord, SessionStore, StoreLease } from './session-store.js';
import { storeError } from './store-error.js';

/** Tuning of the file engine; the defaults suit a server and the CLI alike. */
export interface FileSessionStoreOptions {
  /** Buffered appends (bytes of JSON) that make `append` write before the next `flush`. Default 64 KiB. */
  readonly bufferBytes?: number;
  /** How often a `tail` looks for appends made by another process (only while subscribed). Default 100 ms. */
  readonly pollMs?: number;
  /** Session logs whose line offsets stay in memory; idle ones beyond it are dropped (re-read on use). Default 1,000. */
  readonly maxOpenLogs?: number;
}

const RECORD = 'record.json';
const LOG = 'log.jsonl';
const LOCK = 'owner.lock';

/**
 * The embedded engine: a folder per session under `dir` (`encodeURIComponent(sessionId)`) holding
 * `record.json` (written atomically: temp file, fsync, rename, fsync of the folder), `log.jsonl`
 * (a `{"version":2}` header line, then one envelope per line) and, while a process holds the
 * session, `owner.lock`. Appends are buffered per session and written in one write on `flush`
 * (which fsyncs) or once `bufferBytes` are buffered. A torn last line (a crash mid-write) is cut
 * and reported through `onRepair`, as is the takeover of a dead owner's lock; anything else wrong
 * with a file is a `store_error` naming it.
 */
export class FileSessionStore implements SessionStore, PrunableSessionStore {
  private readonly logs = new Map<string, SessionLogFile>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly bufferBytes: number;
  private readonly pollMs: number;
  private readonly maxOpenLogs: number;

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
  }

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    return readRecord(join(this.folderOf(sessionId), RECORD), sessionId);
  }

  async save(record: SessionRecord): Promise<void> {
    return this.serial(`r:${record.sessionId}`, () => this.write(record));
  }

  async delete(sessionId: string): Promise<void> {
    const folder = this.folderOf(sessionId);
    return this.serial(`l:${sessionId}`, async () => {
      try {
        await rm(folder, { recursive: true, force: true });
      } catch (e) {
        throw storeError(folder, `cannot delete session '${sessionId}'`, e);
      }
      this.logs.get(sessionId)?.reset();
    });
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
    return this.serial(`r:${sessionId}`, async () => {
      const record = await this.load(sessionId);
      if (!record) throw new AgentRxError('store_error', `session '${sessionId}' has no record to hold its ledger; save the record first`, { sessionId });
      const current = record.ledger.find((e) => e.toolUseId === entry.toolUseId);
      if (current?.state !== expected) return false;
      const ledger = current ? record.ledger.map((e) => (e === current ? entry : e)) : [...record.ledger, entry];
      await this.write({ ...record, ledger, updatedAt: Date.now() });
      return true;
    });
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
    const release = await takeLock(lockFile, sessionId, (dead) =>
      this.onRepair(lockFile, `took over session '${sessionId}' from process ${dead.pid}, which is no longer running`),
    );
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

  private write(record: SessionRecord): Promise<void> {
    return writeRecord(join(this.folderOf(record.sessionId), RECORD), record);
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
