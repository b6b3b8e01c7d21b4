/**
 * Operations of the worker pool: workers announce themselves in Redis (heartbeat with expiry),
 * `agentrx workers` lists them with the queue depth, and the pool's gauges (OpenTelemetry) report
 * queue depth and session counts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type CollectionResult } from '@opentelemetry/sdk-metrics';
import { IsString } from 'class-validator';
import type { Redis } from 'ioredis';
import { runCli } from '../../src/cli/cli.js';
import { formatAge } from '../../src/cli/commands/workers.action.js';
import { injectable } from '../../src/core/util/inversify.js';
import type { ToolHandler } from '../../src/core/plugin/tool-handler.js';
import { DistributedKeys } from '../../src/distributed/distributed-keys.js';
import { PoolMonitor } from '../../src/distributed/pool-monitor.js';
import { liveWorkers, writeHeartbeat, type PoolStatus } from '../../src/distributed/pool-status.js';
import { openRedis } from '../../src/distributed/redis-link.js';
import type { RemoteSession } from '../../src/distributed/remote-session.js';
import { describeWithRedis, freePort } from '../support/redis-server.js';
import { tempDirSync } from '../support/temp-dir.js';
import { DistributedWorld, until } from './distributed-fixture.js';
import { testIo, type TestIo } from '../support/cli-io.js';

class GateInput {
  @IsString()
  text!: string;
}

/** Holds a session in its tool until the test opens the gate. */
@injectable()
class HoldToolHandler implements ToolHandler<GateInput> {
  static started: Promise<void>;
  static open: () => void;
  private static markStarted: () => void;
  private static opened: Promise<void>;
  static reset(): void {
    HoldToolHandler.started = new Promise((resolve) => (HoldToolHandler.markStarted = resolve));
    HoldToolHandler.opened = new Promise<void>((resolve) => (HoldToolHandler.open = resolve));
  }
  readonly name = 'hold';
  readonly description = 'Waits for the test.';
  readonly inputType = GateInput;
  readonly timeoutMs = 30_000;
  async handle(): Promise<string> {
    HoldToolHandler.markStarted();
    await HoldToolHandler.opened;
    return 'released';
  }
}

/** A reader the test collects from on demand. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** `name{attributes}` → value of every gauge point collected now. */
async function gauges(reader: TestReader): Promise<Map<string, number>> {
  const { resourceMetrics }: CollectionResult = await reader.collect();
  const out = new Map<string, number>();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const m of scope.metrics) {
      for (const p of m.dataPoints) {
        const attrs = Object.entries(p.attributes)
          .filter(([k]) => k !== 'queue')
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(',');
        out.set(`${m.descriptor.name}{${attrs}}`, p.value as number);
      }
    }
  }
  return out;
}

const PASSWORD = 'p00l-Pa55word';
const SCRIPT = [{ toolCalls: [{ id: 'call_hold', name: 'hold', arguments: { text: 'x' } }] }, { text: 'Released.' }];

const io = (env: Record<string, string> = {}): TestIo => testIo({ env });

