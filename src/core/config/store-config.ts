import { plainToInstance, Type } from '../util/class-transformer.js';
import { IsInt, IsObject, IsOptional, IsString, Matches, Max, Min, validateSync, ValidateNested } from '../util/class-validator.js';
import { closest, collectIssues, configIssue, type ConfigIssue, knownKeys, lastKey } from './config-issue.js';
import { CoerceNumber } from './config-section.js';
import { isPlainObject } from './plain-object.js';
import { MAX_TIMEOUT_MS } from './timeout-ms.js';
import { CONFIG_VALIDATOR_OPTIONS } from './validator-options.js';

/** The engines agentrx ships: `memory` and `file` register from core, `redis` from the distributed module. */
export const STORE_TYPES = ['memory', 'file', 'redis'] as const;
/** A built-in store type; an engine a module registers may use any other kebab-case type. */
export type StoreType = (typeof STORE_TYPES)[number];

/**
 * When stored sessions are deleted (`store.retention`). Nothing is deleted unless `maxAgeDays` or
 * `maxSessions` is set; a session that is held (open in a live process) or `running` is never
 * deleted, whatever its age or rank.
 */
export class StoreRetentionConfig {
  /** Delete sessions whose last update (`updatedAt`) is older than this many days. */
  @IsOptional()
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(36_500)
  maxAgeDays?: number;

  /** Keep at most this many sessions: the oldest by `updatedAt` beyond it are deleted. */
  @IsOptional()
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxSessions?: number;

  /** How often the retention pass runs (the first runs at start). Default one hour. */
  @IsOptional()
  @CoerceNumber()
  @IsInt()
  @Min(1_000)
  @Max(MAX_TIMEOUT_MS)
  intervalMs?: number;
}

/**
 * The `store` section: which engine keeps the sessions and the tool ledger, and the fields every
 * engine shares. Each engine extends it with its own fields (`MemoryStoreConfig`,
 * `FileStoreConfig`, `RedisStoreConfig`…) and the section is validated by the class of the engine
 * `type` names, so a field of another engine is an error. `memory` (the library's default) lives
 * as long as the process; `file` survives a restart on one machine; `redis` is shared by every
 * process that points at the same server.
 */
export class StoreConfig {
  /** The engine: a built-in type (`STORE_TYPES`) or the type an engine's module registers with `bindStore`. Default `memory`. */
  @IsString()
  @Matches(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/, { context: { expected: `a kebab-case store type, e.g. ${STORE_TYPES.join(', ')}` } })
  type: string = 'memory';

  /** Deletion of old sessions by age and count; absent: sessions are kept forever. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => StoreRetentionConfig)
  retention?: StoreRetentionConfig;
}

/** What validation needs of a registered store engine: its type and the class of its section. */
export interface StoreSection {
  /** The `store.type` that selects the engine. */
  readonly type: string;
  /** The engine's section class (extends {@link StoreConfig}); validates the whole `store` section. */
  readonly options: new () => StoreConfig;
}

const PATH = 'store';

/**
 * Validates the raw `store` section (absent: `{}`) with the class of the engine its `type` names
 * among `stores`, appending each problem to `issues` at a path under `store`. An unregistered type
 * is one issue listing the registered ones; a field that belongs to another engine says which and
 * how to fix it. Without `stores` (a bare `validateConfig`, which knows no engine) only the shared
 * fields are checked and the engine's fields are kept as given, like a provider entry without a
 * section. Returns the instance to keep as `config.store` (also when there were issues).
 */
export function validateStoreSection(raw: unknown, stores: readonly StoreSection[] | undefined, issues: ConfigIssue[]): StoreConfig {
  const plain = raw ?? {};
  if (!isPlainObject(plain)) {
    issues.push(configIssue(PATH, PATH, 'must be an object', plain, 'an object'));
    return new StoreConfig();
  }
  const type = plain['type'] ?? 'memory';
  const section = stores?.find((s) => s.type === type);
  if (section === undefined) {
    const shared = new Set(knownKeys(StoreConfig));
    const base = validated(StoreConfig, Object.fromEntries(Object.entries(plain).filter(([k]) => shared.has(k))), issues);
    // A malformed type is reported as such; a well-formed one must name a registered engine.
    if (stores !== undefined && !issues.some((i) => i.path === `${PATH}.type`)) issues.push(unknownStoreIssue(type, stores));
    return Object.assign(base, Object.fromEntries(Object.entries(plain).filter(([k]) => !shared.has(k))));
  }
  const found: ConfigIssue[] = [];
  const instance = validated(section.options, plain, found);
  issues.push(...found.map((issue) => foreignFieldIssue(issue, section.type, stores ?? []) ?? issue));
  return instance;
}

function validated<C extends StoreConfig>(options: new () => C, plain: object, issues: ConfigIssue[]): C {
  const instance = plainToInstance(options, plain, { exposeDefaultValues: true });
  collectIssues(validateSync(instance, CONFIG_VALIDATOR_OPTIONS), PATH, issues);
  return instance;
}

/** The issue of a `store.type` no registered engine has, with the registered types and how to add one. */
export function unknownStoreIssue(type: unknown, stores: readonly StoreSection[]): ConfigIssue {
  const types = stores.map((s) => s.type);
  const guess = typeof type === 'string' ? closest(type, types) : undefined;
  const hint = guess === undefined ? '' : ` (did you mean "${guess}"?)`;
  return configIssue(
    `${PATH}.type`,
    'type',
    'no store engine is registered with this type',
    type,
    `a registered store type${hint}: ${types.join(', ') || '(none)'} (an engine registers its type with bindStore in a module passed to AgentRx.create; the redis engine is one of the default modules)`,
  );
}

/** An unknown top-level key that another engine declares: names that engine instead of "unknown key". */
function foreignFieldIssue(issue: ConfigIssue, type: string, stores: readonly StoreSection[]): ConfigIssue | undefined {
  const key = lastKey(issue.path);
  if (issue.message !== 'unknown key' || issue.path !== `${PATH}.${key}`) return undefined;
  const owner = stores.find((s) => s.type !== type && knownKeys(s.options).includes(key));
  if (owner === undefined) return undefined;
  return configIssue(
    issue.path,
    key,
    `is a field of store type '${owner.type}', not of '${type}'`,
    issue.value,
    `no ${key} with store type '${type}': remove it, or set store.type to '${owner.type}'`,
  );
}
