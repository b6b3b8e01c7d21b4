import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { redactUrl } from '../../../src/distributed/redis-store/redis-connection.js';
import { RedisSessionStore } from '../../../src/distributed/redis-store/redis-session-store.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { recorder, seqs } from '../../core/store/session-store.conformance.js';
import { SessionStoreFixtures as F } from '../../core/store/session-store.fixtures.js';

describeWithRedis('RedisSessionStore', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  // The SessionStore contract runs over the registered engine in test/core/store/store-engines.spec.ts.

  describe('across store instances', () => {
    let prefix: string;
    let writer: RedisSessionStore;
    let reader: RedisSessionStore;
    let admin: Redis;

    beforeEach(() => {
      prefix = `t-${randomUUID()}:`;
      // A long poll: following must come from the shared blocking reader, not from polling.
      writer = new RedisSessionStore({ url: server.url, keyPrefix: prefix, tailPollMs: 60_000 });
      reader = new RedisSessionStore({ url: server.url, keyPrefix: prefix, tailPollMs: 60_000 });
      admin = new Redis(server.url);
    });
    afterEach(async () => {
      await Promise.all([writer.close(), reader.close()]);
      admin.disconnect();
    });

    describe('.tail', () => {
      it('should follow what another instance appends, in order, without repeats', async () => {
        await writer.append('s', F.envelopes('s', 1, 3));
        const rec = recorder(reader.tail('s', 0));
        expect(seqs(await rec.upTo(3))).toEqual([1, 2, 3]);
        for (let seq = 4; seq <= 30; seq += 3) await writer.append('s', F.envelopes('s', seq, seq + 2));
        expect(await rec.upTo(30)).toEqual(F.envelopes('s', 1, 30));
        // A second tail seeing seq 31 is the signal that the first one got it too: no repeat before it.
        const witness = recorder(reader.tail('s', 30));
        await writer.append('s', F.envelopes('s', 29, 31));
        expect(seqs(await witness.upTo(1))).toEqual([31]);
        expect(seqs(await rec.upTo(31))).toEqual(F.envelopes('s', 1, 31).map((e) => e.seq));
        expect(rec.count()).toBe(31);
        rec.sub.unsubscribe();
        witness.sub.unsubscribe();
      });

      it('should resume from an afterSeq in the middle of the log (Last-Event-ID), then follow', async () => {
        await writer.append('s', F.envelopes('s', 1, 10));
        const rec = recorder(reader.tail('s', 6));
        expect(seqs(await rec.upTo(4))).toEqual([7, 8, 9, 10]);
        await writer.append('s', F.envelopes('s', 11, 12));
        expect(await rec.upTo(6)).toEqual(F.envelopes('s', 7, 12));
        rec.sub.unsubscribe();
      });

      it('should serve many tails of many sessions over one blocking connection', async () => {
        const ids = Array.from({ length: 40 }, (_, i) => `s${i}`);
        const recs = ids.map((id) => recorder(reader.tail(id, 0)));
        await Promise.all(ids.map((id) => writer.append(id, F.envelopes(id, 1, 2))));
        for (const [i, rec] of recs.entries()) expect(await rec.upTo(2)).toEqual(F.envelopes(ids[i]!, 1, 2));
        const tailConnections = async (): Promise<number> =>
          String(await admin.client('LIST'))
            .split('\n')
            .filter((line) => line.includes('name=agentrx-store-tail')).length;
        const deadline = Date.now() + 5_000;
        while ((await tailConnections()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        expect(await tailConnections()).toBe(1);
        // Followed through it (polling is off): every tail gets what is appended now.
        await Promise.all(ids.map((id) => writer.append(id, [F.envelope(id, 3)])));
        for (const [i, rec] of recs.entries()) expect(await rec.upTo(3)).toEqual(F.envelopes(ids[i]!, 1, 3));
        expect(await tailConnections()).toBe(1);
        for (const rec of recs) rec.sub.unsubscribe();
      });
    });

    describe('.list', () => {
      it('should see the records another instance saved and transitioned', async () => {
        await writer.save(F.record('a', { updatedAt: 1 }));
        await writer.save(F.record('b', { updatedAt: 2 }));
        expect(await writer.transition('a', undefined, { toolUseId: 'u1', name: 'echo', state: 'executing' })).toBe(true);
        const listed = await reader.list();
        expect(listed.map((r) => r.sessionId)).toEqual(['a', 'b']);
        expect(listed[0]!.ledger).toEqual([{ toolUseId: 'u1', name: 'echo', state: 'executing' }]);
      });
    });

    describe('.delete and .prune', () => {
      it("should remove the thread's index key with its session, but not one naming a newer session", async () => {
        await writer.save(F.record('old', { threadId: 'th', updatedAt: 1 }));
        await writer.save(F.record('new', { threadId: 'th', updatedAt: 2 }));
        await writer.delete('old');
        expect(await admin.get(`${prefix}thread:th`)).toBe('new');
        await writer.save(F.record('solo', { threadId: 'th-solo', updatedAt: 3 }));
        await writer.delete('solo');
        expect(await admin.exists(`${prefix}thread:th-solo`)).toBe(0);
        expect(await writer.prune({ maxSessions: 0 })).toEqual(['new']);
        expect(await admin.keys(`${prefix}thread:*`)).toEqual([]);
      });
    });

    describe('.load', () => {
      it('should keep the ledger in the order its entries were added', async () => {
        await writer.save(
          F.record('s', { ledger: [{ toolUseId: 'z', name: 'echo', state: 'posted', result: { toolUseId: 'z', content: 'z', isError: false } }] }),
        );
        for (const id of ['m', 'a', 'q']) await writer.transition('s', undefined, { toolUseId: id, name: 'echo', state: 'executing' });
        await writer.transition('s', 'executing', {
          toolUseId: 'a',
          name: 'echo',
          state: 'executed',
          result: { toolUseId: 'a', content: 'A', isError: false },
        });
        expect((await reader.load('s'))!.ledger.map((e) => `${e.toolUseId}:${e.state}`)).toEqual(['z:posted', 'm:executing', 'a:executed', 'q:executing']);
      });

      it('should refuse a record of a newer version with a store_error', async () => {
        await writer.save(F.record('s'));
        const key = `${prefix}{s}:record`;
        const data = JSON.parse((await admin.hget(key, 'data'))!) as Record<string, unknown>;
        await admin.hset(key, 'data', JSON.stringify({ ...data, version: 99 }));
        await expect(reader.load('s')).rejects.toMatchObject({ code: 'store_error', message: expect.stringMatching(/version 99.*upgrade agentrx/) });
      });
    });

    describe('.acquire', () => {
      it('should report the lease lost through lost when a renewal finds another owner', async () => {
        const a = new RedisSessionStore({ url: server.url, keyPrefix: prefix, leaseMs: 300, owner: 'worker-A' });
        const b = new RedisSessionStore({ url: server.url, keyPrefix: prefix, leaseMs: 300, owner: 'worker-B' });
        try {
          const lease = await a.acquire('s');
          await admin.del(`${prefix}{s}:lease`); // as if it expired
          const taken = await b.acquire('s');
          expect(taken.epoch).toBe(lease.epoch + 1);
          const lost = await lease.lost;
          expect(lost).toMatchObject({ code: 'store_error', message: expect.stringContaining('now held by worker-B') });
          await expect(a.append('s', [F.envelope('s', 1)])).rejects.toMatchObject({ code: 'store_error', message: expect.stringContaining('was lost') });
          await lease.release(); // a no-op in Redis: the lease is B's
          await expect(admin.get(`${prefix}{s}:lease`)).resolves.toBeTruthy();
        } finally {
          await Promise.all([a.close(), b.close()]);
        }
      });
    });
  });
});

describe('redactUrl', () => {
  it('should replace the user name and password, keeping where Redis is', () => {
    expect(redactUrl('redis://agent:s3cr3t@redis.internal:6380/2')).toBe('redis://***@redis.internal:6380/2');
    expect(redactUrl('rediss://:s3cr3t@redis.internal')).toBe('rediss://***@redis.internal');
    expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redactUrl('not a url with s3cr3t@host')).toBe('***@host');
  });
});

describe('RedisSessionStore options', () => {
  it('should refuse a keyPrefix with a brace (it would break the per-session hash tag)', () => {
    expect(() => new RedisSessionStore({ url: 'redis://127.0.0.1:1', keyPrefix: 'a{b}:' })).toThrow(expect.objectContaining({ code: 'invalid_config' }));
  });
});
