import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { AgentRx } from '../../../src/agentrx.js';
import { validateConfig } from '../../../src/core/config/load-config.js';
import { AgentRxError, isAgentRxError } from '../../../src/core/errors.js';
import { Logger, MemoryLogger } from '../../../src/core/logger.js';
import { ContainerModule } from '../../../src/core/util/inversify.js';
import { coreStores } from '../../../src/core/store/core-stores.js';
import { RedisSessionStore } from '../../../src/distributed/redis-store/redis-session-store.js';
import { RedisStoreConfig } from '../../../src/distributed/redis-store/redis-store.config.js';
import { redisStoreModule } from '../../../src/distributed/redis-store/redis-store.module.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { rejectedWith } from '../../support/agentrx-errors.js';

const storeError = (p: Promise<unknown>): Promise<AgentRxError> => rejectedWith('store_error', p);

const PASSWORD = 'hunter2-SILENT-PW';

/** A loopback TCP listener that accepts connections, reads what comes and never writes a byte (a wrong port, a hung server). */
interface SilentListener {
  readonly port: number;
  /** Resolves with the next connection it accepts. */
  nextConnection(): Promise<Socket>;
  close(): Promise<void>;
}

async function startSilentListener(): Promise<SilentListener> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    // Read (and drop) what the client sends, so its end of the connection is seen.
    socket.resume();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    port,
    nextConnection: async () => ((await once(server, 'connection')) as [Socket])[0],
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** The validated store section of `store`, or the invalid_config it gives. */
function validateStore(store: Record<string, unknown>): unknown {
  try {
    return validateConfig({ store }, [], {}, undefined, [...coreStores, redisStoreModule.registration]).config.store;
  } catch (e) {
    return e;
  }
}

describe('the Redis store with bad input', () => {
  describe('config', () => {
    describe('when the URL path is not a database index', () => {
      it('should be an invalid_config naming the index and the range', () => {
        const e = validateStore({ type: 'redis', url: `redis://me:${PASSWORD}@127.0.0.1:6379/abc` });
        expect(isAgentRxError(e, 'invalid_config')).toBe(true);
        expect((e as Error).message).toMatch(/store\.url: names database 'abc', which is not a database index: .*\/0–\/15 on a default server/);
        expect((e as Error).message).not.toContain(PASSWORD);
      });
    });

    describe('when the URL names database 9999 and sets no connect timeout', () => {
      it('should accept the form (the server decides) and default connectTimeoutMs to 10 s', () => {
        const section = validateStore({ type: 'redis', url: 'redis://127.0.0.1:6379/9999' });
        expect(section).toBeInstanceOf(RedisStoreConfig);
        expect(section).toMatchObject({ url: 'redis://127.0.0.1:6379/9999', connectTimeoutMs: 10_000 });
        expect(validateStore({ type: 'redis', url: 'redis://127.0.0.1:6379', connectTimeoutMs: '250' })).toMatchObject({ connectTimeoutMs: 250 });
      });
    });
  });

  describe('a server that accepts and never answers', () => {
    let listener: SilentListener;
    beforeEach(async () => {
      listener = await startSilentListener();
    });
    afterEach(async () => {
      await listener.close();
    });

    describe('when the store connects within connectTimeoutMs', () => {
      it('should fail with a store_error saying the server did not answer, naming host:port, without the password, and close the socket', async () => {
        const store = new RedisSessionStore({ url: `redis://me:${PASSWORD}@127.0.0.1:${listener.port}`, connectTimeoutMs: 200 });
        const accepted = listener.nextConnection();
        const e = await storeError(store.load('s1'));
        expect(e.message).toContain(`the server at 127.0.0.1:${listener.port} did not answer within 200 ms`);
        expect(e.message).toContain('store.connectTimeoutMs');
        expect(JSON.stringify([e.message, e.details])).not.toContain(PASSWORD);
        const socket = await accepted;
        if (!socket.closed) await once(socket, 'close');
        await store.close();
      });
    });

    describe('when the store is closed while it connects', () => {
      it('should close the socket at once and fail the pending call with a store_error', async () => {
        const store = new RedisSessionStore({ url: `redis://127.0.0.1:${listener.port}`, connectTimeoutMs: 60_000 });
        const accepted = listener.nextConnection();
        const pending = storeError(store.load('s1'));
        const socket = await accepted;
        await store.close();
        expect((await pending).message).toContain('closed while it was connecting');
        if (!socket.closed) await once(socket, 'close');
      });
    });

    describe('when a run uses it through AgentRx and the instance stops', () => {
      it('should fail the run with the store_error, and stop without a cleanup failure', async () => {
        const logger = new MemoryLogger();
        const rx = await AgentRx.create({
          config: {
            provider: 'local',
            consumers: { terminal: false },
            store: { type: 'redis', url: `redis://127.0.0.1:${listener.port}`, connectTimeoutMs: 200 },
            providers: { local: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', maxRetries: 0 } },
          },
          modules: [new ContainerModule((o) => void o.bind(Logger).toConstantValue(logger))],
        });
        const e = await storeError(rx.run({ prompt: 'hi' }));
        expect(e.message).toContain('did not answer within 200 ms');
        // A second session is stopped while its store connection is being made.
        const accepted = listener.nextConnection();
        const second = rx.run({ prompt: 'again' }).catch((err: unknown) => err);
        await accepted;
        await rx.stop();
        await second;
        expect(logger.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([]);
      });
    });
  });
});

describeWithRedis('the Redis store with a database the server does not have', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe('when store.url names database 9999 of a server with 16', () => {
    it('should fail with a store_error naming the index and the range, and write nothing to database 0', async () => {
      const store = new RedisSessionStore({ url: `${server.url}/9999` });
      const e = await storeError(
        store.save({ version: 2, sessionId: 's1', provider: 'p', threadId: 't', status: 'idle', createdAt: 1, updatedAt: 1, ledger: [] }),
      );
      expect(e.message).toMatch(
        /Redis database 9999 .* does not exist on the server at 127\.0\.0\.1:\d+ .*it has databases 0–15 \(its 'databases' setting is 16\)/,
      );
      expect(e.details).toMatchObject({ db: 9999, databases: 16 });
      await store.close();
      const check = new Redis(server.url);
      try {
        expect(await check.dbsize()).toBe(0);
      } finally {
        check.disconnect();
      }
    });

    it('should use a database the server has (control)', async () => {
      const store = new RedisSessionStore({ url: `${server.url}/3` });
      await store.save({ version: 2, sessionId: 's1', provider: 'p', threadId: 't', status: 'idle', createdAt: 1, updatedAt: 1, ledger: [] });
      await store.close();
      const check = new Redis(`${server.url}/3`);
      try {
        expect(await check.dbsize()).toBeGreaterThan(0);
      } finally {
        check.disconnect();
      }
    });
  });
});
