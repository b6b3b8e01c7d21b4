import { readlinkSync, realpathSync, writeFileSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSessionStore } from '../../../../src/core/store/file/file-session-store.js';
import { nodeJournalIo, type JournalIo } from '../../../../src/core/store/file/journal-io.js';
import type { LedgerEntry } from '../../../../src/core/tools/tool-ledger.js';
import { seqs, storeErrorOf } from '../session-store.conformance.js';
import { SessionStoreFixtures as F } from '../session-store.fixtures.js';

/** The node:fs journal calls, counting fdatasyncs and folder fsyncs; a sync can be held back, a write can fail. */
class ScriptedIo implements JournalIo {
  syncs = 0;
  /** Folder fsyncs started, by folder path. */
  folderSyncs: string[] = [];
  /** While set, each folder fsync waits for `releaseFolderSyncs()`. */
  holdFolderSyncs = false;
  private heldFolders: (() => void)[] = [];
  /** While set, each fdatasync waits for `releaseSyncs()`. */
  holdSyncs = false;
  /** The next write fails with this code after writing `partial` bytes. */
  failNextWrite: { code: string; partial: number } | undefined;
  /** The next fdatasync fails with this code. */
  failNextSync: string | undefined;
  private held: (() => void)[] = [];

  writeSync(fd: number, buffer: Buffer, offset: number, length: number): number {
    const fail = this.failNextWrite;
    if (!fail) return writeSync(fd, buffer, offset, length);
    // A short write first (the caller loops), then the failure.
    this.failNextWrite = fail.partial > 0 ? { code: fail.code, partial: 0 } : undefined;
    if (fail.partial > 0) return writeSync(fd, buffer, offset, Math.min(fail.partial, length));
    throw Object.assign(new Error(`${fail.code}: injected`), { code: fail.code });
  }

  async fdatasync(fd: number): Promise<void> {
    this.syncs++;
    if (this.failNextSync) {
      const code = this.failNextSync;
      this.failNextSync = undefined;
      throw Object.assign(new Error(`${code}: injected`), { code });
    }
    if (this.holdSyncs) await new Promise<void>((resolve) => this.held.push(resolve));
    await nodeJournalIo.fdatasync(fd);
  }

  async fsync(fd: number): Promise<void> {
    this.folderSyncs.push(readlinkSync(`/proc/self/fd/${fd}`));
    if (this.holdFolderSyncs) await new Promise<void>((resolve) => this.heldFolders.push(resolve));
    await nodeJournalIo.fsync!(fd);
  }

  releaseSyncs(): void {
    this.holdSyncs = false;
    for (const r of this.held.splice(0)) r();
  }

  releaseFolderSyncs(): void {
    this.holdFolderSyncs = false;
    for (const r of this.heldFolders.splice(0)) r();
  }
}

/** Polls `check` until it holds (a deadline, not a sleep, bounds it). */
async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

const executing = (id: string): LedgerEntry => ({ toolUseId: id, name: 'echo', state: 'executing' });
const executed = (id: string): LedgerEntry => ({
  toolUseId: id,
  name: 'echo',
  state: 'executed',
  result: { toolUseId: id, content: `ok ${id}`, isError: false },
});

