import { firstValueFrom, ReplaySubject, take, toArray, type Observable, type Subscription } from 'rxjs';
import { isAgentRxError } from '../../../src/core/errors.js';
import type { SessionEvent } from '../../../src/core/events/session-event.js';
import type { PrunableSessionStore } from '../../../src/core/store/retention.js';
import type { SessionStore } from '../../../src/core/store/session-store.js';
import { SessionStoreFixtures as F } from './session-store.fixtures.js';

/** What a conformance run gets from its engine: a fresh, empty store and how to dispose of it. */
export interface StoreUnderTest {
  readonly store: SessionStore & Partial<PrunableSessionStore>;
  cleanup(): Promise<void>;
}

/** Records what an Observable emits; `upTo(n)` resolves with the first `n` values once they arrived. */
export function recorder(source: Observable<SessionEvent>): { sub: Subscription; upTo(n: number): Promise<SessionEvent[]>; count(): number } {
  const seen = new ReplaySubject<SessionEvent>();
  let count = 0;
  const sub = source.subscribe({
    next: (v) => {
      count++;
      seen.next(v);
    },
    error: (e) => seen.error(e),
  });
  return { sub, upTo: (n) => firstValueFrom(seen.pipe(take(n), toArray())), count: () => count };
}

/** The seqs of `envs`. */
export const seqs = (envs: readonly SessionEvent[]): number[] => envs.map((e) => e.seq);

/** The `store_error` `p` rejects with (fails the test if it resolves or rejects with anything else). */
export async function storeErrorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    expect(isAgentRxError(e, 'store_error')).toBe(true);
    return e as Error;
  }
  throw new Error('expected a store_error, but the call succeeded');
}

/**
 * The SessionStore contract, written once: `store-engines.spec.ts` runs it over every registered
 * engine with a factory of fresh, empty stores opened through the engine's registration. Engines
 * with `prune` also run the retention cases.
 */
