import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Job } from 'bullmq';
import { loadBullmq } from './bullmq.js';
import type { Redis } from 'ioredis';
import type { SessionFactory } from '../core/plugin/session-placement.js';
import type { SessionStore } from '../core/store/session-store.js';
import { AgentRxError, toAgentRxError } from '../core/errors.js';
import { DEFAULT_KEY_PREFIX, DEFAULT_QUEUE_NAME, DistributedKeys } from './distributed-keys.js';
import { registerPoolMetrics, type PoolMetrics, type PoolMetricsOptions } from './distributed-metrics.js';
import { JobRunner } from './job-runner.js';
import { clearHeartbeat, queueDepth, writeHeartbeat } from './pool-status.js';
import type { WorkerHeartbeat } from './pool-status.types.js';
import { openRedis, redactUrl, scrubUrl, StreamFollower } from './redis-link.js';
import type { RedisLocation } from './distributed-keys.js';
import { defineSubmissionScripts } from './submission-writer.js';
import type { SessionJobData } from './submit-options.js';

/**
 * What a worker runs sessions on: a factory of sessions of this process sharing the pool's store
 * (an `AgentRx` fits; the distributed module hands the container's own).
 */
export interface WorkerSessionHost extends SessionFactory {
  /** The store the sessions' logs go to: the Redis engine shared by the pool. */
  readonly sessionStore: SessionStore;
  /** Ends the host (called by the worker for a host it built with `create`). */
  stop(): Promise<void>;
}

/** Options of {@link startWorker}. */
export interface SessionWorkerOptions {
  /** The AgentRx the sessions run on (its SessionStore must be shared: the Redis engine). The caller stops it. */
  readonly rx?: WorkerSessionHost;
  /** Or: builds one; the worker then stops it on `stop()`. */
  readonly create?: () => Promise<WorkerSessionHost>;
  /** The Redis of the queue and the submissions' streams (credentials never logged). */
  readonly redis: RedisLocation;
  /** Sessions run at once (default 10). */
  readonly concurrency?: number;
  /** BullMQ queue name (default `agentrx-sessions`). */
  readonly queueName?: string;
  /** An idle live session (no request running, no input) closes after this long (default 10 min). */
  readonly idleMs?: number;
  /** `stop()` lets running requests finish for this long before handing them back (default 30 s). */
  readonly graceMs?: number;
  /** A takeover waits this long for the dead owner's store lease to expire (default 60 s). */
  readonly takeoverWaitMs?: number;
  /** BullMQ job lock: a worker that stops renewing it for this long has stalled (default 30 s). */
  readonly lockDurationMs?: number;
  /** How often BullMQ looks for stalled jobs (default 30 s). */
  readonly stalledIntervalMs?: number;
  /** Takeovers of one job before BullMQ fails it (default 10: a session outlives several worker deaths). */
  readonly maxStalledCount?: number;
  /** How long an ended submission's streams and state stay in Redis (default 1 day). */
  readonly retainMs?: number;
  /** This worker's id in logs and the submissions' state (default `<host>:<pid>:<random>`). */
  readonly workerId?: string;
  /** One line per event (job start, end, hand-back, errors). Default: none. */
  readonly log?: (line: string) => void;
  /**
   * How often the worker announces itself in Redis (id, host, pid, start time, its sessions and
   * their lease ages; see `agentrx workers`); the announcement expires after three periods without
   * renewal. Default 5 s.
   */
  readonly heartbeatMs?: number;
  /**
   * The gauges `agentrx.worker.sessions` and `agentrx.queue.jobs` are registered on this
   * MeterProvider (default: the global one of `@opentelemetry/api`); `false`: none.
   */
  readonly metrics?: PoolMetricsOptions | false;
}

/** A running worker. */
export interface SessionWorker {
  readonly id: string;
  /** Jobs running now. */
  readonly active: number;
  /** What its next heartbeat announces (see `WorkerHeartbeat`). */
  heartbeat(): WorkerHeartbeat;
  /**
   * Graceful stop: takes no more jobs, closes idle sessions and lets running requests finish for
   * up to `graceMs`, hands every session it ran back to the queue (lease released, job back in
   * `wait`) so another worker resumes it, then closes its connections. Idempotent.
   */
  stop(opts?: { readonly graceMs?: number }): Promise<void>;
}

