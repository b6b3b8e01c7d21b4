import type { AgentRxError } from '../../../../src/core/errors.js';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSessionStore } from '../../../../src/core/store/file/file-session-store.js';
import { JOURNAL_VERSION } from '../../../../src/core/store/file/journal-lines.js';
import { SessionStoreFixtures as F } from '../session-store.fixtures.js';
import { rejectedWith } from '../../../support/agentrx-errors.js';

const storeError = (p: Promise<unknown>): Promise<AgentRxError> => rejectedWith('store_error', p);

const lines = (...values: unknown[]): string => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)) + '\n').join('');
const header = (id: string): { version: number; sessionId: string } => ({ version: JOURNAL_VERSION, sessionId: id });
/** The fields of a record save line (what `r` holds: the record without its ledger). */
const fields = (id: string, over: Record<string, unknown> = {}): Record<string, unknown> => {
  const { ledger: _ledger, ...rest } = F.record(id);
  return { ...rest, ...over };
};

describe('FileSessionStore with journals edited by hand', () => {
  let dir: string;
  let repairs: string[];
  let store: FileSessionStore;
  const journalOf = (id: string): string => join(dir, encodeURIComponent(id), 'journal.jsonl');
  const writeJournal = async (id: string, text: string): Promise<void> => {
    await mkdir(join(dir, encodeURIComponent(id)), { recursive: true });
    await writeFile(journalOf(id), text);
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentrx-store-'));
    repairs = [];
    store = new FileSessionStore(dir, (file, what) => repairs.push(`${file}: ${what}`), { pollMs: 20 });
    await store.save(F.record('good', { updatedAt: 5_000 }));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('a line of valid JSON but the wrong shape', () => {
    describe.each([
      ['a record save whose d is not a list', { r: { status: 'idle' }, d: 5 }, /line 3 is a record save whose d is not a list of field names/],
      ['a record save whose ledger holds null', { r: {}, L: [null] }, /line 3 is a record save whose ledger entry 1: null is not a ledger entry/],
      [
        'a ledger transition without a name',
        { l: { toolUseId: 'u1', state: 'executing' }, at: 1 },
        /line 3 is a ledger transition whose entry .* is not a ledger entry/,
      ],
      [
        'a record save whose transcript delta is a string',
        { r: {}, x: 0, tx: 'hello' },
        /line 3 is a record save whose transcript items \(tx\) are not an array/,
      ],
      ['an array', [1, 2], /line 3 is JSON but not a journal line/],
    ])('when it is %s (the last line)', (_what, line, expected) => {
      beforeEach(async () => {
        await writeJournal('bad', lines(header('bad'), { r: fields('bad'), L: [] }, line));
      });

      it('should make opening it a store_error naming the file and the line, leaving the line in place', async () => {
        const before = await readFile(journalOf('bad'), 'utf8');
        const e = await storeError(store.load('bad'));
        expect(e.message).toMatch(expected);
        expect(e.message).toContain(journalOf('bad'));
        expect(e.details).toMatchObject({ file: journalOf('bad'), line: 3 });
        await storeError(store.acquire('bad'));
        expect(await readFile(journalOf('bad'), 'utf8')).toBe(before);
      });

      it('should list the other sessions and leave it out with a warning naming it and the line', async () => {
        expect((await store.list()).map((r) => r.sessionId)).toEqual(['good']);
        expect(repairs).toEqual([expect.stringContaining(`${journalOf('bad')}: session 'bad' is left out of the list: `)]);
        expect(repairs[0]).toMatch(expected);
      });
    });
  });

  describe('a record with fields of the wrong type', () => {
    describe.each([
      ['updatedAt: "yesterday"', { updatedAt: 'yesterday' }, /line 2 is a record save whose field 'updatedAt' is "yesterday", not a time in epoch ms/],
      ['status: 42', { status: 42 }, /line 2 is a record save whose field 'status' is 42, not one of running, idle, completed, failed, cancelled/],
    ])('when the save holds %s', (_what, over, expected) => {
      beforeEach(async () => {
        await writeJournal('bad', lines(header('bad'), { r: fields('bad', over), L: [] }, { e: F.envelope('bad', 1) }));
      });

      it('should make opening it a store_error naming the line and the field', async () => {
        const e = await storeError(store.load('bad'));
        expect(e.message).toMatch(expected);
        expect(e.details).toMatchObject({ line: 2 });
        await storeError(store.read('bad', 0));
      });

      it('should list the other sessions and leave it out with a warning naming it, the line and the field', async () => {
        expect((await store.list()).map((r) => r.sessionId)).toEqual(['good']);
        expect(repairs).toEqual([expect.stringMatching(new RegExp(`session 'bad' is left out of the list: .*${expected.source}`))]);
      });
    });
  });

  describe('a record missing a field, in a journal that reads', () => {
    it('should leave it out of the list with a warning naming the field', async () => {
      const { status: _status, ...rest } = fields('bad');
      await writeJournal('bad', lines(header('bad'), { r: rest, L: [] }));
      expect((await store.list()).map((r) => r.sessionId)).toEqual(['good']);
      expect(repairs).toEqual([expect.stringContaining("session 'bad' is left out of the list: field 'status' is missing")]);
    });
  });
});
