import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSessionStore } from '../../../src/core/store/file-session-store.js';
import { describeSessionStore, recorder, seqs, storeErrorOf } from './session-store.conformance.js';
import { SessionStoreFixtures as F } from './session-store.fixtures.js';

const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'agentrx-store-'));

describeSessionStore('FileSessionStore', async () => {
  const dir = await tempDir();
  return { store: new FileSessionStore(dir, undefined, { pollMs: 20 }), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

const lines = (...values: unknown[]): string => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)) + '\n').join('');
const HEADER = { version: 2 };

describe('FileSessionStore', () => {
  let dir: string;
  let repairs: string[];
  let store: FileSessionStore;
  const logOf = (id: string): string => join(dir, encodeURIComponent(id), 'log.jsonl');
  const recordOf = (id: string): string => join(dir, encodeURIComponent(id), 'record.json');
  const lockOf = (id: string): string => join(dir, encodeURIComponent(id), 'owner.lock');
  const ledgerOf = (id: string): string => join(dir, encodeURIComponent(id), 'ledger.jsonl');

  beforeEach(async () => {
    dir = await tempDir();
    repairs = [];
    store = new FileSessionStore(dir, (file, what) => repairs.push(`${file}: ${what}`), { pollMs: 20 });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('layout', () => {
    it('should keep a folder per session with record.json and a log headed by its version, and no temp files', async () => {
      await store.save(F.record('a/b c'));
      await store.append('a/b c', F.envelopes('a/b c', 1, 2));
      await store.flush('a/b c');
      expect(await readdir(dir)).toEqual(['a%2Fb%20c']);
      expect((await readdir(join(dir, 'a%2Fb%20c'))).sort()).toEqual(['log.jsonl', 'record.json']);
      expect(JSON.parse(await readFile(recordOf('a/b c'), 'utf8'))).toEqual({ ...F.record('a/b c'), ledgerEpoch: expect.any(String) });
      expect(await readFile(logOf('a/b c'), 'utf8')).toBe(lines(HEADER, ...F.envelopes('a/b c', 1, 2)));
    });

    it('should refuse the ids "." and ".." with a store_error', async () => {
      await storeErrorOf(store.save(F.record('..')));
      await storeErrorOf(store.append('.', [F.envelope('.', 1)]));
    });
  });

  describe('.append', () => {
    describe('when called without a flush', () => {
      it('should keep the envelopes in memory until flush', async () => {
        await store.append('s', F.envelopes('s', 1, 3));
        await expect(readFile(logOf('s'), 'utf8')).rejects.toThrow(/ENOENT/);
        await store.flush('s');
        expect(await readFile(logOf('s'), 'utf8')).toBe(lines(HEADER, ...F.envelopes('s', 1, 3)));
      });
    });

    describe('when the buffer reaches bufferBytes', () => {
      it('should write the buffered envelopes in one batch', async () => {
        const small = new FileSessionStore(dir, undefined, { bufferBytes: 1 });
        await small.append('s', F.envelopes('s', 1, 3));
        expect(await readFile(logOf('s'), 'utf8')).toBe(lines(HEADER, ...F.envelopes('s', 1, 3)));
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

  describe('the ledger (ledger.jsonl)', () => {
    const executing = (id: string) => ({ toolUseId: id, name: 'echo', state: 'executing' }) as const;
    const executed = (id: string) => ({ toolUseId: id, name: 'echo', state: 'executed', result: { toolUseId: id, content: `ok ${id}`, isError: false } }) as const;
    const ledgerLines = async (id: string): Promise<string[]> => (await readFile(ledgerOf(id), 'utf8')).split('\n').filter((l) => l !== '');
    const epochOf = async (id: string): Promise<string> => (JSON.parse(await readFile(recordOf(id), 'utf8')) as { ledgerEpoch: string }).ledgerEpoch;

    describe.each([
      ['without holding the session', false],
      ['holding the session', true],
    ])('%s', (_, hold) => {
      it('should append a line per transition, leave record.json as saved, and merge them for a new store instance', async () => {
        const lease = hold ? await store.acquire('s') : undefined;
        await store.save(F.record('s'));
        const saved = await readFile(recordOf('s'), 'utf8');
        expect(await store.transition('s', undefined, executing('u1'))).toBe(true);
        expect(await store.transition('s', undefined, executing('u2'))).toBe(true);
        expect(await store.transition('s', 'executing', executed('u1'))).toBe(true);
        expect(await store.transition('s', 'executing', executed('u1'))).toBe(false);
        expect(await readFile(recordOf('s'), 'utf8')).toBe(saved);
        const epoch = await epochOf('s');
        expect((await ledgerLines('s')).map((l) => JSON.parse(l) as unknown)).toEqual([
          { version: 2, epoch },
          { t: expect.any(Number), e: executing('u1') },
          { t: expect.any(Number), e: executing('u2') },
          { t: expect.any(Number), e: executed('u1') },
        ]);
        const reloaded = await new FileSessionStore(dir).load('s');
        expect(reloaded!.ledger).toEqual([executed('u1'), executing('u2')]);
        expect(reloaded).toEqual(await store.load('s'));
        await lease?.release();
        expect(await new FileSessionStore(dir).transition('s', 'executing', executed('u2'))).toBe(true);
        expect((await new FileSessionStore(dir).load('s'))!.ledger).toEqual([executed('u1'), executed('u2')]);
      });

      it('should fold the ledger into record.json on save (compaction) and empty ledger.jsonl', async () => {
        const compacting = new FileSessionStore(dir, undefined, { ledgerCompactBytes: 0 });
        const lease = hold ? await compacting.acquire('s') : undefined;
        await compacting.save(F.record('s'));
        const before = await epochOf('s');
        await compacting.transition('s', undefined, executing('u1'));
        await compacting.transition('s', 'executing', executed('u1'));
        const stored = await compacting.load('s');
        await compacting.save({ ...stored!, status: 'completed' });
        expect(await readFile(ledgerOf('s'), 'utf8')).toBe('');
        const record = JSON.parse(await readFile(recordOf('s'), 'utf8')) as { ledger: unknown; ledgerEpoch: string };
        expect(record.ledger).toEqual([executed('u1')]);
        expect(record.ledgerEpoch).not.toBe(before);
        expect(await new FileSessionStore(dir).load('s')).toEqual({ ...stored, status: 'completed' });
        await compacting.transition('s', undefined, executing('u2'));
        expect(await ledgerLines('s')).toHaveLength(2);
        expect((await new FileSessionStore(dir).load('s'))!.ledger).toEqual([executed('u1'), executing('u2')]);
        await lease?.release();
      });

      it('should give a saved ledger precedence over the lines before it', async () => {
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

    it('should keep ledger.jsonl on a save that changes only the record, below ledgerCompactBytes', async () => {
      const lease = await store.acquire('s');
      await store.save(F.record('s'));
      await store.transition('s', undefined, executing('u1'));
      const updatedAt = Date.now() + 60_000;
      await store.save({ ...(await store.load('s'))!, status: 'running', updatedAt });
      expect(await ledgerLines('s')).toHaveLength(2);
      await lease.release();
      expect(await new FileSessionStore(dir).load('s')).toEqual(F.record('s', { status: 'running', updatedAt, ledger: [executing('u1')] }));
    });

    it('should ignore lines of an older epoch (a crash between a save and the compaction)', async () => {
      await store.save(F.record('s'));
      await store.transition('s', undefined, executing('u1'));
      const stale = await readFile(ledgerOf('s'), 'utf8');
      await store.save(F.record('s', { ledger: [executed('u1')] }));
      await writeFile(ledgerOf('s'), stale);
      expect((await new FileSessionStore(dir).load('s'))!.ledger).toEqual([executed('u1')]);
      expect(await store.transition('s', 'executed', { ...executed('u1'), state: 'posted' })).toBe(true);
      expect(await ledgerLines('s')).toHaveLength(2);
      expect((await new FileSessionStore(dir).load('s'))!.ledger).toEqual([{ ...executed('u1'), state: 'posted' }]);
    });

    describe('when the last line is torn', () => {
      it('should cut it, report it, and keep the lines before it', async () => {
        await store.save(F.record('s'));
        await store.transition('s', undefined, executing('u1'));
        const whole = await readFile(ledgerOf('s'), 'utf8');
        await writeFile(ledgerOf('s'), whole + '{"t":1,"e":{"toolUseId":"u1","na');
        const next = new FileSessionStore(dir, (file, what) => repairs.push(`${file}: ${what}`));
        expect((await next.load('s'))!.ledger).toEqual([executing('u1')]);
        expect(await readFile(ledgerOf('s'), 'utf8')).toBe(whole);
        expect(repairs).toEqual([expect.stringContaining(`${ledgerOf('s')}: cut a torn last line 3`)]);
        expect(await next.transition('s', 'executing', executed('u1'))).toBe(true);
        expect((await new FileSessionStore(dir).load('s'))!.ledger).toEqual([executed('u1')]);
      });
    });

    describe('when a line before the last is corrupt', () => {
      it('should be a store_error naming the file and the line', async () => {
        await store.save(F.record('s'));
        await store.transition('s', undefined, executing('u1'));
        await store.transition('s', 'executing', executed('u1'));
        const [header, , last] = await ledgerLines('s');
        await writeFile(ledgerOf('s'), lines(header, '{"t":1,"e":', last));
        const e = await storeErrorOf(new FileSessionStore(dir).load('s'));
        expect(e.message).toContain(ledgerOf('s'));
        expect(e.message).toContain('line 2 is corrupt');
        await storeErrorOf(new FileSessionStore(dir).transition('s', 'executed', executed('u1')));
      });
    });

    it('should be removed by delete and prune', async () => {
      for (const id of ['gone', 'old']) {
        await store.save(F.record(id, { updatedAt: 1 }));
        await store.transition(id, undefined, executing('u1'));
      }
      await store.delete('gone');
      await expect(readFile(ledgerOf('gone'))).rejects.toThrow(/ENOENT/);
      expect(await store.load('gone')).toBeUndefined();
      const lease = await store.acquire('old');
      expect((await store.load('old'))!.ledger).toEqual([executing('u1')]);
      await lease.release();
      expect(await store.prune({ maxAgeMs: 1, now: Date.now() + 60_000 })).toEqual(['old']);
      expect(await readdir(dir)).toEqual([]);
      await store.save(F.record('old'));
      expect((await store.load('old'))!.ledger).toEqual([]);
    });

    it('should close the ledgers of held sessions beyond maxOpenLogs and read them again on use', async () => {
      const few = new FileSessionStore(dir, undefined, { maxOpenLogs: 1 });
      const leases = [await few.acquire('a'), await few.acquire('b')];
      for (const id of ['a', 'b']) await few.save(F.record(id));
      expect(await few.transition('a', undefined, executing('u1'))).toBe(true);
      expect(await few.transition('b', undefined, executing('u2'))).toBe(true); // 'a' is evicted
      expect(await few.transition('a', undefined, executing('u1'))).toBe(false);
      expect(await few.transition('a', 'executing', executed('u1'))).toBe(true);
      expect((await few.load('a'))!.ledger).toEqual([executed('u1')]);
      expect((await few.load('b'))!.ledger).toEqual([executing('u2')]);
      for (const lease of leases) await lease.release();
    });
  });

  describe('a log after a crash', () => {
    describe('when the last line is torn (no trailing newline)', () => {
      beforeEach(async () => {
        await mkdir(join(dir, 's'), { recursive: true });
        await writeFile(logOf('s'), lines(HEADER, ...F.envelopes('s', 1, 2)) + '{"source":"agentrx","seq":3,"ses');
      });

      it('should cut it, report it and continue after the last whole line', async () => {
        expect(await store.lastSeq('s')).toBe(2);
        expect(await readFile(logOf('s'), 'utf8')).toBe(lines(HEADER, ...F.envelopes('s', 1, 2)));
        expect(repairs).toEqual([expect.stringContaining(`${logOf('s')}: cut a torn last line 4`)]);
        await store.append('s', [F.envelope('s', 3)]);
        await store.flush('s');
        expect(seqs(await new FileSessionStore(dir).read('s', 0))).toEqual([1, 2, 3]);
      });
    });

    describe('when the last line is unparsable but ends with a newline', () => {
      it('should cut it too', async () => {
        await mkdir(join(dir, 's'), { recursive: true });
        await writeFile(logOf('s'), lines(HEADER, F.envelope('s', 1), '\u0000\u0000\u0000'));
        expect(seqs(await store.read('s', 0))).toEqual([1]);
        expect(await readFile(logOf('s'), 'utf8')).toBe(lines(HEADER, F.envelope('s', 1)));
      });
    });

    describe('when only the header was torn', () => {
      it('should cut the file to empty and start at seq 1', async () => {
        await mkdir(join(dir, 's'), { recursive: true });
        await writeFile(logOf('s'), '{"vers');
        expect(await store.lastSeq('s')).toBe(0);
        await store.append('s', [F.envelope('s', 1)]);
        await store.flush('s');
        expect(await readFile(logOf('s'), 'utf8')).toBe(lines(HEADER, F.envelope('s', 1)));
      });
    });

    describe('when a live process holds the session (its write may be in progress)', () => {
      it('should leave the incomplete line alone and read the whole lines', async () => {
        const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
        try {
          await mkdir(join(dir, 's'), { recursive: true });
          await writeFile(lockOf('s'), JSON.stringify({ pid: child.pid, hostname: hostname(), at: Date.now() }));
          const text = lines(HEADER, F.envelope('s', 1)) + '{"source":"agentrx","seq":2';
          await writeFile(logOf('s'), text);
          expect(seqs(await store.read('s', 0))).toEqual([1]);
          expect(await readFile(logOf('s'), 'utf8')).toBe(text);
          expect(repairs).toEqual([]);
        } finally {
          child.kill();
          await once(child, 'exit');
        }
      });
    });
  });

  describe('a log that cannot be trusted', () => {
    const corrupt = async (text: string): Promise<Error> => {
      await mkdir(join(dir, 's'), { recursive: true });
      await writeFile(logOf('s'), text);
      const e = await storeErrorOf(store.read('s', 0));
      expect(e.message).toContain(logOf('s'));
      await storeErrorOf(store.lastSeq('s'));
      await storeErrorOf(store.append('s', [F.envelope('s', 9)]));
      return e;
    };

    it('should be a store_error naming the line for a corrupt line in the middle', async () => {
      const e = await corrupt(lines(HEADER, F.envelope('s', 1), '{"seq":2,,,', F.envelope('s', 3)));
      expect(e.message).toMatch(/line 3 is corrupt/);
    });

    it('should be a store_error for a log written by a newer version', async () => {
      const e = await corrupt(lines({ version: 3 }, F.envelope('s', 1)));
      expect(e.message).toMatch(/newer agentrx \(log version 3; this build reads version 2\)/);
    });

    it('should be a store_error for a file without the header', async () => {
      const e = await corrupt(lines(F.envelope('s', 1)));
      expect(e.message).toMatch(/not a session log header/);
    });

    it('should be a store_error naming the line for a seq gap inside the file', async () => {
      const e = await corrupt(lines(HEADER, F.envelope('s', 1), F.envelope('s', 3)));
      expect(e.message).toMatch(/line 3 holds seq 3 where seq 2 was expected \(a gap/);
    });

    it('should be a store_error for a repeated seq', async () => {
      const e = await corrupt(lines(HEADER, F.envelope('s', 1), F.envelope('s', 1)));
      expect(e.message).toMatch(/a repeat/);
    });
  });

  describe('.load', () => {
    const bad = async (content: string, pattern: RegExp): Promise<void> => {
      await mkdir(join(dir, 's'), { recursive: true });
      await writeFile(recordOf('s'), content);
      const e = await storeErrorOf(store.load('s'));
      expect(e.message).toContain(recordOf('s'));
      expect(e.message).toMatch(pattern);
      await storeErrorOf(store.list());
    };

    it('should be a store_error when the record belongs to another session', async () => {
      await bad(JSON.stringify(F.record('other')), /holds session 'other', not 's' as its folder says/);
    });

    it('should be a store_error when the record is not JSON', async () => {
      await bad('{"version":2,"sess', /not valid JSON/);
    });

    it('should be a store_error when the record is newer', async () => {
      await bad(JSON.stringify({ ...F.record('s'), version: 3 }), /newer agentrx \(version 3/);
    });

    it('should be a store_error when the record is a v1 record', async () => {
      await bad(JSON.stringify({ ...F.record('s'), version: 1 }), /not a version-2 session record/);
    });
  });

  describe('disk full', () => {
    it('should make flush a store_error naming the log, keep the envelopes, and write them once space is back', async () => {
      await store.save(F.record('s'));
      await symlink('/dev/full', logOf('s'));
      await store.append('s', F.envelopes('s', 1, 3));
      const e = await storeErrorOf(store.flush('s'));
      expect(e.message).toContain(logOf('s'));
      expect(e.message).toContain('ENOSPC');
      expect(seqs(await store.read('s', 0))).toEqual([1, 2, 3]);
      await rm(logOf('s'));
      await store.flush('s');
      expect(await readFile(logOf('s'), 'utf8')).toBe(lines(HEADER, ...F.envelopes('s', 1, 3)));
    });

    it('should make a buffer-full append a store_error with ENOSPC and keep the envelopes buffered', async () => {
      const small = new FileSessionStore(dir, undefined, { bufferBytes: 1 });
      await mkdir(join(dir, 's'), { recursive: true });
      await symlink('/dev/full', logOf('s'));
      const e = await storeErrorOf(small.append('s', F.envelopes('s', 1, 2)));
      expect(e.message).toContain(logOf('s'));
      expect(e.message).toContain('ENOSPC');
      expect(await small.lastSeq('s')).toBe(2);
      await rm(logOf('s'));
      await small.flush('s');
      expect(await readFile(logOf('s'), 'utf8')).toBe(lines(HEADER, ...F.envelopes('s', 1, 2)));
    });

    it('should make a record write a store_error naming record.json and leave no temp file', async () => {
      await mkdir(recordOf('s'), { recursive: true }); // a directory where the record goes: rename fails
      const e = await storeErrorOf(store.save(F.record('s')));
      expect(e.message).toContain(recordOf('s'));
      expect(await readdir(join(dir, 's'))).toEqual(['record.json']);
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

    describe('.release', () => {
      it('should flush buffered appends and remove the lock', async () => {
        const lease = await store.acquire('s');
        await store.append('s', F.envelopes('s', 1, 2));
        await lease.release();
        expect(await readdir(join(dir, 's'))).toEqual(['log.jsonl']);
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
        await writeFile(logOf('s'), lines({ version: 9 }));
        const e = await storeErrorOf(recorder(store.tail('s', 0)).upTo(1));
        expect(e.message).toMatch(/newer agentrx/);
      });
    });
  });

  describe('.prune', () => {
    it('should keep a session held by a live process and one whose record cannot be read', async () => {
      await store.save(F.record('held', { updatedAt: 1 }));
      await store.save(F.record('bad', { updatedAt: 1 }));
      await writeFile(recordOf('bad'), '{');
      await store.save(F.record('old', { updatedAt: 1 }));
      const other = new FileSessionStore(dir);
      const lease = await other.acquire('held');
      expect(await store.prune({ maxAgeMs: 1, now: 10 })).toEqual(['old']);
      expect((await readdir(dir)).sort()).toEqual(['bad', 'held']);
      expect(repairs).toEqual([expect.stringMatching(/record\.json: kept by retention: .*not valid JSON/)]);
      await lease.release();
    });

    it('should delete a folder without a record by its age', async () => {
      await store.append('orphan', [F.envelope('orphan', 1)]);
      await store.flush('orphan');
      expect(await store.prune({ maxAgeMs: 1, now: Date.now() + 60_000 })).toEqual(['orphan']);
      expect(await readdir(dir)).toEqual([]);
    });
  });
});
