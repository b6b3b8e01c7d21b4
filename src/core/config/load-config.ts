import '../util/reflect-metadata.js';
import { plainToInstance } from '../util/class-transformer.js';
import { validateSync } from '../util/class-validator.js';
import { AgentRxError } from '../errors.js';
import { AgentRxConfig } from './agentrx.config.js';
import { type ConfigSection, sectionPath } from './config-section.js';
import { collectIssues, configError, type ConfigIssue, configIssue, inSource, knownKeys, unknownProviderIssue } from './config-issue.js';
import { type ConfigEnv, interpolateEnv } from './interpolate-env.js';
import { describeType, isPlainObject } from './plain-object.js';
import { readConfigFile } from './read-config-file.js';
import { isSecretKey, Secret } from './secret.js';
import { type StoreSection, validateStoreSection } from './store-config.js';
import { CONFIG_VALIDATOR_OPTIONS } from './validator-options.js';

export type { ConfigEnv } from './interpolate-env.js';
export type { ConfigIssue } from './config-issue.js';

/** Options of `loadConfig`. */
export interface LoadConfigOptions {
  /** Plugin sections validated together with the core config. */
  sections?: readonly ConfigSection[];
  /** Source of `${VAR}` values; default `process.env`. */
  env?: ConfigEnv;
  /**
   * The ids of the provider plugins the host registered. When given, a `provider` that is none of
   * them is one more issue of the same `invalid_config` (`AgentRx.create` passes them).
   */
  providerIds?: readonly string[];
  /**
   * The registered store engines (`AgentRx.create` passes them): the `store` section is validated
   * by the class of the one its `type` names. Without them only the fields every engine shares
   * are checked.
   */
  stores?: readonly StoreSection[];
}

/** A validated configuration: the core config plus each validated section instance by key. */
export interface LoadedConfig {
  config: AgentRxConfig;
  sections: Map<string, object>;
}

/**
 * Loads, interpolates and validates the configuration.
 *
 * - `input` is a config object, the path of a JSON file, or undefined (all defaults).
 * - Every string value gets `${VAR}` / `${VAR:-default}` interpolation from `opts.env`
 *   (`$${` is a literal `${`); an unset variable without default is an issue at its path.
 * - The core config and every section are validated at once: every issue is listed in one
 *   AgentRxError `invalid_config` (message: one `- <path>: <what>; got <value>; expected <…>`
 *   line per issue; `details.issues`: ConfigIssue[]). Secrets never appear in it.
 *
 * Rejects with `invalid_config` also for a missing/unreadable file or invalid JSON (naming the
 * path and the parse position), and with `duplicate_plugin` when two sections share a key.
 */
export async function loadConfig(input: object | string | undefined, opts: LoadConfigOptions = {}): Promise<LoadedConfig> {
  if (typeof input === 'string') {
    const plain = await readConfigFile(input);
    return validate(plain, opts.sections ?? [], opts.env ?? process.env, input, opts.providerIds, opts.stores);
  }
  return validateConfig(input ?? {}, opts.sections ?? [], opts.env ?? process.env, opts.providerIds, opts.stores);
}

/**
 * The synchronous core of `loadConfig` for callers that hold an object: interpolates,
 * validates, and returns validated instances with defaults filled. Throws like `loadConfig`;
 * `providerIds` and `stores` as in {@link LoadConfigOptions}.
 */
export function validateConfig(
  plain: object,
  sections: readonly ConfigSection[] = [],
  env: ConfigEnv = process.env,
  providerIds?: readonly string[],
  stores?: readonly StoreSection[],
): LoadedConfig {
  return validate(plain, sections, env, undefined, providerIds, stores);
}

