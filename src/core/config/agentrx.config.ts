import '../util/reflect-metadata.js';
import { Type } from '../util/class-transformer.js';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from '../util/class-validator.js';
import type { InspectOptions, inspect as Inspect } from 'node:util';
import type { LogLevel } from '../logger.js';
import { CoerceBoolean, CoerceNumber } from './config-section.js';
import { redactedView } from './secret.js';
import { StoreConfig } from './store-config.js';
import { TimeoutMs } from './timeout-ms.js';

export { STORE_TYPES, StoreConfig, StoreRetentionConfig, type StoreType } from './store-config.js';
export { MAX_TIMEOUT_MS } from './timeout-ms.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const satisfies readonly LogLevel[];

const AGENT_NAME = /^[a-zA-Z0-9_-]+$/;

/** The agent the host runs (`provision` input, together with the bound tools). */
export class AgentConfig {
  /** 1–64 characters of `[a-zA-Z0-9_-]`. */
  @IsString()
  @Length(1, 64)
  @Matches(AGENT_NAME)
  name: string = 'agentrx';

  /** Host-specific model id; each provider has its own default. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  model?: string;

  @IsOptional()
  @IsString()
  systemPrompt?: string;
}

/** Deadlines and bounds of a run. Every duration is in milliseconds. */
export class LimitsConfig {
  /** Whole-run deadline. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  runTimeoutMs: number = 600_000;

  /** Longest silence allowed between two chunks of a stream. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  streamIdleTimeoutMs: number = 300_000;

  /** Per tool call; a tool that overruns gets an `is_error` result. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  toolTimeoutMs: number = 60_000;

  /** Reconnect attempts of a one-shot `run` after a stream drop (a live session keeps trying). */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(100)
  reconnectAttempts: number = 5;

  /** Base of the exponential, jittered reconnect backoff (doubles per attempt, capped at 30 s). */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  reconnectBaseMs: number = 250;

  /**
   * How many of the most recent provider event ids a session always remembers (it holds at most
   * twice as many), to drop re-delivered events and to find its place in the host's history after
   * a drop. Memory stays flat however long the session runs; raise it only if a host re-delivers
   * events from further back.
   */
  @CoerceNumber()
  @IsInt()
  @Min(100)
  @Max(1_000_000)
  dedupeWindow: number = 5_000;

  /** Turns per request, re-prompts included; past it the run fails with `max_turns_exceeded`. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(1000)
  maxTurns: number = 20;

  /** Tool calls of one turn that may run at once (results are still posted in call order). */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(64)
  toolConcurrency: number = 8;

  /** How many times a session re-prompts a host that stopped early before giving up. */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(20)
  maxReprompts: number = 2;
}

/** Built-in consumers, and the queue and time bounds of every consumer attached to a session. */
export class ConsumersConfig {
  /** Render the run on the terminal (stderr-safe renderer). */
  @CoerceBoolean()
  @IsBoolean()
  terminal: boolean = true;

  /** Write every event as one JSON line. */
  @CoerceBoolean()
  @IsBoolean()
  jsonl: boolean = false;

  /**
   * Bound of one consumer event hook. A hook that runs longer is reported on `consumerErrors$`
   * and the consumer's queue moves on to its next event.
   */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  handlerTimeoutMs: number = 5_000;

  /**
   * Bound of each consumer's per-session queue. A consumer whose backlog reaches it is reported
   * (`overflow`) and disabled for the rest of that session; the run and other consumers go on.
   */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  queueLimit: number = 10_000;

  /**
   * Per session: bound of each consumer's `start()`, of the drain of its queue at the session's
   * end (undelivered events are then dropped and reported), and of its `stop()`.
   */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  stopTimeoutMs: number = 5_000;
}

/**
 * Bounds of process lifecycle and shutdown steps, in milliseconds. Each is a positive integer no
 * larger than `MAX_TIMEOUT_MS`. A step that overruns is logged and the rest go on; none of them
 * fails a run.
 */
export class TimeoutsConfig {
  /** Bound of each tool handler's `start()` and of its `stop()` in the kernel's tools phase. */
  @TimeoutMs()
  toolsPhaseMs: number = 10_000;