describe('FileSessionStore durability', () => {
  let dir: string;
  let io: ScriptedIo;
  let store: FileSessionStore;
  const journalOf = (id: string): string => join(dir, encodeURIComponent(id), 'journal.jsonl');
  const journalText = (id: string): Promise<string> => readFile(journalOf(id), 'utf8');

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentrx-durable-'));
    io = new ScriptedIo();
    store = new FileSessionStore(dir, undefined, { io });
  });
  afterEach(async () => {
    io.releaseSyncs();
    io.releaseFolderSyncs();
    await rm(dir, { recursive: true, force: true });
  });

  describe('group commit', () => {
    describe('when 10 synced transitions of a held session race while a sync is in flight', () => {
      it('should make them all durable with 2 fdatasyncs (the one in flight, then one shared)', async () => {
        const lease = await store.acquire('s');
        await store.save(F.record('s'), { sync: false });
        io.holdSyncs = true;
        const all = Promise.all(Array.from({ length: 10 }, (_, i) => store.transition('s', undefined, executing(`u${i}`))));
        // Hold the first sync until every transition is written: they all wait for a later sync.
        await until(async () => (await journalText('s')).split('\n').filter((l) => l.startsWith('{"l":')).length === 10, 'the 10 transition lines');
        expect(io.syncs).toBe(1);
        io.releaseSyncs();
        expect(await all).toEqual(Array(10).fill(true));
        expect(io.syncs).toBe(2);
        await lease.release();
        expect(io.syncs).toBe(2); // nothing left to sync at release
        expect((await new FileSessionStore(dir).load('s'))!.ledger).toHaveLength(10);
      });
    });

    describe('when a synced write comes while a sync of earlier bytes is in flight', () => {
      it('should wait for a sync that started after its own write', async () => {
        const lease = await store.acquire('s');
        await store.save(F.record('s'), { sync: false });
        io.holdSyncs = true;
        const first = store.transition('s', undefined, executing('u1'));
        await until(() => io.syncs === 1, 'the first sync');
        let secondDone = false;
        const second = store.transition('s', undefined, executing('u2')).then((r) => ((secondDone = true), r));
        await until(async () => (await journalText('s')).includes('"u2"'), 'the second line');
        io.releaseSyncs();
        expect(await first).toBe(true);
        io.holdSyncs = true;
        await until(() => io.syncs === 2, 'the second sync');
        expect(secondDone).toBe(false);
        io.releaseSyncs();
        expect(await second).toBe(true);
        await lease.release();
      });
    });
  });

  describe('the folders of new sessions (group commit per folder)', () => {
    const folderOf = (id: string): string => join(realpathSync(dir), encodeURIComponent(id));

    describe('when two sessions are created before either syncs', () => {
      it("should fsync each session's folder and the store's folder once for both", async () => {
        const a = await store.acquire('a');
        const b = await store.acquire('b');
        await store.save(F.record('a'), { sync: false });
        await store.save(F.record('b'), { sync: false });
        await Promise.all([store.flush('a'), store.flush('b')]);
        expect([...io.folderSyncs].sort()).toEqual([realpathSync(dir), folderOf('a'), folderOf('b')].sort());
        expect(io.syncs).toBe(2);
        await Promise.all([a.release(), b.release()]);
        expect(io.folderSyncs).toHaveLength(3); // nothing new to make durable at release
      });
    });

    describe("when a session is created while the store's folder is being fsynced", () => {
      it('should wait for a later fsync of it, shared by the sessions created meanwhile', async () => {
        const a = await store.acquire('a');
        await store.save(F.record('a'), { sync: false });
        io.holdFolderSyncs = true;
        const first = store.flush('a');
        await until(() => io.folderSyncs.includes(realpathSync(dir)), "the store folder's fsync");
        const late = await Promise.all(['b', 'c'].map((id) => store.acquire(id)));
        let lateDone = 0;
        const flushes = ['b', 'c'].map(async (id) => {
          await store.save(F.record(id), { sync: false });
          await store.flush(id);
          lateDone++;
        });
        await until(() => io.folderSyncs.length === 4, 'the folders of b and c'); // a's, the store's, b's and c's
        expect(lateDone).toBe(0);
        io.releaseFolderSyncs(); // the first fsync of the store's folder ends: it does not cover b and c
        await first;
        await Promise.all(flushes);
        expect(lateDone).toBe(2);
        const storeSyncs = io.folderSyncs.filter((f) => f === realpathSync(dir));
        expect(storeSyncs).toHaveLength(2); // the first, then one for b and c together
        expect(io.folderSyncs.at(-1)).toBe(realpathSync(dir));
        await Promise.all([a, ...late].map((l) => l.release()));
      });
    });

    describe('when a folder fsync fails', () => {
      it("should fail the session's sync with a store_error, and the next session's sync should fsync the store's folder again", async () => {
        const a = await store.acquire('a');
        await store.save(F.record('a'), { sync: false });
        const failing = io.fsync.bind(io);
        io.fsync = async () => {
          io.fsync = failing;
          throw Object.assign(new Error('EIO: injected'), { code: 'EIO' });
        };
        const e = await storeErrorOf(store.flush('a'));
        expect(e.message).toMatch(/cannot sync the journal/);
        const b = await store.acquire('b');
        await store.save(F.record('b'));
        expect(io.folderSyncs.filter((f) => f === realpathSync(dir)).length).toBeGreaterThanOrEqual(1);
        await b.release();
        await a.release().catch(() => undefined);
      });
    });

    describe('when the process dies before the first sync of a new session', () => {
      it('should list the session from its journal (no snapshot), keep it from prune while running, and let a new owner take it over', async () => {
        await store.acquire('s');
        await store.save(F.record('s', { status: 'running', updatedAt: 1 }), { sync: false });
        await store.append('s', F.envelopes('s', 1, 2));
        await store.transition('s', undefined, executing('u1'), { sync: false });
        // The process is gone: its lock names a pid that no longer runs.
        writeFileSync(join(dir, 's', 'owner.lock'), JSON.stringify({ pid: 2 ** 22 + 1, hostname: hostname(), at: 1 }));
        const repairs: string[] = [];
        const next = new FileSessionStore(dir, (_f, what) => repairs.push(what));
        expect((await next.list()).map((r) => [r.sessionId, r.status, r.ledger])).toEqual([['s', 'running', [executing('u1')]]]);
        expect(await next.prune({ maxAgeMs: 1, now: 10_000 })).toEqual([]);
        const lease = await next.acquire('s');
        expect(repairs).toEqual([expect.stringMatching(/took over session 's' from process/)]);
        // Written to the file (not synced) with the transition: a killed process loses no page-cache write.
        expect(await next.lastSeq('s')).toBe(2);
        await lease.release();
      });
    });
  });

  describe('ordering', () => {
    it('should write buffered appends before a transition and make both durable with one sync', async () => {
      const lease = await store.acquire('s');
      await store.save(F.record('s'), { sync: false });
      await store.append('s', F.envelopes('s', 1, 3));
      expect(io.syncs).toBe(0);
      expect(await store.transition('s', undefined, executed('u1'))).toBe(true);
      expect(io.syncs).toBe(1);
      const keys = (await journalText('s'))
        .split('\n')
        .filter((l) => l !== '')
        .slice(1)
        .map((l) => Object.keys(JSON.parse(l) as object)[0]);
      expect(keys).toEqual(['r', 'e', 'e', 'e', 'l']);
      await lease.release();
    });
  });

  describe('sync: false', () => {
    it('should write without a sync, leave it to flush, and survive a clean close', async () => {
      const lease = await store.acquire('s');
      await store.save(F.record('s', { status: 'running' }), { sync: false });
      expect(await store.transition('s', undefined, executing('u1'), { sync: false })).toBe(true);
      expect(await store.transition('s', 'executing', executed('u1'), { sync: false })).toBe(true);
      expect(io.syncs).toBe(0);
      expect(await journalText('s')).toContain('"u1"'); // written (page cache), not yet synced
      await lease.release();
      expect(io.syncs).toBe(1);
      expect(await new FileSessionStore(dir).load('s')).toEqual(F.record('s', { status: 'running', ledger: [executed('u1')], updatedAt: expect.any(Number) }));
    });

    it('should make flush sync only when something is unsynced', async () => {
      const lease = await store.acquire('s');
      await store.flush('s');
      expect(io.syncs).toBe(0);
      await store.save(F.record('s'), { sync: false });
      await store.flush('s');
      await store.flush('s');
      expect(io.syncs).toBe(1);
      await lease.release();
    });
  });

  describe('a failed write', () => {
    describe.each([
      ['disk full after a short write', 'ENOSPC', 7],
      ['read-only file system', 'EROFS', 0],
      ['I/O error', 'EIO', 0],
    ])('(%s)', (_, code, partial) => {
      it('should be a store_error naming the journal, leave nothing half-written and change nothing', async () => {
        const lease = await store.acquire('s');
        await store.save(F.record('s'));
        await store.append('s', F.envelopes('s', 1, 2));
        const before = await journalText('s');
        io.failNextWrite = { code, partial };
        const e = await storeErrorOf(store.transition('s', undefined, executing('u1')));
        expect(e.message).toContain(journalOf('s'));
        expect(e.message).toContain(code);
        expect(await journalText('s')).toBe(before);
        expect((await store.load('s'))!.ledger).toEqual([]);
        expect(await store.lastSeq('s')).toBe(2);
        // Once the fault is gone, the same write goes through, after the envelopes still buffered.
        expect(await store.transition('s', undefined, executing('u1'))).toBe(true);
        await lease.release();
        const next = new FileSessionStore(dir);
        expect(seqs(await next.read('s', 0))).toEqual([1, 2]);
        expect((await next.load('s'))!.ledger).toEqual([executing('u1')]);
      });
    });
  });

  describe('a failed fdatasync', () => {
    it('should fail the synced write and every later sync of the session until it is opened again', async () => {
      const lease = await store.acquire('s');
      await store.save(F.record('s'), { sync: false });
      io.failNextSync = 'EIO';
      const e = await storeErrorOf(store.transition('s', undefined, executing('u1')));
      expect(e.message).toMatch(/cannot sync the journal .*state on disk is unknown/);
      await storeErrorOf(store.flush('s'));
      await lease.release().catch(() => undefined);
      const again = await store.acquire('s');
      expect((await store.load('s'))!.ledger).toEqual([executing('u1')]);
      await store.flush('s');
      await again.release();
    });
  });
});
