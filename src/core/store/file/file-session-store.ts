import { closeSync, fstatSync, mkdirSync, openSync } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { defer, type Observable } from '../../util/rxjs.js';
import { AgentRxError } from '../../errors.js';
import type { SessionEvent } from '../../events/session-event.js';
import type { LedgerEntry, LedgerState } from '../../tools/tool-ledger.js';
import { followLog } from '../follow-log.js';
import { transitionLine } from './journal-lines.js';
import { lockHeld, OwnerFile, ownerState, readOwner, takeLock } from './owner-lock.js';
import { selectForPrune, type PrunableSessionStore, type PruneOptions } from '../retention.js';
import { FolderSyncs, KeyedQueue, type NewName } from './journal-io.js';
import { fileStoreTuning, type FileSessionStoreOptions } from './file-session-store-options.js';
import { listRecords } from './list-records.js';
import { SessionJournalFile } from './session-journal-file.js';
import { quickRecord, writeSnapshot } from './session-record-file.js';
import type { SessionRecord, SessionStore, StoreLease, WriteOptions } from '../session-store.js';
import { folderOf, parentsToSync, sessionIds, ThreadIndex } from './session-folder.js';
import { storeError } from './store-error.js';

export type { FileSessionStoreOptions } from './file-session-store-options.js';

const JOURNAL = 'journal.jsonl';
const SNAPSHOT = 'record.json';
const LOCK = 'owner.lock';

/**
 * The embedded engine: a folder per session under `dir` (`encodeURIComponent(sessionId)`) holding
 * one append-only `journal.jsonl`: a header line (layout version and session id), then one JSON
 * object per line — an envelope of the log, a ledger transition, or a record save holding only
 * what changed (a transcript that extends the previous one is written as its new items). Loading
 * folds the lines. While a process holds the session, `owner.lock` names it (a hard link to the
 * process's owner file in `%owners`, see `OwnerFile`). `list` and `prune`
 * read a record the quick way (`quickRecord`): a large journal's `record.json` snapshot, written
 * at release, or a small journal's text without parsing its envelopes.
 *
 * Durability: a held session's writes go through one append fd as synchronous page-cache copies,
 * in call order (buffered appends are written ahead of the next write of any kind, so a
 * transition lands after every envelope appended before it). A synced write (`flush`, and
 * `save`/`transition` unless `sync: false`) resolves once an fdatasync that started after it was
 * written has completed; concurrent synced writes share one (group commit), and each makes every
 * earlier write of the session durable; so does each folder fsync (the folders a new session
 * created, at its first synced write: `FolderSyncs`). A failed write is cut back to the last whole
 * line and is a `store_error` naming the file. A session not held is read afresh for each call
 * (another process may write it) and written with a file opened for the call.
 *
 * A torn last line (a crash mid-write) is cut and reported through `onRepair`, as is the takeover
 * of a dead owner's lock; anything else wrong with a file is a `store_error` naming it and the line.
 */
