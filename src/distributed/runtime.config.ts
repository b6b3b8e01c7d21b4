import { IsIn, IsInt, IsString, Matches, Max, Min } from '../core/util/class-validator.js';
import type { AgentRxConfig } from '../core/config/agentrx.config.js';
import { configIssue, type ConfigIssue } from '../core/config/config-issue.js';
import { CoerceNumber, type ConfigSection } from '../core/config/config-section.js';
import { MAX_TIMEOUT_MS } from '../core/config/timeout-ms.js';

/** `runtime.mode`: sessions run in this process, or on a pool of workers (`agentrx worker`) placed through BullMQ. */
export const RUNTIME_MODES = ['embedded', 'distributed'] as const;
export type RuntimeMode = (typeof RUNTIME_MODES)[number];

/**
 * Where sessions run. `embedded` (default): in the process that starts them. `distributed`:
 * `rx.submit()` and `agentrx serve` enqueue session requests on Redis (BullMQ) and any
 * `agentrx worker` runs them; needs `store.type: 'redis'` (the queue lives on the same server).
 */
export class RuntimeConfig {
  @IsIn(RUNTIME_MODES)
  mode: RuntimeMode = 'embedded';

  /** `distributed`: the BullMQ queue the session requests go to (workers of one deployment share it). Default `agentrx-sessions`. */
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { context: { expected: 'a queue name of 1 to 64 letters, digits, "_" or "-"' } })
  queueName: string = 'agentrx-sessions';

  /** `agentrx worker`: sessions one worker runs at once (`--concurrency` overrides it). Default 10. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(10_000)
  concurrency: number = 10;

  /** `agentrx worker`: a live session with no request and no input for this long is closed (ms). Default 10 minutes. */
  @CoerceNumber()
  @IsInt()
  @Min(1_000)
  @Max(MAX_TIMEOUT_MS)
  idleMs: number = 600_000;

  /**
   * Clients (`runtime.mode 'distributed'`): how long a session handle's lease lasts (ms; renewed
   * every third of it while the handle is referenced). Once no handle holds a session, its worker
   * closes it when idle after this long, instead of after `idleMs`. Default 30,000.
   */
  @CoerceNumber()
  @IsInt()
  @Min(100)
  @Max(MAX_TIMEOUT_MS)
  clientLeaseMs: number = 30_000;

  /** `agentrx worker`: how often (ms) a worker announces itself in Redis (`agentrx workers`); it expires after three missed beats. Default 5,000. */
  @CoerceNumber()
  @IsInt()
  @Min(100)
  @Max(MAX_TIMEOUT_MS)
  heartbeatMs: number = 5_000;

  /** `agentrx worker`: on SIGTERM, running requests may finish for this long (ms) before they are handed back. Default 30 s. */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(MAX_TIMEOUT_MS)
  graceMs: number = 30_000;
}

/** DI token of the validated `runtime` section (a {@link RuntimeConfig}; its defaults when the config has none). */
export const RuntimeConfigToken = Symbol('RuntimeConfig');

/**
 * The distributed module's top-level `runtime` section. `'distributed'` needs the Redis store:
 * the queue and the sessions live on that server.
 */
export const runtimeConfigSection: ConfigSection<RuntimeConfig> = {
  key: 'runtime',
  scope: 'root',
  options: RuntimeConfig,
  token: RuntimeConfigToken,
  check: (runtime: RuntimeConfig, config: AgentRxConfig): readonly ConfigIssue[] =>
    runtime.mode === 'distributed' && config.store?.type !== 'redis'
      ? [
          configIssue(
            'runtime.mode',
            'mode',
            "'distributed' needs store.type 'redis' (the queue and the sessions live on that server)",
            'distributed',
            "'embedded', or set store: { type: 'redis', url }",
          ),
        ]
      : [],
};

/** The validated `runtime` section of a loaded config's sections, or its defaults. */
export function runtimeConfigOf(sections: ReadonlyMap<string, object>): RuntimeConfig {
  const runtime = sections.get(runtimeConfigSection.key);
  return runtime instanceof RuntimeConfig ? runtime : new RuntimeConfig();
}
