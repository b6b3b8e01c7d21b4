import { isAbsolute, resolve } from 'node:path';
import { configError, configIssue } from '../../core/config/config-issue.js';
import { validateConfig } from '../../core/config/load-config.js';
import { readConfigFile } from '../../core/config/read-config-file.js';
import { coreStores } from '../../core/store/core-stores.js';
import { RedisStoreConfig } from '../../distributed/redis-store/redis-store.config.js';
import { redisStoreModule } from '../../distributed/redis-store/redis-store.module.js';
import { PoolMonitor } from '../../distributed/pool-monitor.js';
import type { PoolStatus } from '../../distributed/pool-status.types.js';
import { runtimeConfigOf, runtimeConfigSection } from '../../distributed/runtime.config.js';
import type { CliIo } from '../cli-io.js';
import { reportPoolError } from '../report.js';
import { EXIT_OK } from '../exit-codes.js';
import type { WorkersCommandFlags } from './workers.js';
/**
 * `agentrx workers --config <file> [--json]`: the worker pool now. A table of the live workers
 * (id, host:pid, sessions, oldest lease age, last heartbeat) under a line with the queue depth
 * (waiting, active, delayed, failed), or with `--json` one object `{ at, queue, workers }` (see
 * `PoolStatus`). A worker is live while its heartbeat (every `heartbeatMs`, 5 s by default) has
 * not expired. Exit code 0; 2 for a bad config or an unreachable Redis (named with its
 * credentials redacted); 1 for other failures.
 */
export async function runWorkersCommand(flags: WorkersCommandFlags, io: CliIo): Promise<number> {
  const say = (line: string): void => void io.err.write(`agentrx workers: ${line}\n`);
  let monitor: PoolMonitor | undefined;
  let url: string | undefined;
  try {
    const file = isAbsolute(flags.configFile) ? flags.configFile : resolve(io.cwd, flags.configFile);
    const raw = (await readConfigFile(file)) as { store?: unknown; runtime?: unknown };
    // Only the sections this command uses are validated (with ${VAR} interpolation): the rest is the workers' business.
    const stores = [...coreStores, redisStoreModule.registration];
    const { config, sections } = validateConfig(
      { ...(raw.store !== undefined ? { store: raw.store } : {}), ...(raw.runtime !== undefined ? { runtime: raw.runtime } : {}) },
      [runtimeConfigSection],
      io.env,
      undefined,
      stores,
    );
    if (!(config.store instanceof RedisStoreConfig)) {
      throw configError(
        [
          configIssue(
            'store.type',
            'type',
            'agentrx workers reads the worker pool from the Redis store the workers share',
            config.store.type,
            "'redis' (with store.url)",
          ),
        ],
        flags.configFile,
      );
    }
    url = config.store.url;
    monitor = await PoolMonitor.connect({ redis: { url, keyPrefix: config.store.keyPrefix }, queueName: runtimeConfigOf(sections).queueName });
    const status = await monitor.status();
    io.out.write(flags.json ? `${JSON.stringify(status)}\n` : formatPoolStatus(status));
    return EXIT_OK;
  } catch (e) {
    return reportPoolError(e, url, say);
  } finally {
    await monitor?.close();
  }
}

/** The table of `agentrx workers`: the queue depth line, then one row per live worker. */
export function formatPoolStatus(status: PoolStatus): string {
  const q = status.queue;
  const lines = [`queue ${q.name}: ${q.waiting} waiting, ${q.active} active, ${q.delayed} delayed, ${q.failed} failed`];
  if (status.workers.length === 0) {
    lines.push('no live workers (start one with: agentrx worker --config <file>)');
    return `${lines.join('\n')}\n`;
  }
  const rows = [
    ['WORKER', 'HOST:PID', 'SESSIONS', 'OLDEST LEASE', 'LAST HEARTBEAT'],
    ...status.workers.map((w) => [
      w.id,
      `${w.host}:${w.pid}`,
      `${w.sessions.length}/${w.concurrency}`,
      w.sessions.length > 0 ? formatAge(w.oldestLeaseAgeMs) : '-',
      `${formatAge(status.at - w.heartbeatAt)} ago`,
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) lines.push(r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
  return `${lines.join('\n')}\n`;
}

/** `950ms` → `0s`, `12_000` → `12s`, `303_000` → `5m 03s`, `7_500_000` → `2h 05m`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1_000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}