describeWithRedis('worker pool operations', () => {
  let world: DistributedWorld | undefined;
  let dir: string;
  const handles: RemoteSession[] = [];
  beforeEach(() => {
    HoldToolHandler.reset();
    dir = tempDirSync('agentrx-workers-cmd-');
  });
  afterEach(async () => {
    HoldToolHandler.open();
    for (const h of handles.splice(0)) await h.detach();
    await world?.close();
    world = undefined;
  });

  /** The config file of `agentrx workers` for the world's Redis (with a password: read from $REDIS_PASSWORD). */
  const configFile = (w: DistributedWorld, withPassword = false): string => {
    const file = join(dir, 'workers.json');
    const url = withPassword ? `redis://default:\${REDIS_PASSWORD}@127.0.0.1:${w.redis.port}` : w.redis.url;
    writeFileSync(file, JSON.stringify({ store: { type: 'redis', url }, runtime: { queueName: w.queueName } }));
    return file;
  };
  const argv = (...args: string[]) => ['node', 'agentrx', ...args];

  /** Submits a session and waits until its tool holds it on the worker. */
  async function holdOne(w: DistributedWorld): Promise<RemoteSession> {
    const handle = await (await w.queue()).submit({ prompt: 'Hold on.' });
    handles.push(handle);
    await HoldToolHandler.started;
    return handle;
  }

  describe('agentrx workers', () => {
    describe('when one worker runs a session', () => {
      it('should list it with its session and lease age, and the queue depth, as JSON and as a table, without the password', async () => {
        world = await DistributedWorld.start(SCRIPT, { password: PASSWORD });
        const worker = await world.worker([HoldToolHandler], { heartbeatMs: 50 });
        await holdOne(world);
        const file = configFile(world, true);
        let status: PoolStatus | undefined;
        await until(
          async () => {
            const t = io({ REDIS_PASSWORD: PASSWORD });
            if ((await runCli(argv('workers', '--config', file, '--json'), t)) !== 0) throw new Error(t.stderr());
            status = JSON.parse(t.stdout()) as PoolStatus;
            return status.workers[0]?.sessions.length === 1;
          },
          10_000,
          'the heartbeat to report the session',
        );
        expect(status!.queue).toEqual({ name: world.queueName, waiting: 0, active: 1, delayed: 0, failed: 0 });
        expect(status!.workers).toHaveLength(1);
        const w = status!.workers[0]!;
        expect(w).toMatchObject({ id: worker.id, pid: process.pid, queue: world.queueName, concurrency: 4 });
        expect(w.sessions[0]!.submissionId).toMatch(/^sub-/);
        expect(w.oldestLeaseAgeMs).toBeGreaterThanOrEqual(w.sessions[0]!.leaseAgeMs - 1);
        expect(w.oldestLeaseAgeMs).toBeGreaterThanOrEqual(0);
        expect(status!.at - w.heartbeatAt).toBeLessThan(5_000);

        const table = io({ REDIS_PASSWORD: PASSWORD });
        expect(await runCli(argv('workers', '--config', file), table)).toBe(0);
        const lines = table.stdout().trimEnd().split('\n');
        expect(lines[0]).toBe(`queue ${world.queueName}: 0 waiting, 1 active, 0 delayed, 0 failed`);
        expect(lines[1]).toMatch(/^WORKER\s+HOST:PID\s+SESSIONS\s+OLDEST LEASE\s+LAST HEARTBEAT$/);
        expect(lines[2]).toContain(worker.id);
        expect(lines[2]).toMatch(new RegExp(`:${process.pid}\\s+1/4\\s+\\d+s\\s+\\d+s ago$`));
        expect(table.stdout() + table.stderr()).not.toContain(PASSWORD);
      }, 30_000);
    });

    describe('when the only worker has stopped', () => {
      it('should list no live worker', async () => {
        world = await DistributedWorld.start(SCRIPT);
        const worker = await world.worker([HoldToolHandler], { heartbeatMs: 50 });
        await worker.stop({ graceMs: 0 });
        const t = io();
        expect(await runCli(argv('workers', '--config', configFile(world)), t)).toBe(0);
        expect(t.stdout()).toBe(
          `queue ${world.queueName}: 0 waiting, 0 active, 0 delayed, 0 failed\nno live workers (start one with: agentrx worker --config <file>)\n`,
        );
      }, 30_000);
    });

    describe('when Redis is unreachable', () => {
      it('should exit 2 naming the redacted URL', async () => {
        const port = await freePort();
        const file = join(dir, 'down.json');
        writeFileSync(file, JSON.stringify({ store: { type: 'redis', url: `redis://default:${PASSWORD}@127.0.0.1:${port}` } }));
        const t = io();
        expect(await runCli(argv('workers', '--config', file), t)).toBe(2);
        expect(t.stderr()).toContain(`redis://***@127.0.0.1:${port}`);
        expect(t.stderr()).toContain('hint: start Redis');
        expect(t.stderr()).not.toContain(PASSWORD);
      });
    });

    describe('when the config does not use the Redis store', () => {
      it('should exit 2 saying store.type must be redis', async () => {
        const file = join(dir, 'memory.json');
        writeFileSync(file, JSON.stringify({ store: { type: 'memory' } }));
        const t = io();
        expect(await runCli(argv('workers', '--config', file), t)).toBe(2);
        expect(t.stderr()).toMatch(/store\.type: .*'redis'/);
      });
    });
  });

  describe('heartbeats', () => {
    describe('when a worker died and its heartbeat expired', () => {
      it('should leave it out of the live workers', async () => {
        world = await DistributedWorld.start([]);
        const keys = new DistributedKeys();
        const redis: Redis = await openRedis(world.redis.url, 'test');
        try {
          const now = Date.now();
          const beat = { id: 'dead', host: 'h', pid: 1, queue: 'q', startedAt: now - 60_000, heartbeatAt: now - 10_000, concurrency: 1, sessions: [] };
          await writeHeartbeat(redis, keys, beat, 5_000);
          await writeHeartbeat(redis, keys, { ...beat, id: 'alive', heartbeatAt: now }, 5_000);
          expect((await liveWorkers(redis, keys, 'q')).map((w) => w.id)).toEqual(['alive']);
        } finally {
          redis.disconnect();
        }
      });
    });
  });

  describe('metrics', () => {
    describe('when a worker runs a session and a monitor watches the pool', () => {
      it("should report the queue depth, the worker's sessions, the live workers and their sessions", async () => {
        world = await DistributedWorld.start(SCRIPT);
        const reader = new TestReader();
        const meterProvider = new MeterProvider({ readers: [reader] });
        const worker = await world.worker([HoldToolHandler], { heartbeatMs: 50, metrics: { meterProvider } });
        const monitor = await PoolMonitor.connect({ redis: { url: world.redis.url }, queueName: world.queueName });
        const registered = monitor.registerMetrics({ meterProvider });
        try {
          const handle = await holdOne(world);
          let seen = new Map<string, number>();
          await until(async () => (seen = await gauges(reader)).get('agentrx.pool.sessions{}') === 1, 10_000, 'the gauges to see the session');
          expect(seen.get(`agentrx.worker.sessions{worker=${worker.id}}`)).toBe(1);
          expect(seen.get('agentrx.queue.jobs{state=active}')).toBe(1);
          expect(seen.get('agentrx.queue.jobs{state=waiting}')).toBe(0);
          expect(seen.get('agentrx.queue.jobs{state=failed}')).toBe(0);
          expect(seen.get('agentrx.workers{}')).toBe(1);

          HoldToolHandler.open();
          await handle.result;
          await handle.close();
          await handle.closed;
          await until(async () => (seen = await gauges(reader)).get(`agentrx.worker.sessions{worker=${worker.id}}`) === 0, 10_000, 'the session to end');
          await until(async () => (seen = await gauges(reader)).get('agentrx.queue.jobs{state=active}') === 0, 10_000, 'the job to end');
        } finally {
          registered.stop();
          await monitor.close();
          await meterProvider.shutdown();
        }
      }, 30_000);
    });

    describe('when the application set a global MeterProvider', () => {
      it("should register the worker's gauges on it", async () => {
        world = await DistributedWorld.start([]);
        const reader = new TestReader();
        const meterProvider = new MeterProvider({ readers: [reader] });
        expect(metrics.setGlobalMeterProvider(meterProvider)).toBe(true);
        try {
          const worker = await world.worker();
          const seen = await gauges(reader);
          expect(seen.get(`agentrx.worker.sessions{worker=${worker.id}}`)).toBe(0);
          expect(seen.get('agentrx.queue.jobs{state=waiting}')).toBe(0);
        } finally {
          metrics.disable();
          await meterProvider.shutdown();
        }
      }, 30_000);
    });
  });
});

// Needs no redis-server: runs everywhere.
describe('formatAge', () => {
  it('should print seconds, minutes and hours compactly', () => {
    expect([950, 12_000, 303_000, 7_500_000].map(formatAge)).toEqual(['0s', '12s', '5m 03s', '2h 05m']);
  });
});
