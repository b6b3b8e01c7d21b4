import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSessionStore } from '../../../src/core/store/file-session-store.js';
import type { SessionRecord } from '../../../src/core/store/session-store.js';

const record = (sessionId: string): SessionRecord => ({
  version: 1,
  sessionId,
  provider: 'scripted',
  updatedAt: 1,
  ledger: [{ toolUseId: 'u1', name: 'echo', state: 'executed', result: { toolUseId: 'u1', content: 'HI', isError: false } }],
});

describe('FileSessionStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentrx-store-'));
  });

  describe('.save then .load', () => {
    it('should round-trip the record and leave no temp files', async () => {
      const store = new FileSessionStore(dir);
      await store.save(record('a/b c'));
      expect(await store.load('a/b c')).toEqual(record('a/b c'));
      expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    });
  });

  describe('.load', () => {
    describe('when no record exists', () => {
      it('should return undefined', async () => {
        expect(await new FileSessionStore(dir).load('missing')).toBeUndefined();
      });
    });

    describe('when the file is corrupt', () => {
      it('should report it, move it aside and return undefined', async () => {
        const reports: string[] = [];
        const store = new FileSessionStore(dir, (file, reason) => reports.push(`${file}: ${reason}`));
        await writeFile(join(dir, 's1.json'), '{"version":1, "sessionId": "s1", "ledg');
        expect(await store.load('s1')).toBeUndefined();
        expect(reports).toHaveLength(1);
        expect(reports[0]).toContain('s1.json');
        const files = await readdir(dir);
        expect(files.some((f) => f.startsWith('s1.json.corrupt-'))).toBe(true);
        expect(files).not.toContain('s1.json');
      });
    });

    describe('when the file belongs to another session', () => {
      it('should treat it as corrupt', async () => {
        const reports: string[] = [];
        const store = new FileSessionStore(dir, (_f, reason) => reports.push(reason));
        await writeFile(join(dir, 's2.json'), JSON.stringify(record('other')));
        expect(await store.load('s2')).toBeUndefined();
        expect(reports[0]).toContain('not a version-1 session record');
      });
    });
  });

  describe('.save', () => {
    describe('when overwriting', () => {
      it('should replace the whole record atomically', async () => {
        const store = new FileSessionStore(dir);
        await store.save(record('s'));
        await store.save({ ...record('s'), ledger: [] });
        expect(JSON.parse(await readFile(join(dir, 's.json'), 'utf8')).ledger).toEqual([]);
      });
    });
  });
});
