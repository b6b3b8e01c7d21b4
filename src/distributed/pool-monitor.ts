import type { Queue } from 'bullmq';
import { loadBullmq } from './bullmq.js';
import type { Redis } from 'ioredis';
import { redisStoreError } from './redis-store/redis-connection.js';
import { DEFAULT_KEY_PREFIX, DEFAULT_QUEUE_NAME, DistributedKeys } from './distributed-keys.js';
import { registerPoolMetrics, type PoolMetrics, type PoolMetricsOptions } from './distributed-metrics.js';
import { openRedis } from './redis-link.js';
import type { RedisLocation } from './distributed-keys.js';
import { liveWorkers, queueDepth, readPoolStatus } from './pool-status.js';
import type { PoolStatus } from './pool-status.types.js';

/** Options of {@link PoolMonitor.connect}. */
export interface PoolMonitorOptions {
  readonly redis: RedisLocation;
  /** BullMQ queue name (default `agentrx-sessions`). */
  readonly queueName?: string;
}

/**
 * A read-only view of the worker pool for operations (`agentrx workers`, the gauges of `agentrx
 * serve`): the live workers from their heartbeats, and the queue's depth from BullMQ.
 */
export class PoolMonitor {
  private closed = false;

  private constructor(
    private readonly url: string,
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly keys: DistributedKeys,
  ) {}

  /** Connects to the pool's Redis; an unreachable Redis is a `store_error` naming the redacted URL. */
  static async connect(opts: PoolMonitorOptions): Promise<PoolMonitor> {
    const { Queue } = await loadBullmq();
    const keys = new DistributedKeys(opts.redis.keyPrefix ?? DEFAULT_KEY_PREFIX);
    const redis = await openRedis(opts.redis.url, 'agentrx-pool-monitor');
    const queue = new Queue(opts.queueName ?? DEFAULT_QUEUE_NAME, { connection: redis, prefix: keys.bullPrefix });
    queue.on('error', () => undefined);
    return new PoolMonitor(opts.redis.url, redis, queue, keys);
  }

  /** The live workers and the queue depth now. */
  async status(): Promise<PoolStatus> {
    try {
      return await readPoolStatus(this.redis, this.keys, this.queue);
    } catch (e) {
      throw redisStoreError(this.url, 'cannot read the worker pool', e);
    }
  }

  /** Registers `agentrx.queue.jobs`, `agentrx.workers` and `agentrx.pool.sessions` (see `registerPoolMetrics`). */
  registerMetrics(opts: PoolMetricsOptions = {}): PoolMetrics {
    return registerPoolMetrics(
      {
        queue: this.queue.name,
        depth: () => queueDepth(this.queue),
        pool: async () => ({ workers: await liveWorkers(this.redis, this.keys, this.queue.name) }),
      },
      opts,
    );
  }

  /** Closes its connection. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.close().catch(() => undefined);
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