export class FileSessionStore implements SessionStore, PrunableSessionStore {
  private readonly threads: ThreadIndex;
  private readonly journals = new Map<string, SessionJournalFile>();
  /** Sessions this instance holds (acquired, not released). */
  private readonly held = new Set<string>();
  /** Each session's calls, one at a time in call order. */
  private readonly queues = new KeyedQueue();
  private readonly options: Required<FileSessionStoreOptions>;
  private readonly folderSyncs: FolderSyncs;
  /** This process's owner file in the store, which each session lock links (see `OwnerFile`). */
  private readonly owners: OwnerFile;

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
    this.options = fileStoreTuning(options);
    this.folderSyncs = new FolderSyncs(this.options.io);
    this.threads = new ThreadIndex(dir);
    this.owners = new OwnerFile(join(dir, '%owners'));
  }

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    return this.queues.run(sessionId, async () => (await this.view(sessionId)).fold.record);
  }

  async save(record: SessionRecord, options: WriteOptions = {}): Promise<void> {
    const { sessionId } = record;
    const sync = options.sync !== false;
    const journal = await this.queues.run(sessionId, async () => {
      const j = await this.view(sessionId);
      await this.commit(sessionId, j, j.fold.saveLine(record).text, sync);
      j.fold.applySave(record);
      return j;
    });
    await this.threads.note(record);
    if (sync) await this.whenDurable(sessionId, journal);
  }

  async delete(sessionId: string): Promise<void> {
    const folder = folderOf(this.dir, sessionId);
    return this.queues.run(sessionId, async () => {
      const j = this.journals.get(sessionId);
      await j?.settled();
      const threadId = (await this.view(sessionId).catch(() => undefined))?.fold.record?.threadId;
      this.closeFd(j);
      this.held.delete(sessionId); // the lock goes with the folder
      try {
        await rm(folder, { recursive: true, force: true });
      } catch (e) {
        throw storeError(folder, `cannot delete session '${sessionId}'`, e);
      }
      j?.reset();
      if (threadId !== undefined && threadId !== sessionId) await this.threads.forget(threadId, sessionId);
    });
  }

  /**
   * Reads the thread's index entry (`%threads/<sha256 of the thread id>`, written when a record
   * with that thread id is saved) and checks it against the session's record.
   */
  async findByThread(threadId: string): Promise<string | undefined> {
    const sessionId = await this.threads.find(threadId);
    if (sessionId === undefined) return undefined;
    const record = await this.load(sessionId).catch(() => undefined);
    return record?.threadId === threadId ? sessionId : undefined;
  }

  async list(): Promise<SessionRecord[]> {
    return listRecords(
      await sessionIds(this.dir),
      { summary: (id) => this.summary(id), load: (id) => this.load(id), fileOf: (id) => join(folderOf(this.dir, id), JOURNAL) },
      this.onRepair,
    );
  }

  async transition(sessionId: string, expected: LedgerState | undefined, entry: LedgerEntry, options: WriteOptions = {}): Promise<boolean> {
    const sync = options.sync !== false;
    const journal = await this.queues.run(sessionId, async () => {
      const j = await this.view(sessionId);
      if (!j.fold.hasRecord)
        throw new AgentRxError('store_error', `session '${sessionId}' has no record to hold its ledger; save the record first (${j.file})`, {
          sessionId,
          file: j.file,
        });
      if (j.fold.entry(entry.toolUseId)?.state !== expected) return undefined;
      const at = Date.now();
      await this.commit(sessionId, j, transitionLine(entry, at), sync);
      j.fold.applyTransition(entry, at);
      return j;
    });
    if (!journal) return false;
    if (sync) await this.whenDurable(sessionId, journal);
    return true;
  }

  async append(sessionId: string, envelopes: readonly SessionEvent[]): Promise<void> {
    return this.queues.run(sessionId, async () => {
      const j = await this.view(sessionId);
      if (j.append(envelopes)) await this.commit(sessionId, j, '', false);
    });
  }

  async flush(sessionId: string): Promise<void> {
    const journal = await this.queues.run(sessionId, async () => {
      const j = await this.view(sessionId);
      await this.commit(sessionId, j, '', true);
      return j;
    });
    await this.whenDurable(sessionId, journal);
  }

  read(sessionId: string, afterSeq: number, limit = 1_000): Promise<SessionEvent[]> {
    return this.queues.run(sessionId, async () => (await this.view(sessionId)).read(afterSeq, limit));
  }

  async lastSeq(sessionId: string): Promise<number> {
    return this.queues.run(sessionId, async () => (await this.view(sessionId)).lastSeq);
  }

  tail(sessionId: string, afterSeq: number): Observable<SessionEvent> {
    return defer(() =>
      // Appends by other processes (or other instances on the same dir) are seen by polling the file size.
      followLog(afterSeq, (after) => this.read(sessionId, after, 1_000), this.journalOf(sessionId).appended, this.options.pollMs),
    );
  }

  async acquire(sessionId: string): Promise<StoreLease> {
    const folder = folderOf(this.dir, sessionId);
    let created: string | undefined;
    try {
      created = mkdirSync(folder, { recursive: true });
    } catch (e) {
      throw storeError(folder, `cannot create the folder of session '${sessionId}'`, e);
    }
    const newNames = parentsToSync(folder, created).map((parent) => this.folderSyncs.created(parent));
    const lockFile = join(folder, LOCK);
    const unlock = await takeLock(
      lockFile,
      sessionId,
      (dead) => this.onRepair(lockFile, `took over session '${sessionId}' from process ${dead.pid}, which is no longer running`),
      this.owners,
    );
    try {
      await this.queues.run(sessionId, async () => {
        const j = this.journalOf(sessionId);
        // Another process may have written the journal while it held the session: read it afresh.
        j.reset(true);
        j.newFolder = created !== undefined;
        this.held.add(sessionId);
        await this.view(sessionId);
        j.catchUp();
        j.newNames.push(...newNames);
      });
    } catch (e) {
      this.held.delete(sessionId);
      this.closeFd(this.journals.get(sessionId));
      await unlock();
      throw e;
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        try {
          await this.flush(sessionId);
          await this.queues.run(sessionId, async () => this.snapshot(sessionId));
        } finally {
          this.held.delete(sessionId);
          await this.queues.run(sessionId, async () => this.closeFd(this.journals.get(sessionId)));
          await unlock();
        }
      },
    };
  }

  /**
   * Deletes sessions by age and count (see `PruneOptions`), never one held by a live process or
   * `running`. A session whose journal cannot be read is kept and reported through `onRepair`.
   * A folder without a record (a session that never saved one) is aged by the folder's mtime.
   */
  async prune(options: PruneOptions): Promise<string[]> {
    if (options.maxAgeMs === undefined && options.maxSessions === undefined) return [];
    const sessions: { sessionId: string; updatedAt: number; status?: string }[] = [];
    for (const sessionId of await sessionIds(this.dir)) {
      try {
        const record = await this.summary(sessionId);
        const updatedAt = record?.updatedAt ?? (await stat(folderOf(this.dir, sessionId))).mtimeMs;
        sessions.push({ sessionId, updatedAt, status: record?.status });
      } catch (e) {
        this.onRepair(join(folderOf(this.dir, sessionId), JOURNAL), `kept by retention: ${(e as Error).message}`);
      }
    }
    const running = new Set(sessions.filter((s) => s.status === 'running').map((s) => s.sessionId));
    const deleted: string[] = [];
    for (const sessionId of selectForPrune(sessions, options)) {
      if (running.has(sessionId) || (await lockHeld(join(folderOf(this.dir, sessionId), LOCK)))) continue;
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

  /**
   * The record of a session for `list`/`prune`: the folded one of a held session, else a quick
   * read (`quickRecord`: the snapshot, or a small journal's text), else the journal read as `load` does.
   */
  private async summary(sessionId: string): Promise<SessionRecord | undefined> {
    const folder = folderOf(this.dir, sessionId);
    const quick = this.held.has(sessionId)
      ? undefined
      : await quickRecord(join(folder, JOURNAL), join(folder, SNAPSHOT), sessionId, this.options.snapshotBytes);
    return quick ? quick.record : this.load(sessionId);
  }

  /** Writes the `record.json` snapshot of a held session with a large journal (best effort: it is only a shortcut for `list`). */
  private snapshot(sessionId: string): void {
    const j = this.journals.get(sessionId);
    if (!j || !this.held.has(sessionId) || j.written < this.options.snapshotBytes) return;
    writeSnapshot(join(folderOf(this.dir, sessionId), SNAPSHOT), { journalSize: j.written, record: j.fold.record ?? null });
  }

  /** The session's journal, up to date (under the session's mutex): a held one as this instance wrote it, another refreshed from the file. */
  private async view(sessionId: string): Promise<SessionJournalFile> {
    const j = this.journalOf(sessionId);
    const held = this.held.has(sessionId);
    if (!held || !j.isLoaded) await j.refresh(held);
    return j;
  }

  /**
   * Writes the buffered envelopes and `text` (call under the session's mutex). Held: through its
   * fd (the caller then awaits `durable` outside the mutex, so concurrent writes share a sync).
   * Not held: through a file opened for the call, synced before it is closed when `sync`.
   */
  private async commit(sessionId: string, j: SessionJournalFile, text: string, sync: boolean): Promise<void> {
    if (text === '' && !j.hasPending && !(sync && j.unsynced)) return;
    if (this.held.has(sessionId)) {
      if (j.fd === undefined) {
        try {
          j.fd = openSync(j.file, 'a'); // opened at the first write: a session that writes nothing leaves no file
          if (j.written === 0) j.newNames.push(this.folderSyncs.created(dirname(j.file))); // its name is durable once its folder is synced
        } catch (e) {
          throw storeError(j.file, `cannot open the journal of session '${sessionId}'`, e);
        }
      }
      return j.write(j.fd, text);
    }
    const folder = folderOf(this.dir, sessionId);
    let fd: number;
    try {
      if (mkdirSync(folder, { recursive: true }) !== undefined) j.newNames.push(this.folderSyncs.created(dirname(folder)));
      fd = openSync(j.file, 'a');
    } catch (e) {
      throw storeError(j.file, `cannot open the journal of session '${sessionId}'`, e);
    }
    try {
      const st = fstatSync(fd);
      if (st.isFile() && st.size !== j.written) {
        await j.refresh(false); // another instance wrote it since
        if (fstatSync(fd).size !== j.written) throw storeError(j.file, `the journal of session '${sessionId}' is being written by another process`);
      }
      j.catchUp();
      if (j.written === 0) j.newNames.push(this.folderSyncs.created(folder));
      j.write(fd, text);
      if (sync) await j.durable(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Resolves once everything written to a held session's journal is durable (shared sync). */
  private async whenDurable(sessionId: string, j: SessionJournalFile): Promise<void> {
    if (this.held.has(sessionId)) {
      if (j.fd !== undefined) await j.durable(j.fd);
    } else if (j.unsynced) await this.queues.run(sessionId, () => this.commit(sessionId, j, '', true));
  }

  private closeFd(j: SessionJournalFile | undefined): void {
    if (j?.fd === undefined) return;
    const fd = j.fd;
    j.fd = undefined;
    closeSync(fd);
  }

  private journalOf(sessionId: string): SessionJournalFile {
    let j = this.journals.get(sessionId);
    if (j) {
      // Most recently used last, so eviction drops the idle ones used longest ago.
      this.journals.delete(sessionId);
      this.journals.set(sessionId, j);
      return j;
    }
    const folder = folderOf(this.dir, sessionId);
    const hooks = {
      foreignOwner: async () => {
        const owner = await readOwner(join(folder, LOCK)).catch(() => undefined);
        return owner !== undefined && ownerState(owner) === 'live';
      },
      onRepair: this.onRepair,
      syncFolder: (name: NewName) => this.folderSyncs.sync(name),
    };
    j = new SessionJournalFile(join(folder, JOURNAL), sessionId, hooks, this.options.io, this.options.bufferBytes);
    this.journals.set(sessionId, j);
    if (this.journals.size > this.options.maxOpenLogs) this.evict();
    return j;
  }

  /** Drops the idle journals used longest ago beyond `maxOpenLogs` (a held one is read again on use). */
  private evict(): void {
    for (const [id, j] of this.journals) {
      if (this.journals.size <= this.options.maxOpenLogs) return;
      // Not one whose new folders wait for their first sync (a new view would not know them).
      if (j.busy || j.newNames.length > 0 || j.appended.observed || this.queues.busy(id)) continue;
      this.closeFd(j);
      this.journals.delete(id);
    }
  }
}
