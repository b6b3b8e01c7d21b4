import { existsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { tempDir, tempDirSync } from './temp-dir.js';

const PREFIX = 'agentrx-temp-dir-spec-';

/** Folders made by the tests below, checked by the tests (and the file-level hook) after them. */
const made = { passing: [] as string[], failing: '', shared: '', sharedSync: '' };

describe('tempDir', () => {
  describe('when called in a test that passes', () => {
    it('should make a fresh folder under os.tmpdir() named after the prefix, async and sync', async () => {
      made.passing = [await tempDir(PREFIX), tempDirSync(PREFIX)];
      const [a, b] = made.passing as [string, string];
      expect(a).not.toBe(b);
      for (const dir of [a, b]) {
        expect(statSync(dir).isDirectory()).toBe(true);
        expect(dirname(dir)).toBe(tmpdir());
        expect(basename(dir)).toMatch(new RegExp(`^${PREFIX}.{6}$`));
      }
      // Not empty: the removal is recursive.
      writeFileSync(join(a, 'file.txt'), 'x');
    });

    it('should have removed both folders after that test', () => {
      expect(made.passing).toHaveLength(2);
      expect(made.passing.filter((dir) => existsSync(dir))).toEqual([]);
    });
  });

  describe('when called in a test that fails', () => {
    it.failing('should still remove the folder (this test throws on purpose)', async () => {
      made.failing = await tempDir(PREFIX);
      expect(existsSync(made.failing)).toBe(true);
      throw new Error('the test fails after making its folder');
    });

    it('should have removed the folder of the failed test', () => {
      expect(made.failing).not.toBe('');
      expect(existsSync(made.failing)).toBe(false);
    });
  });

  describe("when called in a beforeAll with scope 'file'", () => {
    beforeAll(async () => {
      made.shared = await tempDir(PREFIX, { scope: 'file' });
      made.sharedSync = tempDirSync(PREFIX, { scope: 'file' });
    });

    it('should keep the folders across the tests of the file (first test writes)', () => {
      writeFileSync(join(made.shared, 'kept.txt'), 'kept');
      expect(statSync(made.sharedSync).isDirectory()).toBe(true);
    });

    it('should keep the folders across the tests of the file (next test reads)', () => {
      expect(existsSync(join(made.shared, 'kept.txt'))).toBe(true);
      expect(existsSync(made.sharedSync)).toBe(true);
    });
  });
});

// Declared after the import of temp-dir.ts, so it runs after its afterAll (see the file comment there).
afterAll(() => {
  expect(made.shared).not.toBe('');
  expect([made.shared, made.sharedSync].filter((dir) => existsSync(dir))).toEqual([]);
});
