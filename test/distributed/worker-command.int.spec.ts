/**
 * `agentrx worker --config <file> [--concurrency N]` as a function (`runWorkerCommand`): it runs
 * the pool's sessions from a config file with the Redis store, logs one line per job start and
 * end, stops gracefully on its signal, and never shows the Redis URL's credentials.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runWorkerCommand } from '../../src/cli/commands/worker.action.js';
import { RedisSessionStore } from '../../src/distributed/redis-store/redis-session-store.js';
import { SessionQueue } from '../../src/distributed/session-queue.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { until } from './distributed-fixture.js';
import { describeWithRedis, freePort, startRedisServer as startRedis, type RedisServer as RedisProcess } from '../support/redis-server.js';
import { tempDirSync } from '../support/temp-dir.js';
import { testIo, type TestIo } from '../support/cli-io.js';

const PASSWORD = 's3cret-Pa55word';

const io = (signal?: AbortSignal): TestIo => testIo({ env: { REDIS_PASSWORD: PASSWORD }, ...(signal ? { signal } : {}) });

describe('runWorkerCommand', () => {
  let dir: string;
  const writeConfig = (config: object): string => {
    const file = join(dir, 'worker.json');
    writeFileSync(file, JSON.stringify(config));
    return file;
  };
  beforeEach(() => {
    dir = tempDirSync('agentrx-worker-cmd-');
  });

  // The only case that needs a redis-server; the others run without one.
  describeWithRedis('when Redis requires a password and runs', () => {
    let redis: RedisProcess | undefined;
    let emu: OpenAiEmulator | undefined;
    afterEach(async () => {
      await emu?.close();
      await redis?.stop();
      emu = undefined;
      redis = undefined;
    });

    it('should run a submitted session, log one line per job start and end, and exit 0 on its signal', async () => {
      redis = await startRedis({ password: PASSWORD });
      emu = await startOpenAiEmulator({ script: [{ text: 'Hi from the worker.' }] });
      const port = redis.port;
      const configFile = writeConfig({
        provider: 'local',
        logLevel: 'silent',
        providers: { local: { baseUrl: emu.baseUrl, model: 'scripted' } },
        store: { type: 'redis', url: `redis://default:\${REDIS_PASSWORD}@127.0.0.1:${port}`, keyPrefix: 'cmd:' },
        runtime: { queueName: 'cmd-q', idleMs: 60_000 },
      });
      const ctrl = new AbortController();
      const cli = io(ctrl.signal);
      const exit = runWorkerCommand({ configFile, concurrency: '2', lockMs: '2000', stalledMs: '1500' }, cli);
      await until(() => /taking sessions/.test(cli.stderr()), 20_000, 'the worker to start');

      const store = new RedisSessionStore({ url: redis.url, keyPrefix: 'cmd:' });
      const queue = await SessionQueue.connect({ redis: { url: redis.url, keyPrefix: 'cmd:' }, store, queueName: 'cmd-q' });
      try {
        const handle = await queue.submit({ prompt: 'Hello?' });
        await expect(handle.result).resolves.toMatchObject({ text: 'Hi from the worker.' });
        await handle.close();
        await handle.closed;
        await until(() => cli.stderr().includes(`job ${handle.id} ended`), 10_000, 'the end line');
        ctrl.abort();
        await expect(exit).resolves.toBe(0);
        const lines = cli
          .stderr()
          .split('\n')
          .filter((l) => l.includes(handle.id));
        expect(lines.map((l) => l.replace(/.*job \S+ (\w+).*/, '$1'))).toEqual(['started', 'ended']);
        expect(cli.stderr()).toMatch(/concurrency 2, job lock 2000 ms, stalled check every 1500 ms/);
        expect(cli.stderr()).toMatch(/redis:\/\/\*\*\*@127\.0\.0\.1/);
        expect(cli.stderr()).not.toContain(PASSWORD);
      } finally {
        ctrl.abort();
        await exit;
        await queue.close();
        await store.close();
      }
    }, 40_000);
  });

  describe('when Redis is unreachable', () => {
    it('should exit 2 with an error naming the URL, its password redacted', async () => {
      const port = await freePort();
      const configFile = writeConfig({ provider: 'local', logLevel: 'silent', store: { type: 'redis', url: `redis://default:${PASSWORD}@127.0.0.1:${port}` } });
      const cli = io();

      await expect(runWorkerCommand({ configFile }, cli)).resolves.toBe(2);
      expect(cli.stderr()).toMatch(new RegExp(`cannot connect to Redis.*redis://\\*\\*\\*@127\\.0\\.0\\.1:${port}`));
      expect(cli.stderr()).toMatch(/hint: start Redis/);
      expect(cli.stderr()).not.toContain(PASSWORD);
    }, 30_000);
  });

  describe('when the config has no Redis store or a bad runtime section', () => {
    it('should exit 2 listing every problem, with the URL redacted', async () => {
      const configFile = writeConfig({
        provider: 'local',
        store: { type: 'file', url: `http://user:${PASSWORD}@host` },
        runtime: { concurrency: 0, color: 'red' },
      });
      const cli = io();

      await expect(runWorkerCommand({ configFile }, cli)).resolves.toBe(2);
      const err = cli.stderr();
      expect(err).toMatch(/store\.type: agentrx worker needs the Redis store/);
      expect(err).toMatch(/store\.url/);
      expect(err).toMatch(/runtime\.concurrency/);
      expect(err).toMatch(/runtime\.color/);
      expect(err).not.toContain(PASSWORD);
    });

    it('should refuse a --lock-ms or --stalled-ms that is not a whole number of milliseconds within bounds, with exit 2', async () => {
      const configFile = writeConfig({ store: { type: 'redis', url: 'redis://127.0.0.1:1' } });
      const bad = io();
      await expect(runWorkerCommand({ configFile, lockMs: '5s' }, bad)).resolves.toBe(2);
      expect(bad.stderr()).toMatch(/--lock-ms must be an integer number of milliseconds from 100 to 3600000; got "5s"/);
      const small = io();
      await expect(runWorkerCommand({ configFile, stalledMs: '10' }, small)).resolves.toBe(2);
      expect(small.stderr()).toMatch(/--stalled-ms must be an integer number of milliseconds from 100 to 3600000; got "10"/);
    });

    it('should refuse a bad --concurrency with exit 2', async () => {
      const configFile = writeConfig({ store: { type: 'redis', url: 'redis://127.0.0.1:1' } });
      const cli = io();
      await expect(runWorkerCommand({ configFile, concurrency: 'many' }, cli)).resolves.toBe(2);
      expect(cli.stderr()).toMatch(/--concurrency must be an integer ≥ 1; got "many"/);
    });
  });
});
