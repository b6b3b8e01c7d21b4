import type { RegisterCommand } from '../cli-io.js';
import { collect, DEMO_TOOLS_HELP, MODULE_HELP } from '../flags.js';

/** Flags of `agentrx worker`. */
export interface WorkerCommandFlags {
  /** The JSON config file: the usual sections, with `store: { type: 'redis', url, keyPrefix?, leaseMs? }` and `runtime` (queue, concurrency, idle and grace times). */
  readonly configFile: string;
  /** Sessions run at once (overrides `runtime.concurrency`). */
  readonly concurrency?: number | string;
  /**
   * `--lock-ms`: BullMQ's job lock (ms). A worker that stops renewing it for this long has stalled,
   * and its sessions go to other workers: with the stalled check and the store lease, this bounds
   * how long a dead worker's sessions wait (default 30,000).
   */
  readonly lockMs?: number | string;
  /** `--stalled-ms`: how often (ms) the worker looks for jobs whose lock expired (default 30,000). */
  readonly stalledMs?: number | string;
  /** `--module <file>` (repeatable): ES modules exporting the tools, modules and consumers the sessions use (the config's `modules` adds more). */
  readonly module?: readonly string[];
  /** `--demo-tools`: also offer the demo tools. */
  readonly demoTools?: boolean;
}

/**
 * `--lock-ms` / `--stalled-ms` of `agentrx worker`, as shown by its `--help` (the command's flags
 * are declared with these texts).
 */
const WORKER_TIMING_FLAGS = {
  lockMs: [
    '--lock-ms <ms>',
    "BullMQ job lock: a worker that stops renewing it for this long has stalled and its sessions go to other workers (default 30000; a takeover also waits for the store's leaseMs)",
  ],
  stalledMs: ['--stalled-ms <ms>', 'how often the worker looks for jobs of stalled workers (default 30000)'],
} as const;

/** Bounds of `--lock-ms` and `--stalled-ms` (ms). */
export const MIN_TIMING_MS = 100;
export const MAX_TIMING_MS = 3_600_000;

/** `agentrx worker`: one worker of the pool, running sessions from the queue until stopped. */
export const registerWorkerCommand: RegisterCommand = (program, ctx) => {
  program
    .command('worker')
    .description('run sessions from the queue (Redis + BullMQ) until SIGTERM; config needs store: { type: "redis", url }')
    .requiredOption('-c, --config <file>', 'JSON config file (store: { type: "redis", url }, runtime: { queueName, concurrency, idleMs, graceMs })')
    .option('--concurrency <n>', 'sessions run at once (default runtime.concurrency, 10)')
    .option(...WORKER_TIMING_FLAGS.lockMs)
    .option(...WORKER_TIMING_FLAGS.stalledMs)
    .option('--module <file>', MODULE_HELP, collect, [])
    .option('--demo-tools', DEMO_TOOLS_HELP)
    .action(async (flags: { config: string; concurrency?: string; lockMs?: string; stalledMs?: string; module: string[]; demoTools?: boolean }) => {
      const { config, ...rest } = flags;
      ctx.exit(await (await import('./worker.action.js')).runWorkerCommand({ configFile: config, ...rest }, ctx.io));
    });
};
