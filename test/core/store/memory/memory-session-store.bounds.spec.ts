import { firstValueFrom, take, toArray } from 'rxjs';
import { MemorySessionStore } from '../../../../src/core/store/memory/memory-session-store.js';
import type { SessionEvent } from '../../../../src/core/events/session-event.js';
import { SessionStoreFixtures as F } from '../session-store.fixtures.js';

// What the memory store keeps of closed sessions: sealed text, the byte bound, and `keep: 'none'`.

/** A closed session: leased, saved (status `completed`, `updatedAt`), `n` envelopes appended, released. */
async function closedSession(store: MemorySessionStore, sessionId: string, updatedAt: number, n: number): Promise<void> {
  const lease = await store.acquire(sessionId);
  await store.save(F.record(sessionId, { status: 'running', updatedAt }));
  await store.append(sessionId, F.envelopes(sessionId, 1, n));
  await store.save(F.record(sessionId, { status: 'completed', updatedAt }));
  await lease.release();
}

const ids = async (store: MemorySessionStore): Promise<string[]> => (await store.list()).map((r) => r.sessionId);

describe('MemorySessionStore', () => {
  describe('when a session was released (sealed: its log and record compressed)', () => {
    it('should serve the same record and envelopes, by page and by tail', async () => {
      const store = new MemorySessionStore();
      await closedSession(store, 's', 5, 12);

      expect(await store.load('s')).toEqual(F.record('s', { status: 'completed', updatedAt: 5 }));
      expect(await store.read('s', 0)).toEqual(F.envelopes('s', 1, 12));
      expect(await store.read('s', 4, 3)).toEqual(F.envelopes('s', 5, 7));
      expect(await store.lastSeq('s')).toBe(12);
      expect(await firstValueFrom(store.tail('s', 9).pipe(take(3), toArray()))).toEqual(F.envelopes('s', 10, 12));
    });

    it('should keep text outside Latin-1 as it was', async () => {
      const store = new MemorySessionStore();
      const env: SessionEvent = { ...F.envelope('s', 1), raw: { type: 'agentrx.diagnostic', message: 'naïve — 日本語 🚀 "quoted"\nline' } };
      const lease = await store.acquire('s');
      await store.save(F.record('s', { error: { code: 'x', message: 'ünïcode 🚀' } }));
      await store.append('s', [env, F.envelope('s', 2)]);
      await lease.release();

      expect(await store.read('s', 0)).toEqual([env, F.envelope('s', 2)]);
      expect((await store.load('s'))!.error).toEqual({ code: 'x', message: 'ünïcode 🚀' });
    });

    it('should count its compressed text, far smaller than its JSON, and nothing while it was open', async () => {
      const store = new MemorySessionStore();
      const lease = await store.acquire('s');
      await store.save(F.record('s'));
      await store.append('s', F.envelopes('s', 1, 200));
      expect(store.keptBytes).toBe(0);
      await lease.release();

      expect(store.keptBytes).toBeGreaterThan(0);
      expect(store.keptBytes).toBeLessThan(JSON.stringify(F.envelopes('s', 1, 200)).length / 4);
    });

    it('should give a tail each envelope once when a subscriber appends from inside next', async () => {
      const store = new MemorySessionStore();
      await closedSession(store, 's', 5, 3);
      const seen: number[] = [];
      const sub = store.tail('s', 0).subscribe((e) => {
        seen.push(e.seq);
        if (e.seq === 2) void store.append('s', [F.envelope('s', 4)]);
      });
      sub.unsubscribe();

      expect(seen).toEqual([1, 2, 3, 4]);
    });

    it('should go on numbering when the session is resumed and appends again', async () => {
      const store = new MemorySessionStore();
      await closedSession(store, 's', 5, 3);
      const lease = await store.acquire('s');
      await store.append('s', F.envelopes('s', 1, 5));
      await lease.release();

      expect(await store.read('s', 0)).toEqual(F.envelopes('s', 1, 5));
    });

    it('should keep its record when it is resumed and appends again, and the newer record once released again', async () => {
      const store = new MemorySessionStore();
      await closedSession(store, 's', 5, 3);
      const lease = await store.acquire('s');
      await store.append('s', F.envelopes('s', 4, 5));
      expect(await store.load('s')).toEqual(F.record('s', { status: 'completed', updatedAt: 5 }));
      await store.save(F.record('s', { status: 'failed', updatedAt: 9 }));
      await lease.release();

      expect(await store.load('s')).toEqual(F.record('s', { status: 'failed', updatedAt: 9 }));
      expect(await store.read('s', 0)).toEqual(F.envelopes('s', 1, 5));
    });

    it('should keep its log when its record is saved again after the release, sealed with it on the next one', async () => {
      const store = new MemorySessionStore();
      await closedSession(store, 's', 5, 4);
      await store.save(F.record('s', { status: 'failed', updatedAt: 7 }));
      expect(await store.load('s')).toEqual(F.record('s', { status: 'failed', updatedAt: 7 }));
      await (await store.acquire('s')).release();

      expect(await store.load('s')).toEqual(F.record('s', { status: 'failed', updatedAt: 7 }));
      expect(await store.read('s', 0)).toEqual(F.envelopes('s', 1, 4));
      expect(await store.list()).toEqual([F.record('s', { status: 'failed', updatedAt: 7 })]);
    });

    it('should seal a record without a log, and a log without a record', async () => {
      const store = new MemorySessionStore();
      await closedSession(store, 'r', 5, 0);
      const lease = await store.acquire('l');
      await store.append('l', F.envelopes('l', 1, 2));
      await lease.release();

      expect(await store.load('r')).toEqual(F.record('r', { status: 'completed', updatedAt: 5 }));
      expect(await store.read('r', 0)).toEqual([]);
      expect(await store.load('l')).toBeUndefined();
      expect(await store.read('l', 0)).toEqual(F.envelopes('l', 1, 2));
      expect(store.keptBytes).toBeGreaterThan(0);
    });

    it('should hand out copies: changing what was read changes nothing stored', async () => {
      const store = new MemorySessionStore();
      await closedSession(store, 's', 5, 1);
      const [env] = (await store.read('s', 0)) as unknown as [{ seq: number }];
      env.seq = 99;
      ((await store.load('s')) as { status: string }).status = 'failed';

      expect(await store.read('s', 0)).toEqual(F.envelopes('s', 1, 1));
      expect((await store.load('s'))!.status).toBe('completed');
    });
  });

  describe('with a byte bound', () => {
    it('should drop the least recently updated closed sessions down to 90% of it, keeping the newest', async () => {
      const reference = new MemorySessionStore();
      await closedSession(reference, 'a', 1, 10);
      const per = reference.keptBytes;
      // Room for three closed sessions and a half.
      const store = new MemorySessionStore(0, 0, { maxBytes: Math.floor(3.5 * per) });
      for (const [i, id] of ['a', 'b', 'c'].entries()) await closedSession(store, id, i + 1, 10);
      expect(await ids(store)).toEqual(['c', 'b', 'a']);

      await closedSession(store, 'd', 4, 10);

      // Four are over the bound; 90% of it holds three.
      expect(await ids(store)).toEqual(['d', 'c', 'b']);
      expect(store.keptBytes).toBeLessThanOrEqual(Math.floor(3.5 * per * 0.9));
      expect(await store.lastSeq('a')).toBe(0);
      expect(await store.findByThread('thread-a')).toBeUndefined();
    });

    it('should never drop a held, running or followed session, and keep the newest one whatever its size', async () => {
      const store = new MemorySessionStore(0, 0, { maxBytes: 100 });
      const held = await store.acquire('held');
      await store.save(F.record('held', { updatedAt: 1 }));
      await store.append('held', F.envelopes('held', 1, 5));
      await store.save(F.record('running', { status: 'running', updatedAt: 2 }));
      await closedSession(store, 'followed', 3, 5);
      const tail = store.tail('followed', 5).subscribe();
      await closedSession(store, 'dropped', 4, 5);
      await closedSession(store, 'newest', 5, 5);

      expect(await ids(store)).toEqual(['newest', 'followed', 'running', 'held']);
      tail.unsubscribe();
      await held.release();
    });

    it('should keep everything with a bound of 0', async () => {
      const store = new MemorySessionStore(0, 0, { maxBytes: 0 });
      for (let i = 0; i < 20; i++) await closedSession(store, `s${i}`, i, 50);

      expect(await ids(store)).toHaveLength(20);
    });
  });

  describe("with keep: 'none'", () => {
    it('should serve the live session its record, ledger and log, and forget it once released', async () => {
      const store = new MemorySessionStore(0, 0, { keep: 'none' });
      const lease = await store.acquire('s');
      await store.save(F.record('s', { status: 'running' }));
      const executing = { toolUseId: 'u1', name: 'echo', state: 'executing' } as const;
      expect(await store.transition('s', undefined, executing)).toBe(true);
      await store.append('s', F.envelopes('s', 1, 3));

      expect((await store.load('s'))!.ledger).toEqual([executing]);
      expect(await store.read('s', 1)).toEqual(F.envelopes('s', 2, 3));
      expect(await store.findByThread('thread-s')).toBe('s');

      await store.save(F.record('s', { status: 'completed' }));
      await lease.release();

      expect(store.keepsClosed).toBe(false);
      expect(await store.load('s')).toBeUndefined();
      expect(await store.lastSeq('s')).toBe(0);
      expect(await store.list()).toEqual([]);
      expect(await store.findByThread('thread-s')).toBeUndefined();
    });

    it('should keep the envelopes it was given while the session is open, without serializing them', async () => {
      const store = new MemorySessionStore(0, 0, { keep: 'none' });
      const lease = await store.acquire('s');
      const envs = F.envelopes('s', 1, 2);
      await store.append('s', envs);

      expect((await store.read('s', 0))[1]).toBe(envs[1]);
      await lease.release();
    });

    it('should keep a released session for the tails following it, until the last one leaves', async () => {
      const store = new MemorySessionStore(0, 0, { keep: 'none' });
      const lease = await store.acquire('s');
      await store.save(F.record('s'));
      const seen: SessionEvent[] = [];
      const tail = store.tail('s', 0).subscribe((e) => seen.push(e));
      await store.append('s', F.envelopes('s', 1, 2));
      await lease.release();

      expect(await store.lastSeq('s')).toBe(2);
      await store.append('s', [F.envelope('s', 3)]);
      expect(seen.map((e) => e.seq)).toEqual([1, 2, 3]);
      tail.unsubscribe();
      expect(await store.lastSeq('s')).toBe(0);
      expect(await store.list()).toEqual([]);
    });

    it('should keep a session saved without a lease (nothing closed it)', async () => {
      const store = new MemorySessionStore(0, 0, { keep: 'none' });
      await store.save(F.record('s'));

      expect(await ids(store)).toEqual(['s']);
    });
  });

  describe('by default', () => {
    it('should keep closed sessions', () => {
      expect(new MemorySessionStore().keepsClosed).toBe(true);
    });
  });
});
