import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { DistributedKeys } from './distributed-keys.js';
import type { PoolStatus, QueueDepth, WorkerHeartbeat, WorkerStatus } from './pool-status.types.js';

export type { PoolStatus, QueueDepth, WorkerHeartbeat, WorkerSessionStatus, WorkerStatus } from './pool-status.types.js';

/**
 * Writes a worker's heartbeat: the JSON under its own key with a expiry of `ttlMs`, and its id in
 * the queue's worker set scored by that expiry (a reader lists the ids whose score is in the
 * future, so a worker that died drops out once its heartbeat expires); expired ids are trimmed.
 */
export async function writeHeartbeat(redis: Redis, keys: DistributedKeys, beat: WorkerHeartbeat, ttlMs: number): Promise<void> {
  const expiresAt = beat.heartbeatAt + ttlMs;
  const set = keys.workers(beat.queue);
  await redis
    .multi()
    .set(keys.worker(beat.queue, beat.id), JSON.stringify(beat), 'PX', ttlMs)
    .zadd(set, expiresAt, beat.id)
    .zremrangebyscore(set, '-inf', beat.heartbeatAt)
    .pexpire(set, ttlMs * 10)
    .exec();
}

/** Removes a stopped worker's heartbeat at once (instead of waiting for it to expire). */
export async function clearHeartbeat(redis: Redis, keys: DistributedKeys, queue: string, workerId: string): Promise<void> {
  await redis.multi().del(keys.worker(queue, workerId)).zrem(keys.workers(queue), workerId).exec();
}

/** The workers of `queueName` whose heartbeat has not expired, oldest first. */
export async function liveWorkers(redis: Redis, keys: DistributedKeys, queueName: string, now = Date.now()): Promise<WorkerStatus[]> {
  const ids = await redis.zrangebyscore(keys.workers(queueName), now, '+inf');
  if (ids.length === 0) return [];
  const values = await redis.mget(...ids.map((id) => keys.worker(queueName, id)));
  const workers: WorkerStatus[] = [];
  for (const value of values) {
    if (value === null) continue;
    let beat: WorkerHeartbeat;
    try {
      beat = JSON.parse(value) as WorkerHeartbeat;
    } catch {
      continue; // not ours: skip it rather than fail the listing
    }
    const since = Math.max(0, now - beat.heartbeatAt);
    const sessions = (beat.sessions ?? []).map((s) => ({ ...s, leaseAgeMs: s.leaseAgeMs + since }));
    workers.push({ ...beat, sessions, oldestLeaseAgeMs: sessions.reduce((m, s) => Math.max(m, s.leaseAgeMs), 0) });
  }
  return workers.sort((a, b) => a.startedAt - b.startedAt || a.id.localeCompare(b.id));
}

/** The queue's jobs by state, as BullMQ counts them. */
export async function queueDepth(queue: Queue): Promise<QueueDepth> {
  const c = await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed');
  return {
    name: queue.name,
    waiting: (c['waiting'] ?? 0) + (c['prioritized'] ?? 0),
    active: c['active'] ?? 0,
    delayed: c['delayed'] ?? 0,
    failed: c['failed'] ?? 0,
  };
}

/** The pool's live workers and queue depth. */
export async function readPoolStatus(redis: Redis, keys: DistributedKeys, queue: Queue): Promise<PoolStatus> {
  const at = Date.now();
  const [workers, depth] = await Promise.all([liveWorkers(redis, keys, queue.name, at), queueDepth(queue)]);
  return { at, queue: depth, workers };
}
