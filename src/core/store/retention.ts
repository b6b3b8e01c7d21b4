import type { StoreRetentionConfig } from '../config/store-config.js';
import type { Logger } from '../logger.js';

/** What `prune` deletes. Without `maxAgeMs` and `maxSessions` it deletes nothing. */
export interface PruneOptions {
  /** Delete sessions whose `updatedAt` is older than `now - maxAgeMs`. */
  readonly maxAgeMs?: number;
  /** Keep this many sessions, newest `updatedAt` first; delete the older ones. */
  readonly maxSessions?: number;
  /** Epoch ms taken as now (tests). Default `Date.now()`. */
  readonly now?: number;
}

/**
 * An engine that can delete old sessions. `prune` never deletes a session that is held (open in
 * a live process) or whose status is `running`; such a session still counts towards
 * `maxSessions`. Resolves with the ids it deleted.
 */
export interface PrunableSessionStore {
  prune(options: PruneOptions): Promise<string[]>;
}

/** Retention as `startRetention` takes it. */
export interface RetentionOptions {
  readonly maxAgeMs?: number;
  readonly maxSessions?: number;
  /** Between two passes. Default one hour. */
  readonly intervalMs?: number;
}

/** One hour: the default between two retention passes. */
export const DEFAULT_RETENTION_INTERVAL_MS = 3_600_000;

/**
 * The ids to delete among `sessions`, before the held/running check: those ranked past
 * `maxSessions` (newest `updatedAt` first) and those older than `maxAgeMs`. Oldest first.
 */
export function selectForPrune(sessions: readonly { sessionId: string; updatedAt: number }[], options: PruneOptions): string[] {
  const now = options.now ?? Date.now();
  const ranked = [...sessions].sort((a, b) => b.updatedAt - a.updatedAt);
  return ranked
    .filter(
      (s, i) => (options.maxSessions !== undefined && i >= options.maxSessions) || (options.maxAgeMs !== undefined && s.updatedAt < now - options.maxAgeMs),
    )
    .reverse()
    .map((s) => s.sessionId);
}

/** `store.retention` (days) as `startRetention` options (ms); undefined when it deletes nothing. */
export function retentionFromConfig(config: StoreRetentionConfig | undefined): RetentionOptions | undefined {
  if (!config || (config.maxAgeDays === undefined && config.maxSessions === undefined)) return undefined;
  return {
    maxAgeMs: config.maxAgeDays === undefined ? undefined : config.maxAgeDays * 86_400_000,
    maxSessions: config.maxSessions,
    intervalMs: config.intervalMs,
  };
}

/**
 * Runs `store.prune` now and then every `intervalMs` (an unref'd timer: it never keeps the
 * process alive), one pass at a time. A failed pass is logged as a warning and the next one
 * runs as planned; deletions are logged at info. The caller owns the handle: `stop()` clears the
 * timer (a pass in progress finishes). Options that delete nothing start no timer.
 */
export function startRetention(store: PrunableSessionStore, options: RetentionOptions | undefined, logger: Logger): { stop(): void } {
  if (!options || (options.maxAgeMs === undefined && options.maxSessions === undefined)) return { stop: () => undefined };
  let running = false;
  let stopped = false;
  const pass = (): void => {
    if (running || stopped) return;
    running = true;
    store
      .prune({ maxAgeMs: options.maxAgeMs, maxSessions: options.maxSessions })
      .then(
        (deleted) => {
          if (deleted.length > 0) logger.info(`session store retention deleted ${deleted.length} session(s)`, { sessionIds: deleted });
        },
        (e: unknown) => logger.warn(`session store retention failed: ${e instanceof Error ? e.message : String(e)}`),
      )
      .finally(() => {
        running = false;
      });
  };
  const timer = setInterval(pass, options.intervalMs ?? DEFAULT_RETENTION_INTERVAL_MS);
  timer.unref();
  pass();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
