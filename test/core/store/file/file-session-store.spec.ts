import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { link, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSessionStore } from '../../../../src/core/store/file/file-session-store.js';
import { JOURNAL_VERSION } from '../../../../src/core/store/file/journal-lines.js';
import type { RawEvent } from '../../../../src/core/model.js';
import { recorder, seqs, storeErrorOf } from '../session-store.conformance.js';
import { SessionStoreFixtures as F } from '../session-store.fixtures.js';

const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'agentrx-store-'));

// The SessionStore contract runs over the registered engine in ../store-engines.spec.ts.

const lines = (...values: unknown[]): string => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)) + '\n').join('');
const header = (id: string): { version: number; sessionId: string } => ({ version: JOURNAL_VERSION, sessionId: id });
const env = (id: string, seq: number): { e: unknown } => ({ e: F.envelope(id, seq) });
const executing = (id: string) => ({ toolUseId: id, name: 'echo', state: 'executing' }) as const;
const executed = (id: string) => ({ toolUseId: id, name: 'echo', state: 'executed', result: { toolUseId: id, content: `ok ${id}`, isError: false } }) as const;

describe('FileSessionStore', () => {
  let dir: string;
  let repairs: string[];
  let store: FileSessionStore;
  const journalOf = (id: string): string => join(dir, encodeURIComponent(id), 'journal.jsonl');
  const snapshotOf = (id: string): string => join(dir, encodeURIComponent(id), 'record.json');
  const lockOf = (id: string): string => join(dir, encodeURIComponent(id), 'owner.lock');
  const journalLines = async (id: string): Promise<Record<string, unknown>[]> =>
    (await readFile(journalOf(id), 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const writeJournal = async (id: string, text: string): Promise<void> => {
    await mkdir(join(dir, encodeURIComponent(id)), { recursive: true });
    await writeFile(journalOf(id), text);
  };

  beforeEach(async () => {
    dir = await tempDir();
    repairs = [];
    store = new FileSessionStore(dir, (file, what) => repairs.push(`${file}: ${what}`), { pollMs: 20 });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('layout', () => {
    it('should keep one journal per session folder: a header, then envelopes, transitions and saves as lines, and no temp files', async () => {
      await store.save(F.record('a/b c'));
      await store.append('a/b c', F.envelopes('a/b c', 1, 2));
      await store.transition('a/b c', undefined, executing('u1'));
      expect(await readdir(dir)).toEqual(['%threads', 'a%2Fb%20c']); // and the thread index (its name is never a session folder's)
      expect(await readdir(join(dir, 'a%2Fb%20c'))).toEqual(['journal.jsonl']);
      const [first, save, ...rest] = await journalLines('a/b c');
      expect(first).toEqual(header('a/b c'));
      expect(save).toEqual({
        r: { version: 2, sessionId: 'a/b c', provider: 'scripted', threadId: 'thread-a/b c', status: 'idle', createdAt: 1_000, updatedAt: 1_000 },
        L: [],
      });
      expect(rest).toEqual([env('a/b c', 1), env('a/b c', 2), { l: executing('u1'), at: expect.any(Number) }]);
    });

    it("should remove the thread's index entry with its session, but not one naming a newer session of the thread", async () => {
      await store.save(F.record('old', { threadId: 'th' }));
      await store.save(F.record('solo', { threadId: 'alone' }));
      await store.delete('solo');
      expect(await readdir(join(dir, '%threads'))).toHaveLength(1);
      await store.save(F.record('new', { threadId: 'th' }));
      await store.delete('old');
      expect(await store.findByThread('th')).toBe('new');
      await store.delete('new');
      expect(await readdir(join(dir, '%threads'))).toEqual([]);
    });

    it('should write a record.json snapshot on release of a journal of snapshotBytes or more, and the lock should be gone', async () => {
      const snapshotting = new FileSessionStore(dir, undefined, { snapshotBytes: 100 });
      const lease = await snapshotting.acquire('s');
      await snapshotting.save(F.record('s', { status: 'completed' }));
      await lease.release();
      expect((await readdir(join(dir, 's'))).sort()).toEqual(['journal.jsonl', 'record.json']);
      const size = (await readFile(journalOf('s'))).length;
      expect(size).toBeGreaterThanOrEqual(100);
      expect(JSON.parse(await readFile(snapshotOf('s'), 'utf8'))).toEqual({ journalSize: size, record: F.record('s', { status: 'completed' }) });
    });

    it('should write no snapshot on release of a smaller journal (list folds it), and the lock should be gone', async () => {
      const lease = await store.acquire('s');
      await store.save(F.record('s', { status: 'completed' }));
      await lease.release();
      expect(await readdir(join(dir, 's'))).toEqual(['journal.jsonl']);
      expect(await new FileSessionStore(dir).list()).toEqual([F.record('s', { status: 'completed' })]);
    });

    it('should refuse the ids "." and ".." with a store_error', async () => {
      await storeErrorOf(store.save(F.record('..')));
      await storeErrorOf(store.append('.', [F.envelope('.', 1)]));
    });
  });

  describe('.list', () => {
    it('should trust a snapshot that names the journal size, and fold the journal once it changed', async () => {
      const options = { snapshotBytes: 1 };
      const writer = new FileSessionStore(dir, undefined, options);
      const lease = await writer.acquire('s');
      await writer.save(F.record('s'));
      await lease.release();
      const snap = JSON.parse(await readFile(snapshotOf('s'), 'utf8')) as { journalSize: number };
      // A snapshot saying something else, with the right size, is believed: the journal is not read.
      await writeFile(snapshotOf('s'), JSON.stringify({ ...snap, record: F.record('s', { status: 'failed' }) }));
      expect((await new FileSessionStore(dir, undefined, options).list()).map((r) => r.status)).toEqual(['failed']);
      await writer.save(F.record('s', { status: 'completed', updatedAt: 5 }));
      expect(await new FileSessionStore(dir, undefined, options).list()).toEqual([F.record('s', { status: 'completed', updatedAt: 5 })]);
    });

    it('should ignore a snapshot beside a journal smaller than snapshotBytes (it folds the journal)', async () => {
      const lease = await store.acquire('s');
      await store.save(F.record('s', { status: 'completed' }));
      await lease.release();
      const journalSize = (await readFile(journalOf('s'))).length;
      await writeFile(snapshotOf('s'), JSON.stringify({ journalSize, record: F.record('s', { status: 'failed' }) }));
      expect((await new FileSessionStore(dir).list()).map((r) => r.status)).toEqual(['completed']);
    });

    describe('when a journal is folded from its text (no snapshot)', () => {
      it('should fold saves, transitions and a transcript delta among envelope lines, as load does', async () => {
        const transcript: RawEvent[] = [{ type: 'local.user', text: 'hi' } as unknown as RawEvent];
        await store.save(F.record('s', { transcript }));
        await store.append('s', F.envelopes('s', 1, 3));
        await store.transition('s', undefined, executing('u1'));
        await store.save(
          F.record('s', { status: 'completed', updatedAt: 7, transcript: [...transcript, { type: 'local.assistant', text: 'yo' } as unknown as RawEvent] }),
        );
        const [listed] = await new FileSessionStore(dir).list();
        expect(listed).toEqual(await new FileSessionStore(dir).load('s'));
        expect(listed!.status).toBe('completed');
      });

      it('should read a torn last line the thorough way: cut, reported, the record before it listed', async () => {
        await store.save(F.record('s', { updatedAt: 3 }));
        await store.append('s', F.envelopes('s', 1, 2));
        await store.flush('s');
        await writeFile(journalOf('s'), (await readFile(journalOf('s'), 'utf8')) + '{"e":{"seq":3,');
        const reader = new FileSessionStore(dir, (file, what) => repairs.push(`${file}: ${what}`));
        expect((await reader.list()).map((r) => r.updatedAt)).toEqual([3]);
        expect(repairs).toEqual([expect.stringMatching(/cut a torn last line 5/)]);
      });

      it('should leave out an envelope line out of order with a warning naming the line, as load reports it', async () => {
        await writeJournal('s', lines(header('s'), { r: F.record('s'), L: [] }, env('s', 2)));
        expect(await store.list()).toEqual([]);
        expect(repairs).toEqual([expect.stringMatching(/session 's' is left out of the list: .*line 3 holds seq 2 where seq 1 was expected/)]);
        const e = await storeErrorOf(store.load('s'));
        expect(e.message).toMatch(/line 3 holds seq 2 where seq 1 was expected/);
      });
    });
  });

  describe('.append', () => {
    describe('when called without a flush', () => {
      it('should keep the envelopes in memory until flush', async () => {
        await store.append('s', F.envelopes('s', 1, 3));
        await expect(readFile(journalOf('s'), 'utf8')).rejects.toThrow(/ENOENT/);
        await store.flush('s');
        expect(await readFile(journalOf('s'), 'utf8')).toBe(lines(header('s'), ...[1, 2, 3].map((n) => env('s', n))));
      });
    });

    describe('when the buffer reaches bufferBytes', () => {
      it('should write the buffered envelopes in one batch', async () => {
        const small = new FileSessionStore(dir, undefined, { bufferBytes: 1 });
        await small.append('s', F.envelopes('s', 1, 3));
        expect(await readFile(journalOf('s'), 'utf8')).toBe(lines(header('s'), ...[1, 2, 3].map((n) => env('s', n))));
      });
    });

    describe('when another instance resumes the log', () => {
      it('should continue seq where the file ends', async () => {
        await store.append('s', F.envelopes('s', 1, 3));
        await store.flush('s');
        const next = new FileSessionStore(dir);
        expect(await next.lastSeq('s')).toBe(3);
        await next.append('s', F.envelopes('s', 3, 4));
        await next.flush('s');
        expect(seqs(await new FileSessionStore(dir).read('s', 0))).toEqual([1, 2, 3, 4]);
      });
    });
  });

  describe('the ledger', () => {
    describe.each([
      ['without holding the session', false],
      ['holding the session', true],
    ])('%s', (_, hold) => {
      it('should append a line per transition and fold them for a new store instance', async () => {
        const lease = hold ? await store.acquire('s') : undefined;
        await store.save(F.record('s'));
        expect(await store.transition('s', undefined, executing('u1'))).toBe(true);
        expect(await store.transition('s', undefined, executing('u2'))).toBe(true);
        expect(await store.transition('s', 'executing', executed('u1'))).toBe(true);
        expect(await store.transition('s', 'executing', executed('u1'))).toBe(false);
        expect((await journalLines('s')).slice(2)).toEqual([
          { l: executing('u1'), at: expect.any(Number) },
          { l: executing('u2'), at: expect.any(Number) },
          { l: executed('u1'), at: expect.any(Number) },
        ]);
        const reloaded = await new FileSessionStore(dir).load('s');
        expect(reloaded!.ledger).toEqual([executed('u1'), executing('u2')]);
        expect(reloaded).toEqual(await store.load('s'));
        await lease?.release();
        expect(await new FileSessionStore(dir).transition('s', 'executing', executed('u2'))).toBe(true);
        expect((await new FileSessionStore(dir).load('s'))!.ledger).toEqual([executed('u1'), executed('u2')]);
      });

      it('should give a saved ledger precedence over the transitions before it', async () => {
        const lease = hold ? await store.acquire('s') : undefined;
        await store.save(F.record('s'));
        await store.transition('s', undefined, executing('u1'));
        await store.save(F.record('s', { ledger: [] }));
        expect((await store.load('s'))!.ledger).toEqual([]);
        expect((await new FileSessionStore(dir).load('s'))!.ledger).toEqual([]);
        expect(await store.transition('s', undefined, executing('u1'))).toBe(true);
        await lease?.release();
      });
    });

    it('should write a save that keeps the stored ledger without it', async () => {
      const lease = await store.acquire('s');
      await store.save(F.record('s'));
      await store.transition('s', undefined, executing('u1'));
      const updatedAt = Date.now() + 60_000;
      await store.save({ ...(await store.load('s'))!, status: 'running', updatedAt });
      expect((await journalLines('s')).at(-1)).toEqual({ r: { status: 'running', updatedAt } });
      await lease.release();
      expect(await new FileSessionStore(dir).load('s')).toEqual(F.record('s', { status: 'running', updatedAt, ledger: [executing('u1')] }));
    });

    it('should drop the journals of held sessions beyond maxOpenLogs and read them again on use', async () => {
      const few = new FileSessionStore(dir, undefined, { maxOpenLogs: 1 });
      const leases = [await few.acquire('a'), await few.acquire('b')];
      for (const id of ['a', 'b']) await few.save(F.record(id));
      expect(await few.transition('a', undefined, executing('u1'))).toBe(true);
      expect(await few.transition('b', undefined, executing('u2'))).toBe(true); // 'a' is dropped
      expect(await few.transition('a', undefined, executing('u1'))).toBe(false);
      expect(await few.transition('a', 'executing', executed('u1'))).toBe(true);
      expect((await few.load('a'))!.ledger).toEqual([executed('u1')]);
      expect((await few.load('b'))!.ledger).toEqual([executing('u2')]);
      for (const lease of leases) await lease.release();
      expect((await new FileSessionStore(dir).load('a'))!.ledger).toEqual([executed('u1')]);
    });
  });

  describe('the transcript', () => {
    const msg = (i: number): RawEvent => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i}` }) as unknown as RawEvent;
    /** A fresh copy of each item, as Local's `transcript()` gives it. */
    const copies = (n: number): RawEvent[] => Array.from({ length: n }, (_, i) => ({ ...msg(i) }));

    it('should write a transcript that extends the previous one as its new items only, and fold it back whole', async () => {
      const lease = await store.acquire('s');
      await store.save(F.record('s', { transcript: copies(2) }));
      await store.save(F.record('s', { transcript: copies(4) }));
      await store.save(F.record('s', { transcript: copies(5), status: 'completed' }));
      const saves = (await journalLines('s')).slice(1);
      expect(saves.map((l) => [l['x'], (l['tx'] as unknown[]).length])).toEqual([
        [0, 2],
        [2, 2],
        [4, 1],
      ]);
      expect((await store.load('s'))!.transcript).toEqual(copies(5));
      await lease.release();
      expect(await new FileSessionStore(dir).load('s')).toEqual(F.record('s', { transcript: copies(5), status: 'completed' }));
    });

    it('should keep the common prefix of a transcript that changed an earlier item, and drop a removed transcript and error', async () => {
      await store.save(F.record('s', { transcript: copies(3), error: { code: 'x', message: 'y' } }));
      const changed = [...copies(1), { role: 'user', content: 'edited' } as unknown as RawEvent, ...copies(3).slice(2)];
      await store.save(F.record('s', { transcript: changed, error: { code: 'x', message: 'y' } }));
      expect((await journalLines('s')).at(-1)).toEqual({ r: { error: { code: 'x', message: 'y' } }, x: 1, tx: changed.slice(1) });
      expect((await new FileSessionStore(dir).load('s'))!.transcript).toEqual(changed);
      await store.save(F.record('s'));
      expect((await journalLines('s')).at(-1)).toEqual({ r: {}, d: ['error', 'transcript'] });
      expect(await new FileSessionStore(dir).load('s')).toEqual(F.record('s'));
    });
  });

  describe('a journal after a crash', () => {
    describe('when the last line is torn (no trailing newline)', () => {
      beforeEach(async () => {
        await writeJournal('s', lines(header('s'), env('s', 1), env('s', 2)) + '{"e":{"source":"agentrx","seq":3,"ses');
      });

      it('should cut it, report it and continue after the last whole line', async () => {
        expect(await store.lastSeq('s')).toBe(2);
        expect(await readFile(journalOf('s'), 'utf8')).toBe(lines(header('s'), env('s', 1), env('s', 2)));
        expect(repairs).toEqual([expect.stringContaining(`${journalOf('s')}: cut a torn last line 4`)]);
        await store.append('s', [F.envelope('s', 3)]);
        await store.flush('s');
        expect(seqs(await new FileSessionStore(dir).read('s', 0))).toEqual([1, 2, 3]);
      });

      it('should cut it when the session is acquired', async () => {
        const lease = await store.acquire('s');
        expect(repairs).toEqual([expect.stringContaining('cut a torn last line 4')]);
        await store.save(F.record('s'));
        await lease.release();
        expect(await new FileSessionStore(dir).load('s')).toEqual(F.record('s'));
      });
    });

    describe('when the last line is a torn transition', () => {
      it('should cut it and keep the ledger before it', async () => {
        await store.save(F.record('s'));
        await store.transition('s', undefined, executing('u1'));
        const whole = await readFile(journalOf('s'), 'utf8');
        await writeFile(journalOf('s'), whole + '{"l":{"toolUseId":"u1","na');
        const next = new FileSessionStore(dir, (file, what) => repairs.push(`${file}: ${what}`));
        expect((await next.load('s'))!.ledger).toEqual([executing('u1')]);
        expect(await readFile(journalOf('s'), 'utf8')).toBe(whole);
        expect(await next.transition('s', 'executing', executed('u1'))).toBe(true);
        expect((await new FileSessionStore(dir).load('s'))!.ledger).toEqual([executed('u1')]);
      });
    });

    describe('when the last line is unparsable but ends with a newline', () => {
      it('should cut it too', async () => {
        await writeJournal('s', lines(header('s'), env('s', 1), '\u0000\u0000\u0000'));
        expect(seqs(await store.read('s', 0))).toEqual([1]);
        expect(await readFile(journalOf('s'), 'utf8')).toBe(lines(header('s'), env('s', 1)));
      });
    });

    describe('when only the header was torn', () => {
      it('should cut the file to empty and start at seq 1', async () => {
        await writeJournal('s', '{"vers');
        expect(await store.lastSeq('s')).toBe(0);
        await store.append('s', [F.envelope('s', 1)]);
        await store.flush('s');
        expect(await readFile(journalOf('s'), 'utf8')).toBe(lines(header('s'), env('s', 1)));
      });
    });

    describe('when a live process holds the session (its write may be in progress)', () => {
      it('should leave the incomplete line alone and read the whole lines', async () => {
        const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
        try {
          const text = lines(header('s'), env('s', 1)) + '{"e":{"source":"agentrx","seq":2';
          await writeJournal('s', text);
          await writeFile(lockOf('s'), JSON.stringify({ pid: child.pid, hostname: hostname(), at: Date.now() }));
          expect(seqs(await store.read('s', 0))).toEqual([1]);
          expect(await readFile(journalOf('s'), 'utf8')).toBe(text);
          expect(repairs).toEqual([]);
        } finally {
          child.kill();
          await once(child, 'exit');
        }
      });
    });
  });

  describe('a journal that cannot be trusted', () => {
    const corrupt = async (text: string): Promise<Error> => {
      await writeJournal('s', text);
      const e = await storeErrorOf(store.read('s', 0));
      expect(e.message).toContain(journalOf('s'));
      await storeErrorOf(store.lastSeq('s'));
      await storeErrorOf(store.load('s'));
      await storeErrorOf(store.append('s', [F.envelope('s', 9)]));
      // Listing leaves it out with a warning naming it, and lists the others.
      expect(await store.list()).toEqual([]);
      expect(repairs.at(-1)).toContain(`${journalOf('s')}: session 's' is left out of the list: `);
      return e;
    };

    it('should be a store_error naming the line for a corrupt line in the middle', async () => {
      const e = await corrupt(lines(header('s'), env('s', 1), '{"e":{"seq":2,,,', env('s', 3)));
      expect(e.message).toMatch(/line 3 is corrupt/);
    });

    it('should be a store_error for a journal written by a newer version, naming both versions', async () => {
      const e = await corrupt(lines({ version: JOURNAL_VERSION + 1, sessionId: 's' }, env('s', 1)));
      expect(e.message).toContain(`newer agentrx (journal version ${JOURNAL_VERSION + 1}; this build reads version ${JOURNAL_VERSION})`);
    });

    it('should be a store_error for a file without the header', async () => {
      const e = await corrupt(lines(env('s', 1)));
      expect(e.message).toMatch(/not a journal header/);
    });

    it("should be a store_error for another session's journal", async () => {
      const e = await corrupt(lines(header('other'), env('other', 1)));
      expect(e.message).toMatch(/holds session 'other', not 's' as its folder says/);
    });

    it('should be a store_error naming the line for a seq gap inside the file', async () => {
      const e = await corrupt(lines(header('s'), env('s', 1), env('s', 3)));
      expect(e.message).toMatch(/line 3 holds seq 3 where seq 2 was expected \(a gap/);
    });

    it('should be a store_error for a repeated seq', async () => {
      const e = await corrupt(lines(header('s'), env('s', 1), env('s', 1)));
      expect(e.message).toMatch(/a repeat/);
    });

    it('should be a store_error for a transition before any record', async () => {
      const e = await corrupt(lines(header('s'), { l: executing('u1'), at: 1 }, env('s', 1)));
      expect(e.message).toMatch(/line 2 cannot be applied \(a ledger transition before any record\)/);
    });
  });

  describe('a folder in the layout before the journal', () => {
    it('should be a store_error naming the old files and what to do, for every call', async () => {
      await mkdir(join(dir, 's'), { recursive: true });
      await writeFile(join(dir, 's', 'record.json'), JSON.stringify({ ...F.record('s'), ledgerEpoch: 'e' }));
      await writeFile(join(dir, 's', 'log.jsonl'), lines({ version: 2 }, F.envelope('s', 1)));
      const e = await storeErrorOf(store.load('s'));
      expect(e.message).toMatch(/layout of an older agentrx \(.*log\.jsonl.*store version 2\)/);
      expect(e.message).toContain(`agentrx sessions export s -o <file>), or delete the folder ${join(dir, 's')}`);
      await storeErrorOf(store.acquire('s'));
      expect(await readdir(join(dir, 's'))).not.toContain('owner.lock');
      expect(await store.list()).toEqual([]);
      expect(repairs.at(-1)).toMatch(/session 's' is left out of the list: .*layout of an older agentrx/);
    });
  });

  describe('a session folder deleted while the session is held', () => {
    it('should make the next synced write a store_error saying the journal was deleted, never a silent success', async () => {
      const lease = await store.acquire('s');
      await store.save(F.record('s'));
      await rm(join(dir, 's'), { recursive: true, force: true });
      const e = await storeErrorOf(store.transition('s', undefined, executing('u1')));
      expect(e.message).toContain(journalOf('s'));
      expect(e.message).toMatch(/deleted while the session was open/);
      await lease.release().catch(() => undefined);
    });
  });

  describe('disk full', () => {
    it('should make flush a store_error naming the journal, keep the envelopes, and write them once space is back', async () => {
      await mkdir(join(dir, 's'), { recursive: true });
      await symlink('/dev/full', journalOf('s'));
      await store.append('s', F.envelopes('s', 1, 3));
      const e = await storeErrorOf(store.flush('s'));
      expect(e.message).toContain(journalOf('s'));
      expect(e.message).toContain('ENOSPC');
      expect(seqs(await store.read('s', 0))).toEqual([1, 2, 3]);
      await rm(journalOf('s'));
      await store.flush('s');
      expect(await readFile(journalOf('s'), 'utf8')).toBe(lines(header('s'), ...[1, 2, 3].map((n) => env('s', n))));
    });

    it('should make a transition of a held session a store_error with ENOSPC, changing nothing', async () => {
      await mkdir(join(dir, 's'), { recursive: true });
      await symlink('/dev/full', journalOf('s'));
      const lease = await store.acquire('s');
      const e = await storeErrorOf(store.save(F.record('s')));
      expect(e.message).toContain(journalOf('s'));
      expect(e.message).toContain('ENOSPC');
      expect(await store.load('s')).toBeUndefined();
      await storeErrorOf(store.transition('s', undefined, executing('u1')));
      await lease.release();
    });
  });

  describe('.acquire', () => {
    describe('when another store in this process holds the session', () => {
      it('should refuse it, saying so', async () => {
        const lease = await store.acquire('s');
        const e = await storeErrorOf(new FileSessionStore(dir).acquire('s'));
        expect(e.message).toMatch(/already open in this process/);
        await lease.release();
      });
    });

    describe('when a live process holds the session', () => {
      it('should refuse it with a store_error naming the pid and the lock file', async () => {
        const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
        try {
          await mkdir(join(dir, 's'), { recursive: true });
          await writeFile(lockOf('s'), JSON.stringify({ pid: child.pid, hostname: hostname(), at: 0 }));
          const e = await storeErrorOf(store.acquire('s'));
          expect(e.message).toContain(`held by process ${child.pid}`);
          expect(e.message).toContain(`if that process is gone, delete ${lockOf('s')}`);
        } finally {
          child.kill();
          await once(child, 'exit');
        }
      });
    });

    describe('when the owner is on another host', () => {
      it('should refuse it, naming the host', async () => {
        await mkdir(join(dir, 's'), { recursive: true });
        await writeFile(lockOf('s'), JSON.stringify({ pid: 1, hostname: 'elsewhere.example', at: 0 }));
        const e = await storeErrorOf(store.acquire('s'));
        expect(e.message).toContain('on host elsewhere.example');
      });
    });

    describe('when the owner died', () => {
      it('should take the session over, report it, and own the lock', async () => {
        const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
        await once(child, 'exit');
        await mkdir(join(dir, 's'), { recursive: true });
        await writeFile(lockOf('s'), JSON.stringify({ pid: child.pid, hostname: hostname(), at: 0 }));
        const lease = await store.acquire('s');
        expect(JSON.parse(await readFile(lockOf('s'), 'utf8'))).toEqual(expect.objectContaining({ pid: process.pid, hostname: hostname() }));
        expect(repairs).toEqual([`${lockOf('s')}: took over session 's' from process ${child.pid}, which is no longer running`]);
        await lease.release();
        expect(await readdir(join(dir, 's'))).toEqual([]);
      });
    });

    describe('when the lock file is unreadable', () => {
      it('should refuse it, saying how to fix it', async () => {
        await mkdir(join(dir, 's'), { recursive: true });
        await writeFile(lockOf('s'), '{"pi');
        const e = await storeErrorOf(store.acquire('s'));
        expect(e.message).toMatch(/unreadable .* delete the file/);
      });
    });

    describe('the lock as a hard link to the process owner file', () => {
      const ownersOf = async (): Promise<string[]> => (await readdir(join(dir, '%owners'))).map((n) => join(dir, '%owners', n));

      it("should link each session's lock to this process's one owner file, and unlink it on release", async () => {
        const a = await store.acquire('a');
        const b = await store.acquire('b');
        const [own, ...more] = await ownersOf();
        expect(more).toEqual([]);
        expect(JSON.parse(await readFile(own!, 'utf8'))).toEqual(expect.objectContaining({ pid: process.pid, hostname: hostname() }));
        const st = await stat(own!);
        expect(st.nlink).toBe(3);
        expect([(await stat(lockOf('a'))).ino, (await stat(lockOf('b'))).ino]).toEqual([st.ino, st.ino]);
        await a.release();
        await b.release();
        expect((await stat(own!)).nlink).toBe(1);
        expect(await readdir(join(dir, 'a'))).toEqual([]);
      });

      it("should remove a dead process's owner file once no lock links it, and keep one a crashed holder's lock still links", async () => {
        const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
        await once(child, 'exit');
        const dead = JSON.stringify({ pid: child.pid, hostname: hostname(), at: 0, token: 'dead' });
        await mkdir(join(dir, '%owners'), { recursive: true });
        await writeFile(join(dir, '%owners', 'unlinked'), dead);
        await writeFile(join(dir, '%owners', 'linked'), dead);
        await mkdir(join(dir, 'crashed'));
        await link(join(dir, '%owners', 'linked'), lockOf('crashed'));
        const lease = await store.acquire('s');
        const names = (await readdir(join(dir, '%owners'))).sort();
        expect(names).toHaveLength(2);
        expect(names).toContain('linked');
        expect(names).not.toContain('unlinked');
        // The crashed holder's session is taken over like any dead owner's; its owner file then goes with the next process's start.
        const taken = await store.acquire('crashed');
        expect(repairs).toEqual([`${lockOf('crashed')}: took over session 'crashed' from process ${child.pid}, which is no longer running`]);
        expect((await stat(join(dir, '%owners', 'linked'))).nlink).toBe(1);
        await taken.release();
        await lease.release();
      });

      it('should create the lock as a file holding the owner where no owner file can be made', async () => {
        await writeFile(join(dir, '%owners'), 'not a folder');
        const lease = await store.acquire('s');
        expect((await stat(lockOf('s'))).nlink).toBe(1);
        expect(JSON.parse(await readFile(lockOf('s'), 'utf8'))).toEqual(expect.objectContaining({ pid: process.pid, hostname: hostname() }));
        await lease.release();
        expect(await readdir(join(dir, 's'))).toEqual([]);
      });

      it('should still remove its lock on release when its owner file was removed and made again meanwhile', async () => {
        const a = await store.acquire('a');
        await rm(join(dir, '%owners'), { recursive: true });
        const b = await store.acquire('b'); // makes the owner file again (a new inode)
        await a.release();
        await b.release();
        expect(await readdir(join(dir, 'a'))).toEqual([]);
        expect(await readdir(join(dir, 'b'))).toEqual([]);
      });

      it('should leave a lock that is no longer its link on release', async () => {
        const lease = await store.acquire('s');
        const other = JSON.stringify({ pid: 1, hostname: 'elsewhere.example', at: 0 });
        await rm(lockOf('s'));
        await writeFile(lockOf('s'), other);
        await lease.release();
        expect(await readFile(lockOf('s'), 'utf8')).toBe(other);
      });
    });

    describe('.release', () => {
      it('should flush buffered appends and remove the lock', async () => {
        const lease = await store.acquire('s');
        await store.append('s', F.envelopes('s', 1, 2));
        await lease.release();
        expect(await readdir(join(dir, 's'))).toEqual(['journal.jsonl']);
        expect(seqs(await new FileSessionStore(dir).read('s', 0))).toEqual([1, 2]);
      });
    });
  });

  describe('.tail', () => {
    describe('when a second store on the same directory appends', () => {
      it('should replay, then follow what the other store flushes', async () => {
        await store.append('s', F.envelopes('s', 1, 2));
        await store.flush('s');
        const rec = recorder(store.tail('s', 0));
        expect(seqs(await rec.upTo(2))).toEqual([1, 2]);
        const writer = new FileSessionStore(dir);
        await writer.append('s', F.envelopes('s', 3, 5));
        await writer.flush('s');
        await writer.append('s', [F.envelope('s', 6)]);
        await writer.flush('s');
        expect(seqs(await rec.upTo(6))).toEqual([1, 2, 3, 4, 5, 6]);
        rec.sub.unsubscribe();
      });
    });

    describe('when the log is corrupt', () => {
      it('should error with the store_error', async () => {
        await mkdir(join(dir, 's'), { recursive: true });
        await writeFile(journalOf('s'), lines({ version: 9, sessionId: 's' }));
        const e = await storeErrorOf(recorder(store.tail('s', 0)).upTo(1));
        expect(e.message).toMatch(/newer agentrx/);
      });
    });
  });

  describe('.tail', () => {
    describe('when a second store on the same directory holds the session', () => {
      it('should replay, then follow what the holder writes', async () => {
        await store.append('s', F.envelopes('s', 1, 2));
        await store.flush('s');
        const rec = recorder(store.tail('s', 0));
        expect(seqs(await rec.upTo(2))).toEqual([1, 2]);
        const writer = new FileSessionStore(dir);
        const lease = await writer.acquire('s');
        await writer.append('s', F.envelopes('s', 3, 5));
        await writer.flush('s');
        await writer.append('s', [F.envelope('s', 6)]);
        await writer.flush('s');
        expect(seqs(await rec.upTo(6))).toEqual([1, 2, 3, 4, 5, 6]);
        rec.sub.unsubscribe();
        await lease.release();
      });
    });
  });

  describe('.prune', () => {
    it('should keep a session held by a live process and one whose journal cannot be read', async () => {
      await store.save(F.record('held', { updatedAt: 1 }));
      await store.save(F.record('bad', { updatedAt: 1 }));
      await writeFile(journalOf('bad'), lines(header('bad'), '{', env('bad', 1)));
      await store.save(F.record('old', { updatedAt: 1 }));
      const other = new FileSessionStore(dir);
      const lease = await other.acquire('held');
      expect(await store.prune({ maxAgeMs: 1, now: 10 })).toEqual(['old']);
      expect((await readdir(dir)).sort()).toEqual(['%owners', '%threads', 'bad', 'held']);
      expect(repairs).toEqual([expect.stringMatching(/journal\.jsonl: kept by retention: .*line 2 is corrupt/)]);
      await lease.release();
    });

    it('should delete a folder without a record by its age', async () => {
      await store.append('orphan', [F.envelope('orphan', 1)]);
      await store.flush('orphan');
      expect(await store.prune({ maxAgeMs: 1, now: Date.now() + 60_000 })).toEqual(['orphan']);
      expect(await readdir(dir)).toEqual(['%owners']); // the owner file of this process (its lock was the prune's)
    });
  });
});
