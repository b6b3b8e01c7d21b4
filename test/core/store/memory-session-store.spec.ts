import { firstValueFrom, take, toArray } from 'rxjs';
import { MemorySessionStore } from '../../../src/core/store/memory-session-store.js';
import { describeSessionStore } from './session-store.conformance.js';
import { SessionStoreFixtures as F } from './session-store.fixtures.js';

describeSessionStore('MemorySessionStore', async () => ({ store: new MemorySessionStore(), cleanup: async () => undefined }));
describeSessionStore('MemorySessionStore with a log limit', async () => ({ store: new MemorySessionStore(10_000), cleanup: async () => undefined }));

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
});
