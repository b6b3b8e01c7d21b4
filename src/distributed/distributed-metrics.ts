import { metrics, type BatchObservableResult, type MeterProvider, type Observable } from '@opentelemetry/api';
import type { PoolStatus, QueueDepth } from './pool-status.types.js';

/** What the pool's gauges read at each collection; each part is optional (a worker knows its own sessions, `serve` the pool's). */
export interface PoolMetricsSource {
  /** The queue name, an attribute of every gauge. */
  readonly queue: string;
  /** The queue's jobs by state (`agentrx.queue.jobs`). */
  depth?(): Promise<QueueDepth>;
  /** This worker: its id and the sessions it runs now (`agentrx.worker.sessions`). */
  readonly worker?: { readonly id: string; sessions(): number };
  /** The pool's live workers and their sessions (`agentrx.workers`, `agentrx.pool.sessions`). */
  pool?(): Promise<Pick<PoolStatus, 'workers'>>;
}

/** Options of {@link registerPoolMetrics}. */
export interface PoolMetricsOptions {
  /** Default: the global MeterProvider of `@opentelemetry/api` (a no-op until the application sets one). */
  readonly meterProvider?: MeterProvider;
}

/** Registered gauges; `stop()` removes their callbacks (idempotent). */
export interface PoolMetrics {
  stop(): void;
}

/**
 * Registers the distributed runtime's observable gauges on meter `agentrx`, read at each
 * collection (a failed read, e.g. Redis away, reports nothing for that collection):
 * - `agentrx.queue.jobs{queue, state}`: jobs `waiting` (prioritized included), `active`, `delayed`, `failed`;
 * - `agentrx.worker.sessions{queue, worker}`: sessions this worker runs;
 * - `agentrx.workers{queue}`: workers whose heartbeat is live; `agentrx.pool.sessions{queue}`: the sessions they run.
 * Several processes may report `agentrx.queue.jobs` for one queue: they read the same counts.
 */
export function registerPoolMetrics(source: PoolMetricsSource, opts: PoolMetricsOptions = {}): PoolMetrics {
  const meter = (opts.meterProvider ?? metrics.getMeterProvider()).getMeter('agentrx');
  const removers: (() => void)[] = [];
  const queue = source.queue;
  if (source.depth) {
    const depth = source.depth.bind(source);
    const jobs = meter.createObservableGauge('agentrx.queue.jobs', { description: 'Session jobs in the queue, by state', unit: '{job}' });
    const cb = async (r: BatchObservableResult): Promise<void> => {
      const d = await depth().catch(() => undefined);
      if (!d) return;
      for (const state of ['waiting', 'active', 'delayed', 'failed'] as const) r.observe(jobs, d[state], { queue, state });
    };
    meter.addBatchObservableCallback(cb, [jobs]);
    removers.push(() => meter.removeBatchObservableCallback(cb, [jobs]));
  }
  if (source.worker) {
    const worker = source.worker;
    const gauge = meter.createObservableGauge('agentrx.worker.sessions', { description: 'Sessions this worker runs', unit: '{session}' });
    const cb = (r: { observe(value: number, attributes?: Record<string, string>): void }): void => r.observe(worker.sessions(), { queue, worker: worker.id });
    gauge.addCallback(cb);
    removers.push(() => gauge.removeCallback(cb));
  }
  if (source.pool) {
    const pool = source.pool.bind(source);
    const workers = meter.createObservableGauge('agentrx.workers', { description: 'Workers with a live heartbeat', unit: '{worker}' });
    const sessions = meter.createObservableGauge('agentrx.pool.sessions', { description: 'Sessions the live workers run', unit: '{session}' });
    const observables: Observable[] = [workers, sessions];
    const cb = async (r: BatchObservableResult): Promise<void> => {
      const p = await pool().catch(() => undefined);
      if (!p) return;
      r.observe(workers, p.workers.length, { queue });
      r.observe(
        sessions,
        p.workers.reduce((n, w) => n + w.sessions.length, 0),
        { queue },
      );
    };
    meter.addBatchObservableCallback(cb, observables);
    removers.push(() => meter.removeBatchObservableCallback(cb, observables));
  }
  let stopped = false;
  return {
    stop: () => {
      if (stopped) return;
      stopped = true;
      for (const remove of removers) remove();
    },
  };
}
