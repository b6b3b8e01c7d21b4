import { AgentRx } from '../../src/agentrx.js';
import { ContainerModule, type Newable } from '../../src/core/util/inversify.js';
import type { ToolHandler } from '../../src/core/plugin/tool-handler.js';
import { RedisSessionStore } from '../../src/distributed/redis-store/redis-session-store.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { SessionQueue } from '../../src/distributed/session-queue.js';
import { startWorker, type SessionWorker, type SessionWorkerOptions } from '../../src/distributed/session-worker.js';
import { startOpenAiEmulator, type EmulatorTurn, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { startRedisServer as startRedis, type RedisServer as RedisProcess } from '../support/redis-server.js';

/** Short locks and leases, so a takeover happens within seconds. */
export const FAST = { leaseMs: 1_000, lockDurationMs: 1_500, stalledIntervalMs: 1_000 } as const;

/** One test's world: a real redis-server, the OpenAI emulator, workers and clients; `close()` stops them all. */
export class DistributedWorld {
  readonly workers: SessionWorker[] = [];
  readonly instances: AgentRx[] = [];
  readonly stores: RedisSessionStore[] = [];
  readonly queues: SessionQueue[] = [];
  readonly logs: string[] = [];
  readonly queueName = `q-${Math.random().toString(36).slice(2, 8)}`;

  private constructor(
    readonly redis: RedisProcess,
    readonly emu: OpenAiEmulator,
  ) {}

  static async start(script: readonly EmulatorTurn[], redisOpts: { password?: string } = {}): Promise<DistributedWorld> {
    const redis = await startRedis(redisOpts);
    const emu = await startOpenAiEmulator({ script });
    return new DistributedWorld(redis, emu);
  }

  /** A store on the world's Redis (closed with the world). */
  store(owner?: string): RedisSessionStore {
    const store = new RedisSessionStore({ url: this.redis.url, leaseMs: FAST.leaseMs, tailPollMs: 500, ...(owner ? { owner } : {}) });
    this.stores.push(store);
    return store;
  }

  /** An AgentRx on the Local provider against the emulator, whose store is the Redis engine. */
  async rx(tools: readonly Newable<ToolHandler>[] = []): Promise<AgentRx> {
    const store = this.store();
    const rx = await AgentRx.create({
      modules: [new ContainerModule((o) => void o.bind(SessionStore).toConstantValue(store))],
      tools: [...tools],
      config: {
        provider: 'local',
        logLevel: 'silent',
        consumers: { terminal: false },
        providers: { local: { baseUrl: this.emu.baseUrl, model: 'scripted', retryBaseMs: 1 } },
      },
    });
    this.instances.push(rx);
    return rx;
  }

  /** A worker in this process on its own AgentRx (by default: Local against the emulator, with `tools`). */
  async worker(tools: readonly Newable<ToolHandler>[] = [], opts: Partial<SessionWorkerOptions> = {}, made?: AgentRx): Promise<SessionWorker> {
    const rx = made ?? (await this.rx(tools));
    const worker = await startWorker({
      rx,
      redis: { url: this.redis.url },
      queueName: this.queueName,
      concurrency: 4,
      lockDurationMs: FAST.lockDurationMs,
      stalledIntervalMs: FAST.stalledIntervalMs,
      takeoverWaitMs: 10_000,
      log: (line) => this.logs.push(line),
      ...opts,
    });
    this.workers.push(worker);
    return worker;
  }

  /** A client (as another process would have): its own connection and store. */
  async queue(opts: { clientLeaseMs?: number } = {}): Promise<SessionQueue> {
    const queue = await SessionQueue.connect({ redis: { url: this.redis.url }, store: this.store(), queueName: this.queueName, ...opts });
    this.queues.push(queue);
    return queue;
  }

  async close(): Promise<void> {
    for (const w of this.workers.splice(0)) await w.stop({ graceMs: 0 }).catch(() => undefined);
    for (const q of this.queues.splice(0)) await q.close().catch(() => undefined);
    for (const rx of this.instances.splice(0)) await rx.stop().catch(() => undefined);
    for (const s of this.stores.splice(0)) await s.close().catch(() => undefined);
    await this.emu.close();
    await this.redis.stop();
  }
}

/** Resolves once `cond()` holds, polling every 20 ms; rejects after `timeoutMs`. */
export async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
