import { firstValueFrom, take, toArray } from 'rxjs';
import { MemorySessionStore } from '../../../../src/core/store/memory/memory-session-store.js';
import { SessionStoreFixtures as F } from '../session-store.fixtures.js';

// The SessionStore contract runs over the registered engine in ../store-engines.spec.ts.

describe('MemorySessionStore', () => {
  describe('with a log limit of 10, after 25 envelopes', () => {
    const setup = async (): Promise<MemorySessionStore> => {
      const store = new MemorySessionStore(10);
      for (let seq = 1; seq <= 25; seq += 5) await store.append('s', F.envelopes('s', seq, seq + 4));
      return store;
    };

    it('should keep numbering and serve the kept part', async () => {
      const store = await setup();
      expect(await store.lastSeq('s')).toBe(25);
      expect((await store.read('s', 20)).map((e) => e.seq)).toEqual([21, 22, 23, 24, 25]);
      expect(await firstValueFrom(store.tail('s', 22).pipe(take(3), toArray()))).toEqual(F.envelopes('s', 23, 25));
    });

    it('should refuse to read what it dropped with a store_error saying how to keep it', async () => {
      const store = await setup();
      await expect(store.read('s', 0)).rejects.toMatchObject({ code: 'store_error', message: expect.stringContaining('store.memoryLogLimit') });
      await expect(firstValueFrom(store.tail('s', 0))).rejects.toMatchObject({ code: 'store_error' });
    });
  });

  describe('with a bound of 2 sessions (pruned once a block over it)', () => {
    it('should drop the least recently updated idle sessions down to the bound, never a running or held one', async () => {
      const store = new MemorySessionStore(0, 2);
      await store.save(F.record('running', { status: 'running', updatedAt: 1 }));
      await store.save(F.record('old', { updatedAt: 2 }));
      const lease = await store.acquire('old');
      await store.save(F.record('new', { updatedAt: 3 }));
      expect((await store.list()).map((r) => r.sessionId).sort()).toEqual(['new', 'old', 'running']);
      await lease.release();
      await store.save(F.record('newest', { updatedAt: 4 }));
      expect((await store.list()).map((r) => r.sessionId)).toEqual(['newest', 'new', 'running']);
    });
  });

  describe('entries made only for a reader or a lease', () => {
    /** How many sessions the store keeps an entry for (records, logs, or a waiting tail). */
    const entries = (store: MemorySessionStore): number => (store as unknown as { sessions: Map<string, unknown> }).sessions.size;

    it('should forget an id that was only tailed once its last tail unsubscribes', () => {
      const store = new MemorySessionStore();
      for (let i = 0; i < 100; i++) store.tail(`nobody-${i}`, 0).subscribe().unsubscribe();
      const a = store.tail('twice', 0).subscribe();
      const b = store.tail('twice', 0).subscribe();
      a.unsubscribe();
      expect(entries(store)).toBe(1);
      b.unsubscribe();
      expect(entries(store)).toBe(0);
    });

    it('should keep following a tailed id that gets a log, and keep that log after the tail leaves', async () => {
      const store = new MemorySessionStore();
      const seen: number[] = [];
      const sub = store.tail('late', 0).subscribe((e) => seen.push(e.seq));
      await store.append('late', F.envelopes('late', 1, 3));
      sub.unsubscribe();
      expect(seen).toEqual([1, 2, 3]);
      expect(await store.lastSeq('late')).toBe(3);
      expect((await store.read('late', 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
    });

    it('should forget an id that was leased and released without a save, and keep one that was saved', async () => {
      const store = new MemorySessionStore();
      await (await store.acquire('never-saved')).release();
      expect(entries(store)).toBe(0);
      const lease = await store.acquire('saved');
      await store.save(F.record('saved'));
      await lease.release();
      expect((await store.list()).map((r) => r.sessionId)).toEqual(['saved']);
    });

    it('should leave no entry behind a transition refused for want of a record', async () => {
      const store = new MemorySessionStore();
      await expect(store.transition('ghost', undefined, { toolUseId: 'u1', name: 'echo', state: 'executing' })).rejects.toMatchObject({ code: 'store_error' });
      expect(entries(store)).toBe(0);
    });
  });
});
