import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { isAgentRxError } from '../../../src/core/errors.js';
import { RedisSessionStore } from '../../../src/distributed/redis-store/redis-session-store.js';
import { describeWithRedis, startRedisServer, startTcpProxy, type RedisServer, type TcpProxy } from '../../support/redis-server.js';
import { recorder, seqs, storeErrorOf } from '../../core/store/session-store.conformance.js';
import { SessionStoreFixtures as F } from '../../core/store/session-store.fixtures.js';

/** Polls `attempt` until it gives a value (not undefined) or the deadline passes. */
async function eventually<T>(attempt: () => Promise<T | undefined>, what: string, deadlineMs = 10_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describeWithRedis('RedisSessionStore under faults', () => {
  let server: RedisServer;
  let proxy: TcpProxy;
  let prefix: string;
  const stores: RedisSessionStore[] = [];
  const make = (url: string, over: { leaseMs?: number; owner?: string; onRepair?: (key: string, what: string) => void } = {}): RedisSessionStore => {
    const store = new RedisSessionStore({ url, keyPrefix: prefix, ...over });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(async () => {
    prefix = `t-${randomUUID()}:`;
    proxy = await startTcpProxy(server.port);
  });
  afterEach(async () => {
    proxy.thaw();
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await proxy.close();
  });

  describe('.acquire', () => {
    describe('when another process holds the session', () => {
      it('should refuse with a store_error naming the owner (host:pid by default, else the worker id)', async () => {
        const a = make(server.url);
        const b = make(server.url, { owner: 'worker-7' });
        const lease = await a.acquire('s1');
        const e1 = await storeErrorOf(b.acquire('s1'));
        expect(e1.message).toContain(`held by ${hostname()}:${process.pid}`);
        await b.acquire('s2');
        const e2 = await storeErrorOf(a.acquire('s2'));
        expect(e2.message).toContain("session 's2' is held by worker-7");
        await lease.release();
        await expect(b.acquire('s1')).resolves.toMatchObject({ epoch: 2 });
      });
    });

    describe('when the holder keeps running past leaseMs', () => {
      it('should keep the lease by renewing it', async () => {
        // 1 s: the holder renews every third of it, so a pause of its loaded process (two CPU
        // hogs and the other suites) up to ~600 ms still renews in time; at 150 ms one did not.
        const a = make(server.url, { leaseMs: 1_000 });
        const b = make(server.url, { leaseMs: 1_000 });
        const lease = await a.acquire('s');
        const start = Date.now();
        // Several lease periods: every attempt of the other store is refused all along.
        await eventually(async () => {
          await storeErrorOf(b.acquire('s'));
          return Date.now() - start > 3_500 ? true : undefined;
        }, 'three and a half lease periods');
        await lease.release();
        await expect(b.acquire('s')).resolves.toMatchObject({ epoch: 2 });
      });
    });
  });

  describe('fencing', () => {
    describe('when the holder is partitioned past its lease and another store takes over', () => {
      it('should refuse every later write of the old holder, in Redis and locally, and land none of them', async () => {
        const repairs: string[] = [];
        const a = make(proxy.url, { leaseMs: 300, owner: 'worker-A' });
        const b = make(server.url, { leaseMs: 300, owner: 'worker-B', onRepair: (_key, what) => repairs.push(what) });
        const leaseA = await a.acquire('s');
        expect(leaseA.epoch).toBe(1);
        await a.save(F.record('s', { status: 'running' }));
        await a.append('s', F.envelopes('s', 1, 2));

        proxy.freeze();
        // On its way to Redis with epoch 1, held up by the partition.
        const lateAppend = a.append('s', [{ ...F.envelope('s', 3), turn: 99 }]);
        const lateOutcome = lateAppend.then(
          () => 'landed',
          (e: unknown) => e,
        );

        const leaseB = await eventually(() => b.acquire('s').catch(() => undefined), 'the lease to expire and B to take it over');
        expect(leaseB.epoch).toBe(2);
        expect(repairs).toEqual(["took over session 's' from worker-A, whose lease expired (epoch 2)"]);
        const lost = await leaseA.lost;
        expect(isAgentRxError(lost, 'store_error')).toBe(true);
        expect(lost.message).toMatch(/lease of session 's' was lost/);

        await b.append('s', [F.envelope('s', 3)]);
        await b.transition('s', undefined, { toolUseId: 'b1', name: 'echo', state: 'executing' });

        proxy.thaw();
        const refused = await lateOutcome;
        expect(isAgentRxError(refused, 'store_error')).toBe(true);
        expect((refused as Error).message).toMatch(
          /lease of session 's' was lost \(Redis refused a write: another owner took the session over at epoch 2, this process holds epoch 1\)/,
        );

        for (const write of [
          a.append('s', [F.envelope('s', 4)]),
          a.transition('s', undefined, { toolUseId: 'a1', name: 'echo', state: 'executing' }),
          a.save(F.record('s', { status: 'completed', updatedAt: 9_000 })),
          a.delete('s'),
        ]) {
          expect((await storeErrorOf(write)).message).toMatch(/lease of session 's' was lost/);
        }

        expect(await b.read('s', 0)).toEqual([...F.envelopes('s', 1, 2), F.envelope('s', 3)]);
        expect(await b.load('s')).toMatchObject({ status: 'running', ledger: [{ toolUseId: 'b1', name: 'echo', state: 'executing' }] });
      });
    });

    describe('when the holder process was paused past its lease (its timers did not run)', () => {
      it('should refuse its next write at once, before any renewal tick', async () => {
        const a = make(server.url, { leaseMs: 200 });
        const lease = await a.acquire('s');
        await a.append('s', [F.envelope('s', 1)]);
        // Blocks the event loop like a SIGSTOP would: no renewal timer can fire meanwhile.
        const until = Date.now() + 300;
        while (Date.now() < until);
        // Runs before any timer (microtasks first).
        const e = await storeErrorOf(a.append('s', [F.envelope('s', 2)]));
        expect(e.message).toMatch(/lease of session 's' was lost \(not renewed within 200 ms\)/);
        expect(await lease.lost).toBe(e);
        expect(await a.lastSeq('s')).toBe(1);
      });
    });

    describe('when a write without a lease races a holder', () => {
      it('should not be fenced (only a lease holder carries an epoch)', async () => {
        const a = make(server.url);
        const reader = make(server.url);
        await a.acquire('s');
        await reader.save(F.record('s'));
        expect(await a.load('s')).toEqual(F.record('s'));
      });
    });
  });

  describe('.append', () => {
    describe('when the connection is torn after Redis ran the append, before the client heard', () => {
      it('should neither duplicate nor lose a seq once the caller retries', async () => {
        const a = make(proxy.url);
        const witness = make(server.url);
        await a.append('s', F.envelopes('s', 1, 5));
        const torn = proxy.tearOnNextReply();
        const first = a.append('s', F.envelopes('s', 6, 50)).then(
          () => undefined,
          (e: unknown) => e,
        );
        await torn;
        // The batch is in Redis although the client never got the reply.
        expect(await witness.lastSeq('s')).toBe(50);
        const failure = await first;
        // ioredis resends it after reconnecting, or the caller retries: either way, skipped.
        if (failure !== undefined) await a.append('s', F.envelopes('s', 6, 50));
        await a.append('s', F.envelopes('s', 45, 60));
        const all = await witness.read('s', 0);
        expect(seqs(all)).toEqual(F.envelopes('s', 1, 60).map((e) => e.seq));
        expect(all).toEqual(F.envelopes('s', 1, 60));
      });
    });

    describe('when another client kills the store connection (CLIENT KILL) during appends', () => {
      it('should keep the log gap-free and without repeats after retries', async () => {
        const a = make(server.url);
        const witness = make(server.url);
        const admin = new Redis(server.url);
        try {
          let next = 1;
          let kills = 0;
          for (let round = 0; round < 10; round++) {
            const batch = F.envelopes('s', next, next + 19);
            const appended = a.append('s', batch).catch(() => a.append('s', batch));
            // Kills every other normal client; the admin's own connection is skipped.
            kills += Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
            await appended;
            next += 20;
          }
          // Most rounds cut a live connection (one that lands while the store reconnects cuts none).
          expect(kills).toBeGreaterThanOrEqual(5);
          expect(seqs(await witness.read('s', 0))).toEqual(F.envelopes('s', 1, 200).map((e) => e.seq));
        } finally {
          admin.disconnect();
        }
      });
    });
  });

  describe('when Redis is killed and restarted (appendonly) under a live tail', () => {
    it('should reconnect the writer and the tail, which goes on without gaps or repeats', async () => {
      const durable = await startRedisServer({ appendonly: true, args: ['--appendfsync', 'always'] });
      const writer = make(durable.url);
      const reader = make(durable.url);
      try {
        await writer.append('s', F.envelopes('s', 1, 3));
        const rec = recorder(reader.tail('s', 0));
        expect(seqs(await rec.upTo(3))).toEqual([1, 2, 3]);
        await durable.kill();
        await durable.restart();
        await writer.append('s', F.envelopes('s', 3, 6));
        expect(await rec.upTo(6)).toEqual(F.envelopes('s', 1, 6));
        rec.sub.unsubscribe();
        expect(rec.count()).toBe(6);
      } finally {
        await Promise.all(stores.splice(0).map((st) => st.close()));
        await durable.stop();
      }
    });
  });

  describe('credentials', () => {
    it('should never show the password of the URL in an error', async () => {
      const wrong = make(`redis://agent:s3cr3t-pass@127.0.0.1:${server.port}`);
      const e1 = await storeErrorOf(wrong.load('s'));
      expect(e1.message).not.toContain('s3cr3t-pass');
      expect(JSON.stringify((e1 as { details?: unknown }).details)).not.toContain('s3cr3t-pass');
      expect(e1.message).toContain(`redis://***@127.0.0.1:${server.port}`);
      expect((e1 as Error).cause).toBeUndefined();

      await proxy.close();
      const down = make(`redis://agent:s3cr3t-pass@127.0.0.1:${new URL(proxy.url).port}`);
      const e2 = await storeErrorOf(down.lastSeq('s'));
      expect(e2.message).toMatch(/cannot connect to Redis/);
      expect(e2.message).not.toContain('s3cr3t-pass');
      expect(e2.message).toContain('***@127.0.0.1');
      proxy = await startTcpProxy(server.port); // afterEach closes one
    });
  });
});