  /** Bound of each provider's `start()` and of its `stop()` in the kernel's providers phase. */
  @TimeoutMs()
  providersPhaseMs: number = 10_000;

  /**
   * Bound of the final cleanup of `AgentRx.stop()`, after the phases have stopped (unbinding the
   * container, which runs every `@preDestroy` hook).
   */
  @TimeoutMs()
  cleanupMs: number = 10_000;

  /**
   * How long a cancelled or timed-out session waits for the host to take its interrupt (Claude
   * Managed Agents: `user.interrupt`) before it closes the connection anyway.
   */
  @TimeoutMs()
  interruptMs: number = 2_000;
}

/**
 * The whole agentrx configuration, as validated by `loadConfig`/`validateConfig`. Every field
 * has a default, so `{}` is a valid config; a provider section its plugin requires (the selected
 * provider's) is then validated from `{}`, with that section's own defaults. Unknown keys are
 * errors at every level, so a typo never passes silently.
 */
export class AgentRxConfig {
  /**
   * Which loop host runs the session: a built-in id (`PROVIDER_IDS`) or the kebab-case id of a
   * provider plugin the host app registered. An id no plugin has fails at `AgentRx.create`
   * with the list of known ids.
   */
  @IsString()
  @Matches(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/, { context: { expected: 'the kebab-case id of a registered provider, e.g. local' } })
  provider: string = 'local';

  @IsObject()
  @ValidateNested()
  @Type(() => AgentConfig)
  agent: AgentConfig = new AgentConfig();

  @IsObject()
  @ValidateNested()
  @Type(() => LimitsConfig)
  limits: LimitsConfig = new LimitsConfig();

  @IsObject()
  @ValidateNested()
  @Type(() => ConsumersConfig)
  consumers: ConsumersConfig = new ConsumersConfig();

  /**
   * Where sessions are kept. Validated apart, by the section class of the engine `store.type`
   * names (see `StoreConfig`), so after validation it is that class's instance.
   */
  @IsObject()
  store: StoreConfig = new StoreConfig();

  @IsObject()
  @ValidateNested()
  @Type(() => TimeoutsConfig)
  timeouts: TimeoutsConfig = new TimeoutsConfig();

  /** Keep raw provider events in `SessionResult.events`. */
  @CoerceBoolean()
  @IsBoolean()
  retainEvents: boolean = true;

  @IsIn(LOG_LEVELS)
  logLevel: LogLevel = 'warn';

  /**
   * ES module files (paths relative to the config file) that the `agentrx` command loads for
   * `run`, `tools`, `serve` and `worker`: each exports `tools`, `modules` and/or `consumers`
   * (arrays, as `AgentRx.create` takes them). The library itself ignores this key: in code, pass
   * them to `AgentRx.create`. Kept here so one config file serves every command.
   */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  modules?: string[];

  /**
   * Per-provider sections (`providers.local`, `providers['claude-managed-agents']`, …), each
   * validated by the ConfigSection its plugin contributes. After validation, an entry that has a
   * section holds the validated instance; any other entry stays raw, with secret-looking string
   * values wrapped in `Secret`.
   */
  @IsObject()
  providers: Record<string, object> = {};

  /**
   * `util.inspect` shows the config with every secret (a `Secret`, or a value under a
   * secret-looking key such as `apiKey` or `password`) as `[redacted]`.
   */
  [Symbol.for('nodejs.util.inspect.custom')](_depth: number, options: InspectOptions, inspect: typeof Inspect): string {
    return `AgentRxConfig ${inspect({ ...(redactedView(this) as object) }, options)}`;
  }

  /** `JSON.stringify` gives the config with every secret as `"[redacted]"`. */
  toJSON(): object {
    return { ...(redactedView(this) as object) };
  }
}
