/**
 * The fencing of a submission's output stream and state (real redis-server): each worker that runs
 * the submission claims it with a higher epoch; a write of an earlier claim is refused inside
 * Redis; the end is written once; a submission that ended cannot be claimed again.
 */
import type { Redis } from 'ioredis';
import { DistributedKeys } from '../../src/distributed/distributed-keys.js';
import { decodeEntry, type OutputMessage } from '../../src/distributed/distributed-messages.js';
import { openRedis } from '../../src/distributed/redis-link.js';
import { defineSubmissionScripts, SubmissionWriter, type SubmissionRedis } from '../../src/distributed/submission-writer.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../support/redis-server.js';

describeWithRedis('SubmissionWriter', () => {
  let redis: RedisServer;
  let client: SubmissionRedis;
  let plain: Redis;
  const keys = new DistributedKeys('sw:').of('sub-1');
  const outputs = async (): Promise<string[]> => (await plain.xrange(keys.outputs, '-', '+')).map(([, f]) => decodeEntry<OutputMessage>(f)?.kind ?? '?');

  beforeAll(async () => {
    redis = await startRedisServer();
    client = defineSubmissionScripts(await openRedis(redis.url, 'sw-test'));
    plain = await openRedis(redis.url, 'sw-test-reader');
  }, 30_000);
  afterAll(async () => {
    client?.disconnect();
    plain?.disconnect();
    await redis?.stop();
  });
  beforeEach(async () => {
    await plain.del(keys.state, keys.outputs, keys.inputs);
  });

  it('should refuse the writes of an earlier claim once another worker claimed the submission', async () => {
    const claimed = (await SubmissionWriter.claim(client, keys, 'w1'))!;
    expect(claimed).toMatchObject({ sessionId: undefined, cursor: '0' });
    const first = claimed.writer;
    await expect(first.write({ message: { kind: 'opened', sessionId: 's-1' }, fields: { sessionId: 's-1' } })).resolves.toBe('ok');
    // The second claim sees what the first owner wrote before it.
    const next = (await SubmissionWriter.claim(client, keys, 'w2'))!;
    expect(next).toMatchObject({ sessionId: 's-1', cursor: '0' });
    const second = next.writer;
    expect(second.epoch).toBe(first.epoch + 1);

    await expect(first.write({ message: { kind: 'ack', input: '1-0' }, fields: { cursor: '1-0' } })).resolves.toBe('fenced');
    await expect(first.write({ message: { kind: 'closed', lastSeq: 3 }, end: { retainMs: 60_000 } })).resolves.toBe('fenced');
    expect(await outputs()).toEqual(['opened']);
    expect(await plain.hgetall(keys.state)).toEqual({ sessionId: 's-1', worker: 'w2', epoch: String(second.epoch) });

    await expect(second.write({ message: { kind: 'ack', input: '1-0' }, fields: { cursor: '1-0' } })).resolves.toBe('ok');
    expect(await outputs()).toEqual(['opened', 'ack']);
    expect(await plain.hget(keys.state, 'cursor')).toBe('1-0');
  });

  it('should write the end once, with the expiry of every key, and refuse a claim after it', async () => {
    const { writer } = (await SubmissionWriter.claim(client, keys, 'w1'))!;
    await plain.xadd(keys.inputs, '*', 'm', '{"kind":"close"}');
    await expect(writer.write({ message: { kind: 'closed', lastSeq: 3 }, end: { retainMs: 60_000 } })).resolves.toBe('ok');
    await expect(writer.write({ message: { kind: 'closed', lastSeq: 3 }, end: { retainMs: 60_000 } })).resolves.toBe('ended');
    expect(await outputs()).toEqual(['closed']);
    for (const key of [keys.state, keys.outputs, keys.inputs]) expect(await plain.pttl(key)).toBeGreaterThan(50_000);
    await expect(SubmissionWriter.claim(client, keys, 'w2')).resolves.toBeUndefined();
    expect(await plain.hget(keys.state, 'epoch')).toBe(String(writer.epoch));
  });
});
