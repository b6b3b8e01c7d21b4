import { isAbsolute, resolve } from 'node:path';
import { AgentRx, type AgentRxConfigInput } from '../../agentrx.js';
import { configError, configIssue, type ConfigIssue } from '../../core/config/config-issue.js';
import { readConfigFile } from '../../core/config/read-config-file.js';
import { AgentRxError, isAgentRxError } from '../../core/errors.js';
import { redisStoreConfigOf } from '../../distributed/redis-store/redis-store.config.js';
import { startWorker, type SessionWorker } from '../../distributed/session-worker.js';
import { RuntimeConfigToken, type RuntimeConfig } from '../../distributed/runtime.config.js';
import type { CliIo } from '../cli-io.js';
import { reportPoolError } from '../report.js';
import { EXIT_OK } from '../exit-codes.js';
import { untilStopped } from '../until-stopped.js';
import { demoTools } from '../run-config.js';
import { loadUserPlugins } from '../user-modules.js';
import { MAX_TIMING_MS, MIN_TIMING_MS, type WorkerCommandFlags } from './worker.js';
/**
 * `agentrx worker --config <file> [--concurrency N] [--lock-ms MS] [--stalled-ms MS]`: runs sessions of the pool from the queue
 * until SIGINT/SIGTERM (or `io.signal`), then stops gracefully (running requests finish within
 * `worker.graceMs`, live sessions are handed back to the queue). Logs one line per job start and
 * end on stderr. The config's `store` must be `{ type: 'redis', url }`: every worker and client
 * shares it. Returns the exit code: 0 after a graceful stop, 2 for a bad config or an unreachable
 * Redis (the URL is named with its credentials redacted), 1 for other failures.
 */
export async function runWorkerCommand(flags: WorkerCommandFlags, io: CliIo): Promise<number> {
  const say = (line: string): void => void io.err.write(`agentrx worker: ${line}\n`);
  let rx: AgentRx | undefined;
  let worker: SessionWorker | undefined;
  let url: string | undefined;
  try {
    let concurrency: number | undefined;
    if (flags.concurrency !== undefined) {
      concurrency = Number(flags.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1)
        throw new AgentRxError('invalid_options', `--concurrency must be an integer ≥ 1; got ${JSON.stringify(flags.concurrency)}`);
    }
    const lockMs = timingFlag('--lock-ms', flags.lockMs);
    const stalledMs = timingFlag('--stalled-ms', flags.stalledMs);
    const file = isAbsolute(flags.configFile) ? flags.configFile : resolve(io.cwd, flags.configFile);
    // The library's loader: errors locate the problem without quoting the file (it may hold keys).
    const raw = await readConfigFile(file);
    const storeType = (raw as { store?: { type?: unknown } }).store?.type;
    const notRedis =
      storeType === 'redis'
        ? []
        : [
            configIssue(
              'store.type',
              'type',
              'agentrx worker needs the Redis store: every worker and client shares the sessions',
              storeType,
              "'redis' (with store.url)",
            ),
          ];
    try {
      const user = await loadUserPlugins(flags.module ?? [], raw as Record<string, unknown>, flags.configFile, io.cwd);
      // A user's file may name any provider a module registers: checked when it is validated.
      rx = await AgentRx.create<string>({
        config: raw as AgentRxConfigInput,
        env: io.env,
        modules: [...demoTools(flags.demoTools, io.cwd), ...user.modules],
        tools: user.tools,
        consumers: user.consumers,
      });
    } catch (e) {
      // One list: the config's own problems and the worker's need for Redis.
      const issues = (e as AgentRxError).details?.['issues'];
      if (isAgentRxError(e, 'invalid_config') && Array.isArray(issues)) throw configError([...notRedis, ...(issues as ConfigIssue[])], flags.configFile);
      throw e;
    }
    if (notRedis.length > 0) throw configError(notRedis, flags.configFile);
    const { store } = rx.config;
    const runtime = rx.container.get<RuntimeConfig>(RuntimeConfigToken);
    const redis = redisStoreConfigOf(store, 'agentrx worker');
    url = redis.url;
    worker = await startWorker({
      rx,
      redis: { url, keyPrefix: redis.keyPrefix },
      concurrency: concurrency ?? runtime.concurrency,
      queueName: runtime.queueName,
      idleMs: runtime.idleMs,
      graceMs: runtime.graceMs,
      heartbeatMs: runtime.heartbeatMs,
      ...(lockMs !== undefined ? { lockDurationMs: lockMs } : {}),
      ...(stalledMs !== undefined ? { stalledIntervalMs: stalledMs } : {}),
      log: (line) => say(line),
    });
    await untilStopped(io.signal);
    say('stopping: running requests finish, live sessions go back to the queue');
    await worker.stop();
    worker = undefined;
    return EXIT_OK;
  } catch (e) {
    return reportPoolError(e, url, say);
  } finally {
    await worker?.stop({ graceMs: 0 }).catch(() => undefined);
    await rx?.stop().catch(() => undefined);
  }
}

/** A milliseconds flag: undefined when not given, else an integer within bounds (`invalid_options` otherwise). */
function timingFlag(flag: string, value: number | string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < MIN_TIMING_MS || ms > MAX_TIMING_MS) {
    throw new AgentRxError(
      'invalid_options',
      `${flag} must be an integer number of milliseconds from ${MIN_TIMING_MS} to ${MAX_TIMING_MS}; got ${JSON.stringify(value)}`,
    );
  }
  return ms;
}
