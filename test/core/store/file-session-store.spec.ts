import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAgentRxError } from '../../../src/core/errors.js';
import { FileSessionStore } from '../../../src/core/store/file-session-store.js';
import { describeSessionStore, recorder, seqs } from './session-store.conformance.js';
import { SessionStoreFixtures as F } from './session-store.fixtures.js';

const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'agentrx-store-'));

describeSessionStore('FileSessionStore', async () => {
  const dir = await tempDir();
  return { store: new FileSessionStore(dir, undefined, { pollMs: 20 }), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

async function storeErrorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    expect(isAgentRxError(e, 'store_error')).toBe(true);
    return e as Error;
  }
  throw new Error('expected a store_error, but the call succeeded');
}

const lines = (...values: unknown[]): string => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)) + '\n').join('');
const HEADER = { version: 2 };

describe('FileSessionStore', () => {
  let dir: string;
  let repairs: string[];
  let store: FileSessionStore;
  const logOf = (id: string): string => join(dir, encodeURIComponent(id), 'log.jsonl');
  const recordOf = (id: string): string => join(dir, encodeURIComponent(id), 'record.json');
  const lockOf = (id: string): string => join(dir, encodeURIComponent(id), 'owner.lock');

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
      expect(JSON.parse(await readFile(recordOf('a/b c'), 'utf8'))).toEqual(F.record('a/b c'));
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