/**
 * Starts a worker of the session pool: BullMQ jobs of `queueName`, each a session run with the
 * worker's AgentRx until it closes (see {@link JobRunner}). A worker that dies stops renewing its
 * job locks: BullMQ's stalled-job check gives its jobs to other workers, which resume the sessions
 * from the log and the ledger (the store lease of the dead worker expires first).
 */
export async function startWorker(opts: SessionWorkerOptions): Promise<SessionWorker> {
  if (!opts.rx === !opts.create)
    throw new AgentRxError('invalid_options', 'startWorker: pass exactly one of rx (an AgentRx) or create (a function building one)');
  const concurrency = opts.concurrency ?? 10;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new AgentRxError('invalid_options', `startWorker: concurrency must be an integer ≥ 1; got ${JSON.stringify(opts.concurrency)}`);
  const heartbeatMs = opts.heartbeatMs ?? 5_000;
  if (!Number.isInteger(heartbeatMs) || heartbeatMs < 10)
    throw new AgentRxError('invalid_options', `startWorker: heartbeatMs must be an integer ≥ 10; got ${JSON.stringify(opts.heartbeatMs)}`);
  const url = opts.redis.url;
  const keys = new DistributedKeys(opts.redis.keyPrefix ?? DEFAULT_KEY_PREFIX);
  const id = opts.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const log = opts.log ?? (() => undefined);
  const queueName = opts.queueName ?? DEFAULT_QUEUE_NAME;
  const { Queue, Worker, WaitingError } = await loadBullmq();
  // Redis first: an unreachable Redis fails before any AgentRx is built.
  const commands = defineSubmissionScripts(await openRedis(url, `agentrx-worker-${id}`));
  let bullConnection: Redis | undefined;
  let rx: WorkerSessionHost;
  try {
    bullConnection = await openRedis(url, `agentrx-worker-bull-${id}`);
    rx = opts.rx ?? (await opts.create!());
  } catch (e) {
    commands.disconnect();
    bullConnection?.disconnect();
    throw e;
  }
  const bull = bullConnection;
  const runners = new Set<JobRunner>();
  /** When this worker took each running job (the lease age `agentrx workers` shows). */
  const since = new Map<JobRunner, { submissionId: string; at: number }>();
  const startedAt = Date.now();
  const followers = new Set<StreamFollower>();
  let stopping: Promise<void> | undefined;
  let graceMs = opts.graceMs ?? 30_000;

  const processJob = async (job: Job<SessionJobData>, token?: string): Promise<string> => {
    const data = job.data;
    const runner = new JobRunner(data, {
      sessions: rx,
      store: rx.sessionStore,
      commands,
      keys: keys.of(data.submissionId),
      workerId: id,
      idleMs: opts.idleMs ?? 600_000,
      takeoverWaitMs: opts.takeoverWaitMs ?? 60_000,
      retainMs: opts.retainMs ?? 86_400_000,
      follow: (key, after, onEntries) => {
        const follower = new StreamFollower(
          () => openRedis(url, `agentrx-worker-inputs-${id}`),
          key,
          after,
          onEntries,
          (e) => log(`worker ${id}: reading the inputs of ${data.submissionId}: ${scrubUrl(toAgentRxError(e).message, url)}`),
        );
        followers.add(follower);
        return async () => {
          followers.delete(follower);
          await follower.stop();
        };
      },
      log: (line) => log(`worker ${id}: ${line}`),
    });
    runners.add(runner);
    since.set(runner, { submissionId: data.submissionId, at: Date.now() });
    log(`worker ${id}: job ${data.submissionId} started${job.attemptsStarted > 1 ? ` (taken over, start ${job.attemptsStarted})` : ''}`);
    if (stopping) runner.handBack(graceMs);
    let outcome;
    try {
      outcome = await runner.run();
    } catch (e) {
      log(`worker ${id}: job ${data.submissionId} failed: ${scrubUrl(toAgentRxError(e).message, url)}`);
      throw e;
    } finally {
      runners.delete(runner);
      since.delete(runner);
    }
    if (outcome === 'superseded') {
      // Another worker holds the job now (its lock is not ours): BullMQ must not touch it for us.
      log(`worker ${id}: job ${data.submissionId} left to the worker that took it over (session ${runner.sessionId ?? 'not opened'})`);
      throw new WaitingError();
    }
    if (outcome === 'handed_back') {
      log(`worker ${id}: job ${data.submissionId} handed back (session ${runner.sessionId ?? 'not opened'})`);
      // Back to `wait` without counting an attempt; WaitingError tells BullMQ the job moved.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    log(`worker ${id}: job ${data.submissionId} ended (session ${runner.sessionId ?? 'not opened'})`);
    return runner.sessionId ?? '';
  };

  const lockDuration = opts.lockDurationMs ?? 30_000;
  const stalledInterval = opts.stalledIntervalMs ?? 30_000;
  const worker = new Worker<SessionJobData, string>(queueName, processJob, {
    connection: bull,
    prefix: keys.bullPrefix,
    concurrency,
    lockDuration,
    stalledInterval,
    maxStalledCount: opts.maxStalledCount ?? 10,
    name: id,
  });
  worker.on('error', (e) => log(`worker ${id}: queue error: ${scrubUrl(String((e as Error)?.message ?? e), url)}`));
  await worker.waitUntilReady();
  log(
    `worker ${id}: taking sessions from queue '${queueName}' on ${redactUrl(url)} (concurrency ${concurrency}, job lock ${lockDuration} ms, stalled check every ${stalledInterval} ms)`,
  );

  const heartbeat = (): WorkerHeartbeat => {
    const now = Date.now();
    return {
      id,
      host: hostname(),
      pid: process.pid,
      queue: queueName,
      startedAt,
      heartbeatAt: now,
      concurrency,
      sessions: [...since].map(([runner, held]) => ({
        submissionId: held.submissionId,
        ...(runner.sessionId !== undefined ? { sessionId: runner.sessionId } : {}),
        leaseAgeMs: now - held.at,
      })),
    };
  };
  const beat = (): Promise<void> =>
    writeHeartbeat(commands, keys, heartbeat(), heartbeatMs * 3).catch((e: unknown) =>
      log(`worker ${id}: cannot write its heartbeat: ${scrubUrl(toAgentRxError(e).message, url)}`),
    );
  await beat();
  const beating = setInterval(() => void beat(), heartbeatMs);
  beating.unref();
  // The gauges read the queue through a Queue on the command connection (no connection of its own).
  const depthQueue = new Queue(queueName, { connection: commands, prefix: keys.bullPrefix });
  depthQueue.on('error', () => undefined);
  const gauges: PoolMetrics | undefined =
    opts.metrics === false
      ? undefined
      : registerPoolMetrics({ queue: queueName, depth: () => queueDepth(depthQueue), worker: { id, sessions: () => runners.size } }, opts.metrics ?? {});

  return {
    id,
    get active() {
      return runners.size;
    },
    heartbeat,
    stop(stopOpts = {}) {
      stopping ??= (async () => {
        graceMs = stopOpts.graceMs ?? graceMs;
        log(`worker ${id}: stopping (${runners.size} session(s) to finish or hand back)`);
        clearInterval(beating);
        gauges?.stop();
        const closing = worker.close();
        for (const r of runners) r.handBack(graceMs);
        await closing;
        await Promise.all([...followers].map((f) => f.stop()));
        await clearHeartbeat(commands, keys, queueName, id).catch(() => undefined);
        await depthQueue.close().catch(() => undefined);
        if (opts.create) await rx.stop();
        await commands.quit().catch(() => commands.disconnect());
        await bull.quit().catch(() => bull.disconnect());
        log(`worker ${id}: stopped`);
      })();
      return stopping;
    },
  };
}