function validate(
  plain: object,
  sections: readonly ConfigSection[],
  env: ConfigEnv,
  source: string | undefined,
  providerIds: readonly string[] | undefined,
  stores: readonly StoreSection[] | undefined,
): LoadedConfig {
  if (!isPlainObject(plain)) {
    throw new AgentRxError('invalid_config', `invalid configuration${inSource(source)}: expected an object, got ${describeType(plain)}`, { source });
  }
  checkSections(sections);

  const issues: ConfigIssue[] = [];
  const raw = interpolateEnv(plain, '', env, issues) as Record<string, unknown>;
  const referenceIssues = issues.length;
  const unresolved = new Set(issues.map((i) => i.path));

  const rootKeys = new Set(sections.filter((s) => s.scope === 'root').map((s) => s.key));
  // The store section is validated apart, by its engine's class: the core class only declares it.
  const coreRaw = Object.fromEntries(Object.entries(raw).filter(([k]) => !rootKeys.has(k) && k !== 'store'));
  const config = plainToInstance(AgentRxConfig, coreRaw, { exposeDefaultValues: true });
  collectIssues(validateSync(config, CONFIG_VALIDATOR_OPTIONS), '', issues, [...rootKeys]);
  config.store = validateStoreSection(raw.store, stores, issues);
  // A malformed id is already reported as such; a well-formed one must name a registered plugin.
  if (providerIds !== undefined && !issues.some((i) => i.path === 'provider') && !providerIds.includes(config.provider)) {
    issues.push(unknownProviderIssue(config.provider, providerIds));
  }

  // A section's check of the rest of the config runs only over a core config with no issue.
  const coreIssues = issues.length;
  const providersRaw = isPlainObject(raw.providers) ? raw.providers : {};
  const validated = new Map<string, object>();
  for (const section of sections) {
    const path = sectionPath(section);
    const value = section.scope === 'root' ? raw[section.key] : providersRaw[section.key];
    if (value === undefined && !(section.required?.(config) ?? false)) continue;
    if (value !== undefined && !isPlainObject(value)) {
      issues.push(configIssue(path, section.key, 'must be an object', value, 'an object'));
      continue;
    }
    const instance = plainToInstance(section.options, value ?? {}, { exposeDefaultValues: true });
    const before = issues.length;
    collectIssues(validateSync(instance, CONFIG_VALIDATOR_OPTIONS), path, issues);
    validated.set(section.key, instance);
    if (section.check !== undefined && coreIssues === 0 && issues.length === before) issues.push(...section.check(instance, config));
  }
  for (const [key, value] of Object.entries(providersRaw)) {
    if (!isPlainObject(value) && !sections.some((s) => s.scope !== 'root' && s.key === key)) {
      issues.push(configIssue(`providers.${key}`, key, 'must be an object', value, 'an object'));
    }
  }

  // A reference that could not be resolved is reported once, as such, not again by a validator.
  const reported = issues.filter((i, n) => n < referenceIssues || !unresolved.has(i.path));
  if (reported.length > 0) throw configError(reported, source);

  config.providers = Object.fromEntries(
    Object.entries(providersRaw).map(([key, value]) => {
      const own = sections.find((s) => s.scope !== 'root' && s.key === key);
      return [key, own ? (validated.get(key) as object) : (wrapSecrets(value, key) as object)];
    }),
  );
  return { config, sections: validated };
}

function checkSections(sections: readonly ConfigSection[]): void {
  const coreKeys = new Set(knownKeys(AgentRxConfig));
  const seen = new Set<string>();
  for (const s of sections) {
    if (seen.has(s.key)) throw new AgentRxError('duplicate_plugin', `two config sections use the key "${s.key}"`, { key: s.key });
    if (s.scope === 'root' && coreKeys.has(s.key)) {
      throw new AgentRxError('duplicate_plugin', `config section "${s.key}" collides with a core config key`, { key: s.key });
    }
    seen.add(s.key);
  }
}

/** A copy of `value` in which every secret-looking string field is wrapped in a Secret. */
function wrapSecrets(value: unknown, key: string): unknown {
  if (typeof value === 'string' && isSecretKey(key)) return new Secret(value);
  if (Array.isArray(value)) return value.map((v) => wrapSecrets(v, key));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wrapSecrets(v, k)]));
  return value;
}
