import { isAgentRxError } from '../../../src/core/errors.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { recordProblem } from '../../../src/core/store/record-shape.js';
import type { SessionRecord } from '../../../src/core/store/session-store.js';
import { SessionStoreFixtures as F } from './session-store.fixtures.js';

/** A record as a caller without types may hand it over (or as a hand edit leaves it). */
const untyped = (over: Record<string, unknown>): SessionRecord => ({ ...F.record('bad'), ...over }) as SessionRecord;

describe('recordProblem', () => {
  describe('when the record is of the declared shape', () => {
    it('should find nothing, with or without the optional fields', () => {
      expect(recordProblem(F.record('s'))).toBeUndefined();
      expect(recordProblem(F.record('s', { transcript: [], error: { code: 'timeout', message: 'late' } }))).toBeUndefined();
    });
  });

  describe('when a field has the wrong type or is missing', () => {
    it.each([
      [{ updatedAt: 'yesterday' }, `field 'updatedAt' is "yesterday", not a time in epoch ms`],
      [{ status: 42 }, `field 'status' is 42, not one of running, idle, completed, failed, cancelled`],
      [{ provider: undefined }, `field 'provider' is missing`],
      [{ ledger: 'none' }, `field 'ledger' is "none", not an array of ledger entries`],
      [{ ledger: [{ toolUseId: 'u1' }] }, 'ledger entry 1: {"toolUseId":"u1"} is not a ledger entry { toolUseId, name, state }'],
      [{ error: 'boom' }, `field 'error' is "boom", not { code, message }`],
    ])('should name it (%j)', (over, problem) => {
      expect(recordProblem(untyped(over))).toBe(problem);
    });
  });
});

describe('MemorySessionStore with records of the wrong shape', () => {
  describe('.save', () => {
    describe('when the record has updatedAt: "yesterday" or status: 42', () => {
      it('should refuse it with a store_error naming the session and the field, so listing and loading never see it', async () => {
        const store = new MemorySessionStore();
        await store.save(F.record('good'));
        for (const over of [{ updatedAt: 'yesterday' }, { status: 42 }]) {
          const e = await store.save(untyped(over)).then(
            () => undefined,
            (err: unknown) => err,
          );
          expect(isAgentRxError(e, 'store_error')).toBe(true);
          expect((e as Error).message).toMatch(/^session 'bad': cannot save a record whose field '(updatedAt|status)' is /);
        }
        expect((await store.list()).map((r) => r.sessionId)).toEqual(['good']);
        expect(await store.load('bad')).toBeUndefined();
      });
    });
  });
});
