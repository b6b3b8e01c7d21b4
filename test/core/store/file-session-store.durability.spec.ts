import { writeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSessionStore } from '../../../src/core/store/file-session-store.js';
import { nodeJournalIo, type JournalIo } from '../../../src/core/store/journal-io.js';
import type { LedgerEntry } from '../../../src/core/tools/tool-ledger.js';
import { seqs, storeErrorOf } from './session-store.conformance.js';
import { SessionStoreFixtures as F } from './session-store.fixtures.js';

/** The node:fs journal calls, counting fdatasyncs; a sync can be held back, a write can fail. */
class ScriptedIo implements JournalIo {
  syncs = 0;
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

  releaseSyncs(): void {
    this.holdSyncs = false;
    for (const r of this.held.splice(0)) r();
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
const executed = (id: string): LedgerEntry => ({ toolUseId: id, name: 'echo', state: 'executed', result: { toolUseId: id, content: `ok ${id}`, isError: false } });

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
