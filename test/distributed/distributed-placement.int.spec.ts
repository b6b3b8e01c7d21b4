/**
 * The placement of `runtime.mode: 'distributed'` on a real redis-server: what it refuses, what it
 * leaves out, the thread entries that let another instance find a thread's session, the readers'
 * announcements, and its health. The worker pool itself stands behind a recording fake (the pool is
 * covered by the AG-UI distributed suites).
 */
import { Redis } from 'ioredis';
import { MemorySessionStore } from '../../src/core/store/memory/memory-session-store.js';
import { DistributedKeys } from '../../src/distributed/distributed-keys.js';
import { DistributedPlacement, type RemoteSessions } from '../../src/distributed/distributed-placement.js';
import type { OpenRemoteOptions } from '../../src/distributed/session-queue.js';
import type { RemoteSession } from '../../src/distributed/remote-session.js';
import type { SubmitOptions } from '../../src/distributed/submit-options.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../support/redis-server.js';

/** Records what is submitted and opened; its handles are stand-ins naming their submission. */
class RecordingSessions implements RemoteSessions {
  readonly submitted: SubmitOptions[] = [];
  readonly opened: { id: string; opts: OpenRemoteOptions | undefined }[] = [];
  async submit(opts: SubmitOptions): Promise<RemoteSession> {
    this.submitted.push(opts);
    return { id: `sub-${this.submitted.length}` } as Partial<RemoteSession> as RemoteSession;
  }
  open(id: string, opts?: OpenRemoteOptions): RemoteSession {
    this.opened.push({ id, opts });
    return { id } as Partial<RemoteSession> as RemoteSession;
  }
}

describeWithRedis('DistributedPlacement', () => {
  let server: RedisServer;
  let redis: Redis;
  let sessions: RecordingSessions;
  let store: MemorySessionStore;
  let placement: DistributedPlacement;
  const keys = new DistributedKeys('test:');

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    await redis.quit();
    await server.stop();
  });
  beforeEach(async () => {
    await redis.flushall();
    sessions = new RecordingSessions();
    store = new MemorySessionStore();
    placement = new DistributedPlacement({ sessions, store, redis: { url: server.url, keyPrefix: 'test:' }, followerTtlMs: 60_000 });
  });
  afterEach(() => placement.close());

  describe('.open', () => {
    it('should refuse the options that cannot travel, naming each, and submit nothing', async () => {
      const opts = { prompt: 'hi', confirmTool: () => true, turnGuard: () => false, signal: new AbortController().signal };
      await expect(placement.open(opts)).rejects.toMatchObject({
        code: 'invalid_options',
        message: expect.stringMatching(/^confirmTool, turnGuard, signal cannot be used/),
      });
      expect(() => placement.checkOptions({ confirmTool: () => true })).toThrow(
        expect.objectContaining({ code: 'invalid_options', details: { refused: ['confirmTool'] } }),
      );
      expect(() => placement.checkOptions({ prompt: 'fine' })).not.toThrow();
      expect(sessions.submitted).toEqual([]);
    });

    it("should leave out frontend tools, and record the session as its thread's", async () => {
      const handle = await placement.open({ prompt: 'hi', threadId: 't-1', tools: [], state: { a: 1 } });
      expect(sessions.submitted).toEqual([{ prompt: 'hi', threadId: 't-1', state: { a: 1 } }]);
      expect(handle).toMatchObject({ id: 'sub-1' });
      expect(await redis.get(keys.thread('t-1'))).toBe('sub-1');
    });
  });

  describe('.find', () => {
    it('should find nothing for a thread with no entry, or whose session closed', async () => {
      await expect(placement.find('t-none')).resolves.toBeUndefined();
      await placement.open({ prompt: 'hi', threadId: 't-1' });
      await redis.hset(keys.of('sub-1').state, { sessionId: 'sess-1', closed: '1' });
      await expect(placement.find('t-1')).resolves.toBeUndefined();
      expect(sessions.opened).toEqual([]);
    });

    it("should answer threadBusy while the session has not opened, then open a handle after the log's end", async () => {
      await placement.open({ prompt: 'hi', threadId: 't-1' });
      await expect(placement.find('t-1')).rejects.toMatchObject({ code: 'invalid_options', details: { threadBusy: true, threadId: 't-1' } });
      await redis.hset(keys.of('sub-1').state, { sessionId: 'sess-1' });
      await store.append('sess-1', [
        { seq: 1, sessionId: 'sess-1', turn: 0, provider: 'fake', source: 'agentrx', raw: { type: 'agentrx.text_delta', text: 'x', messageId: 'm' }, at: 1 },
      ]);
      await expect(placement.find('t-1')).resolves.toMatchObject({ id: 'sub-1' });
      expect(sessions.opened).toEqual([{ id: 'sub-1', opts: { afterSeq: 1 } }]);
    });
  });

  describe('.follow and .followed', () => {
    it('should announce a reader to every instance until it is released', async () => {
      const other = new DistributedPlacement({ sessions, store, redis: { url: server.url, keyPrefix: 'test:' } });
      try {
        // The announcement and its removal go out on the placement's connection before a later
        // command of its own: once that command has answered, every instance sees them.
        const release = placement.follow('t-1');
        expect(await placement.followed('t-1')).toBe(true);
        expect(await other.followed('t-1')).toBe(true);
        expect(await other.followed('t-2')).toBe(false);
        release();
        expect(await placement.followed('t-1')).toBe(false);
        expect(await other.followed('t-1')).toBe(false);
      } finally {
        await other.close();
      }
    });
  });

  describe('.health', () => {
    it('should report Redis ok', async () => {
      await expect(placement.health()).resolves.toEqual({ healthy: true, checks: { redis: 'ok' } });
    });
  });

  describe('.close', () => {
    it('should be idempotent, and refuse what needs Redis afterwards', async () => {
      await placement.close();
      await placement.close();
      await expect(placement.followed('t-1')).rejects.toMatchObject({ code: 'session_closed' });
    });
  });
});