export function describeSessionStore(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`${name} (SessionStore conformance)`, () => {
    let store: StoreUnderTest['store'];
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterEach(async () => {
      await cleanup();
    });

    describe('.save then .load', () => {
      it('should round-trip the record, ids with any characters included', async () => {
        const record = F.record('a/b c?%', {
          ledger: [{ toolUseId: 'u1', name: 'echo', state: 'executed', result: { toolUseId: 'u1', content: 'HI', isError: false } }],
        });
        await store.save(record);
        expect(await store.load('a/b c?%')).toEqual(record);
      });

      it('should replace the whole record on a second save', async () => {
        await store.save(F.record('s', { status: 'running' }));
        await store.save(F.record('s', { status: 'completed', updatedAt: 2_000 }));
        expect(await store.load('s')).toEqual(F.record('s', { status: 'completed', updatedAt: 2_000 }));
      });
    });

    describe('.load', () => {
      it('should give undefined for a session never saved, and its log should be empty', async () => {
        expect(await store.load('missing')).toBeUndefined();
        expect(await store.lastSeq('missing')).toBe(0);
        expect(await store.read('missing', 0)).toEqual([]);
      });
    });

    describe('.list', () => {
      it('should give every record, newest updatedAt first', async () => {
        await store.save(F.record('old', { updatedAt: 1 }));
        await store.save(F.record('new', { updatedAt: 3 }));
        await store.save(F.record('mid', { updatedAt: 2 }));
        expect((await store.list()).map((r) => r.sessionId)).toEqual(['new', 'mid', 'old']);
      });

      it('should be empty for an empty store', async () => {
        expect(await store.list()).toEqual([]);
      });
    });

    describe('.findByThread', () => {
      it('should name the session last saved with a thread id, and nothing for an unknown or deleted one', async () => {
        expect(store.findByThread).toBeDefined();
        await store.save(F.record('s-one', { threadId: 'thread/with ?chars' }));
        expect(await store.findByThread!('thread/with ?chars')).toBe('s-one');
        expect(await store.findByThread!('never-saved')).toBeUndefined();
        await store.save(F.record('s-two', { threadId: 'thread/with ?chars' }));
        expect(await store.findByThread!('thread/with ?chars')).toBe('s-two');
        await store.delete('s-two');
        expect(await store.findByThread!('thread/with ?chars')).toBeUndefined();
        // Listing is not disturbed by the index.
        expect((await store.list()).map((r) => r.sessionId)).toEqual(['s-one']);
      });
    });

    describe('.delete', () => {
      it('should remove the record and the log', async () => {
        await store.save(F.record('gone'));
        await store.append('gone', F.envelopes('gone', 1, 3));
        await store.flush('gone');
        await store.save(F.record('kept'));
        await store.delete('gone');
        expect(await store.load('gone')).toBeUndefined();
        expect(await store.lastSeq('gone')).toBe(0);
        expect(await store.read('gone', 0)).toEqual([]);
        expect((await store.list()).map((r) => r.sessionId)).toEqual(['kept']);
      });

      it('should let the session start over from seq 1', async () => {
        await store.append('s', F.envelopes('s', 1, 2));
        await store.flush('s');
        await store.delete('s');
        await store.append('s', [F.envelope('s', 1)]);
        await store.flush('s');
        expect(seqs(await store.read('s', 0))).toEqual([1]);
      });
    });

    describe('.transition', () => {
      const executing = { toolUseId: 'u1', name: 'echo', state: 'executing' } as const;
      const executed = { toolUseId: 'u1', name: 'echo', state: 'executed', result: { toolUseId: 'u1', content: 'ok', isError: false } } as const;

      it('should add an absent entry when expected is undefined', async () => {
        await store.save(F.record('s'));
        expect(await store.transition('s', undefined, executing)).toBe(true);
        expect((await store.load('s'))!.ledger).toEqual([executing]);
      });

      it('should replace the entry when it is in the expected state', async () => {
        await store.save(F.record('s'));
        await store.transition('s', undefined, executing);
        expect(await store.transition('s', 'executing', executed)).toBe(true);
        expect((await store.load('s'))!.ledger).toEqual([executed]);
      });

      it('should return false and change nothing when the state is not the expected one', async () => {
        await store.save(F.record('s'));
        await store.transition('s', undefined, executing);
        const before = await store.load('s');
        expect(await store.transition('s', 'executed', { ...executed, state: 'posted' })).toBe(false);
        expect(await store.transition('s', undefined, executed)).toBe(false);
        expect(await store.load('s')).toEqual(before);
      });

      it('should let exactly one of two racing transitions win', async () => {
        await store.save(F.record('s'));
        const results = await Promise.all([store.transition('s', undefined, executing), store.transition('s', undefined, executing)]);
        expect(results.sort()).toEqual([false, true]);
        expect((await store.load('s'))!.ledger).toEqual([executing]);
      });

      it('should be a store_error without a record', async () => {
        const e = await storeErrorOf(store.transition('none', undefined, executing));
        expect(e.message).toContain('none');
      });
    });

    describe('.append', () => {
      it('should skip envelopes whose seq the log holds (idempotent)', async () => {
        await store.append('s', F.envelopes('s', 1, 3));
        await store.append('s', F.envelopes('s', 1, 3));
        await store.append('s', F.envelopes('s', 2, 5));
        await store.flush('s');
        await store.append('s', F.envelopes('s', 4, 5));
        expect(seqs(await store.read('s', 0))).toEqual([1, 2, 3, 4, 5]);
        expect(await store.lastSeq('s')).toBe(5);
      });

      it('should be a store_error naming the gap, keeping the log as it was', async () => {
        await store.append('s', [F.envelope('s', 1)]);
        const e = await storeErrorOf(store.append('s', [F.envelope('s', 3)]));
        expect(e.message).toMatch(/seq 3 would leave a gap after seq 1/);
        expect(await store.lastSeq('s')).toBe(1);
      });

      it('should keep the envelopes of a batch before its gap', async () => {
        await storeErrorOf(store.append('s', [F.envelope('s', 1), F.envelope('s', 2), F.envelope('s', 4)]));
        expect(seqs(await store.read('s', 0))).toEqual([1, 2]);
      });

      it('should refuse a first envelope other than seq 1', async () => {
        await storeErrorOf(store.append('s', [F.envelope('s', 2)]));
        expect(await store.lastSeq('s')).toBe(0);
      });
    });

    describe('.flush', () => {
      it('should succeed on a session with nothing to flush', async () => {
        await expect(store.flush('nothing')).resolves.toBeUndefined();
      });

      it('should keep every envelope readable, equal to what was appended', async () => {
        const envs = F.envelopes('s', 1, 4);
        await store.append('s', envs);
        await store.flush('s');
        expect(await store.read('s', 0)).toEqual(envs);
      });
    });

    describe('.read', () => {
      beforeEach(async () => {
        await store.append('s', F.envelopes('s', 1, 6));
        await store.flush('s');
        await store.append('s', F.envelopes('s', 7, 10));
      });

      it('should page by afterSeq and limit, flushed or not', async () => {
        expect(seqs(await store.read('s', 0, 3))).toEqual([1, 2, 3]);
        expect(seqs(await store.read('s', 3, 3))).toEqual([4, 5, 6]);
        expect(seqs(await store.read('s', 5, 3))).toEqual([6, 7, 8]);
        expect(seqs(await store.read('s', 9, 3))).toEqual([10]);
        expect(await store.read('s', 10, 3)).toEqual([]);
        expect(await store.read('s', 50)).toEqual([]);
      });

      it('should give everything with the default limit', async () => {
        expect(seqs(await store.read('s', 0))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      });

      it('should cap the default page at 1,000 envelopes', async () => {
        await store.append('s', F.envelopes('s', 11, 1_005));
        const page = await store.read('s', 0);
        expect(page).toHaveLength(1_000);
        expect(page[999]!.seq).toBe(1_000);
      });
    });

    describe('.lastSeq', () => {
      it('should follow appends, flushed or not', async () => {
        await store.append('s', F.envelopes('s', 1, 2));
        expect(await store.lastSeq('s')).toBe(2);
        await store.flush('s');
        await store.append('s', [F.envelope('s', 3)]);
        expect(await store.lastSeq('s')).toBe(3);
      });
    });

    describe('.tail', () => {
      it('should replay after afterSeq, then follow appends made after subscribing', async () => {
        await store.append('s', F.envelopes('s', 1, 4));
        await store.flush('s');
        const rec = recorder(store.tail('s', 2));
        expect(seqs(await rec.upTo(2))).toEqual([3, 4]);
        await store.append('s', F.envelopes('s', 5, 6));
        await store.flush('s');
        await store.append('s', [F.envelope('s', 7)]);
        expect(seqs(await rec.upTo(5))).toEqual([3, 4, 5, 6, 7]);
        rec.sub.unsubscribe();
      });

      it('should deliver every envelope once, in order, while appends race with the replay', async () => {
        await store.append('s', F.envelopes('s', 1, 20));
        const rec = recorder(store.tail('s', 0));
        const appends: Promise<void>[] = [];
        for (let seq = 21; seq <= 60; seq++) {
          appends.push(store.append('s', [F.envelope('s', seq)]));
          if (seq % 10 === 0) appends.push(store.flush('s'));
        }
        await Promise.all(appends);
        expect(seqs(await rec.upTo(60))).toEqual(F.envelopes('s', 1, 60).map((e) => e.seq));
        rec.sub.unsubscribe();
      });

      it('should start following a session that has no log yet', async () => {
        const rec = recorder(store.tail('new', 0));
        await store.append('new', F.envelopes('new', 1, 2));
        expect(seqs(await rec.upTo(2))).toEqual([1, 2]);
        rec.sub.unsubscribe();
      });

      it('should stop delivering once unsubscribed', async () => {
        await store.append('s', [F.envelope('s', 1)]);
        const rec = recorder(store.tail('s', 0));
        await rec.upTo(1);
        rec.sub.unsubscribe();
        // A second tail seeing seq 2 is the signal that the first one would have seen it too.
        const witness = recorder(store.tail('s', 1));
        await store.append('s', [F.envelope('s', 2)]);
        await store.flush('s');
        expect(seqs(await witness.upTo(1))).toEqual([2]);
        witness.sub.unsubscribe();
        expect(rec.count()).toBe(1);
      });
    });

    describe('.acquire', () => {
      it('should refuse a second acquire with a store_error until the first is released', async () => {
        const lease = await store.acquire('s');
        const e = await storeErrorOf(store.acquire('s'));
        expect(e.message).toContain("'s'");
        await lease.release();
        const again = await store.acquire('s');
        await again.release();
      });

      it('should hold sessions independently', async () => {
        const a = await store.acquire('a');
        const b = await store.acquire('b');
        await a.release();
        await b.release();
      });

      it('should treat a second release as a no-op', async () => {
        const lease = await store.acquire('s');
        await lease.release();
        const other = await store.acquire('s');
        await lease.release();
        await storeErrorOf(store.acquire('s'));
        await other.release();
      });
    });

    describe('.prune', () => {
      const day = 86_400_000;
      const now = 100 * day;

      beforeEach(async () => {
        await store.save(F.record('d1', { updatedAt: now - 10 * day }));
        await store.save(F.record('d5', { updatedAt: now - 5 * day }));
        await store.save(F.record('d3', { updatedAt: now - 3 * day }));
        await store.save(F.record('d0', { updatedAt: now }));
      });

      const ids = async (): Promise<string[]> => (await store.list()).map((r) => r.sessionId);

      it('should delete the oldest sessions beyond maxSessions', async () => {
        if (!store.prune) return;
        expect(await store.prune({ maxSessions: 2, now })).toEqual(['d1', 'd5']);
        expect(await ids()).toEqual(['d0', 'd3']);
      });

      it('should delete the sessions older than maxAgeMs, log included', async () => {
        if (!store.prune) return;
        await store.append('d5', F.envelopes('d5', 1, 2));
        await store.flush('d5');
        expect(await store.prune({ maxAgeMs: 4 * day, now })).toEqual(['d1', 'd5']);
        expect(await ids()).toEqual(['d0', 'd3']);
        expect(await store.lastSeq('d5')).toBe(0);
      });

      it('should never delete a held or running session', async () => {
        if (!store.prune) return;
        await store.save(F.record('d5', { updatedAt: now - 5 * day, status: 'running' }));
        const lease = await store.acquire('d1');
        expect(await store.prune({ maxSessions: 1, maxAgeMs: 1, now })).toEqual(['d3']);
        expect(await ids()).toEqual(['d0', 'd5', 'd1']);
        await lease.release();
        // An engine that keeps nothing once a session closed (keepsClosed false) forgot d1 at its
        // release, by design; every other engine leaves it to the next prune.
        if (store.keepsClosed === false) expect(await ids()).toEqual(['d0', 'd5']);
        else expect(await store.prune({ maxSessions: 1, now })).toEqual(['d1']);
      });

      it('should delete nothing without maxAgeMs and maxSessions', async () => {
        if (!store.prune) return;
        expect(await store.prune({ now })).toEqual([]);
        expect(await ids()).toHaveLength(4);
      });
    });
  });
}
