import type { AgentRxError } from '../../../src/core/errors.js';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisSessionStore } from '../../../src/distributed/redis-store/redis-session-store.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { SessionStoreFixtures as F } from '../../core/store/session-store.fixtures.js';
import { rejectedWith } from '../../support/agentrx-errors.js';

const storeError = (p: Promise<unknown>): Promise<AgentRxError> => rejectedWith('store_error', p);

describeWithRedis('RedisSessionStore with a record hash edited by hand', () => {
  let server: RedisServer;
  let redis: Redis;
  let store: RedisSessionStore;
  let repairs: string[];
  let prefix: string;
  const recordKey = (id: string): string => `${prefix}{${id}}:record`;

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });
  beforeEach(async () => {
    prefix = `t-${randomUUID()}:`;
    repairs = [];
    store = new RedisSessionStore({ url: server.url, keyPrefix: prefix, onRepair: (key, what) => repairs.push(`${key}: ${what}`) });
    await store.save(F.record('good', { updatedAt: 5_000 }));
    await store.save(F.record('bad'));
  });
  afterEach(async () => {
    await store.close();
  });

  describe.each([
    [
      'status: 42',
      async () => redis.hset(recordKey('bad'), 'data', JSON.stringify({ ...JSON.parse((await redis.hget(recordKey('bad'), 'data'))!), status: 42 })),
      /field 'status' is 42, not one of running/,
    ],
    ['updatedAt: "yesterday"', () => redis.hset(recordKey('bad'), 'updatedAt', 'yesterday'), /field 'updatedAt' is "yesterday", not a time in epoch ms/],
    ['data that is not a record', () => redis.hset(recordKey('bad'), 'data', '[1,2]'), /it has version undefined/],
  ])('when the hash holds %s', (_what, edit, expected) => {
    beforeEach(async () => {
      await edit();
    });

    it('should make loading it a store_error naming the session, the key and the field', async () => {
      const e = await storeError(store.load('bad'));
      expect(e.message).toMatch(/^session 'bad': the record in Redis is unreadable \(/);
      expect(e.message).toMatch(expected);
      expect(e.details).toMatchObject({ sessionId: 'bad', key: recordKey('bad') });
    });

    it('should list the other sessions and leave it out with a warning naming it', async () => {
      expect((await store.list()).map((r) => r.sessionId)).toEqual(['good']);
      expect(repairs).toEqual([expect.stringContaining(`${recordKey('bad')}: session 'bad' is left out of the list: `)]);
      expect(repairs[0]).toMatch(expected);
    });
  });
});
