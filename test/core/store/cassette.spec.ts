import { exportCassette, formatCassette, parseCassette, readWholeLog, type Cassette } from '../../../src/core/store/cassette.js';
import type { SessionEvent } from '../../../src/core/events/session-event.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { SESSION_LOG_VERSION, type SessionRecord } from '../../../src/core/store/session-store.js';

const record: SessionRecord = {
  version: SESSION_LOG_VERSION,
  sessionId: 's1',
  provider: 'local',
  threadId: 's1',
  status: 'completed',
  createdAt: 1,
  updatedAt: 2,
  ledger: [],
};
const envelope = (seq: number): SessionEvent => ({
  seq,
  sessionId: 's1',
  turn: 1,
  provider: 'local',
  source: 'provider',
  raw: { type: 'chunk', n: seq },
  at: 1000 + seq,
});

describe('cassette', () => {
  describe('exportCassette', () => {
    describe('when the log is longer than one page', () => {
      it('should hold the record and every envelope in order', async () => {
        const store = new MemorySessionStore();
        await store.save(record);
        await store.append(
          's1',
          Array.from({ length: 2_500 }, (_, i) => envelope(i + 1)),
        );
        const cassette = await exportCassette(store, 's1');
        expect(cassette.version).toBe(2);
        expect(cassette.record).toBe(record);
        expect(cassette.envelopes.map((e) => e.seq)).toEqual(Array.from({ length: 2_500 }, (_, i) => i + 1));
        expect(await readWholeLog(store, 's1')).toHaveLength(2_500);
      });
    });

    describe('when the store has no such session', () => {
      it('should fail with store_error naming it', async () => {
        await expect(exportCassette(new MemorySessionStore(), 'nope')).rejects.toMatchObject({
          code: 'store_error',
          message: expect.stringContaining("no session 'nope'"),
        });
      });
    });
  });

  describe('formatCassette', () => {
    describe('when parsed back', () => {
      it('should give the same cassette, one envelope per line', () => {
        const cassette: Cassette = { version: SESSION_LOG_VERSION, record, envelopes: [envelope(1), envelope(2)] };
        const text = formatCassette(cassette);
        expect(text.split('\n')).toHaveLength(5);
        expect(parseCassette(text, 'c.json')).toEqual(cassette);
        expect(parseCassette(formatCassette({ ...cassette, envelopes: [] }), 'c.json').envelopes).toEqual([]);
      });
    });
  });

  describe('parseCassette', () => {
    const good = formatCassette({ version: SESSION_LOG_VERSION, record, envelopes: [envelope(1), envelope(2)] });
    const cases: [string, string, RegExp][] = [
      ['empty text', '  \n', /^cassette c\.json is empty$/],
      ['text that is not JSON', 'hello', /^cassette c\.json is not valid JSON/],
      ['a cut-off file', good.slice(0, 120), /^cassette c\.json is truncated/],
      ['an array', '[]', /is not an agentrx cassette/],
      ['an older version', good.replace('"version":2,"record"', '"version":1,"record"'), /has unsupported version 1 \(this build reads version 2\)/],
      ['a record without a provider', good.replace('"provider":"local","threadId"', '"threadId"'), /has no valid record/],
      ['an envelope without raw', good.replace('"raw":{"type":"chunk","n":2},', ''), /has a malformed envelope at index 1/],
      ['envelopes that are not a list', '{"version":2,"record":{"sessionId":"s","provider":"p"},"envelopes":{}}', /has no envelope list/],
    ];
    it.each(cases)('should refuse %s with a store_error saying what is wrong', (_name, text, message) => {
      let error: unknown;
      try {
        parseCassette(text, 'c.json');
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'store_error', message: expect.stringMatching(message), details: { file: 'c.json' } });
    });
  });
});
