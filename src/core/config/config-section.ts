import { Transform } from '../util/class-transformer.js';
import { ValidateBy, buildMessage } from '../util/class-validator.js';
import type { AgentRxConfig } from './agentrx.config.js';
import type { ConfigIssue } from './config-issue.js';

/**
 * How a plugin contributes validated options without core importing the plugin (Nest's
 * `MODULE_OPTIONS_TOKEN` idea). The plugin exports one section; the composition root passes
 * every section to `loadConfig`/`validateConfig`, which validates the raw value at the
 * section's place in the config together with the core config (one error lists every issue),
 * and binds nothing itself: the caller binds each validated instance under `token` with
 * `toConstantValue`.
 *
 * ```ts
 * export const LocalProviderOptionsToken = Symbol('LocalProviderOptions');
 * export const localConfigSection: ConfigSection<LocalProviderOptions> = {
 *   key: 'local',
 *   options: LocalProviderOptions,
 *   token: LocalProviderOptionsToken,
 *   required: (config) => config.provider === 'local',
 * };
 * ```
 */
export interface ConfigSection<T extends object = object> {
  /**
   * Where the raw value lives: `providers.<key>` (scope `'providers'`, the default), or the
   * top-level key `<key>` (scope `'root'`, a top-level extension such as a consumer's
   * options). Also the key of the validated instance in `LoadedConfig.sections`; keys are
   * unique across all sections.
   */
  key: string;
  /**
   * The options class: class-validator decorators, defaults as property initializers, nested
   * classes with `@ValidateNested()` + `@Type()`, secrets with `@SecretField()` + `@IsSecret()`.
   * Unknown keys inside the section are reported, like in the core config.
   */
  options: new () => T;
  /** DI token under which the caller binds the validated instance. */
  token: symbol;
  /**
   * Whether the section must be validated even when its raw value is absent (then it is
   * validated as `{}`, so its required fields get reported). Called with the transformed core
   * config, which may itself be invalid. Without it, a section is validated only when present.
   */
  required?: (config: AgentRxConfig) => boolean;
  /** `'providers'` (default): the value is `providers.<key>`. `'root'`: the top-level `<key>`. */
  scope?: ConfigSectionScope;
  /**
   * What the section's valid value asks of the rest of the config (e.g. a mode that needs a
   * store engine): the issues, reported in the same list as every other one. Called only when
   * neither the section nor the core config has an issue of its own.
   */
  check?(value: T, config: AgentRxConfig): readonly ConfigIssue[];
}

/** Where a ConfigSection's raw value lives. */
export type ConfigSectionScope = 'providers' | 'root';

/** The dotted path of a section's raw value (`providers.local`, or `agui` for a root section). */
export function sectionPath(section: Pick<ConfigSection, 'key' | 'scope'>): string {
  return (section.scope ?? 'providers') === 'root' ? section.key : `providers.${section.key}`;
}

const NUMERIC = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * class-transformer decorator for number options: a numeric string (what `${VAR}` interpolation
 * produces) becomes a number; anything else is left as it is so the validators report the
 * original value. Never yields NaN.
 */
export function CoerceNumber(): PropertyDecorator {
  return Transform(({ value }) => (typeof value === 'string' && NUMERIC.test(value) ? Number(value) : value));
}

/**
 * class-transformer decorator for boolean options: the strings `'true'` and `'false'` (what
 * `${VAR}` interpolation produces) become booleans; anything else is left as it is so the
 * validators report it (unlike implicit conversion, `'false'` never becomes `true`).
 */
export function CoerceBoolean(): PropertyDecorator {
  return Transform(({ value }) => {
    if (typeof value !== 'string') return value;
    const v = value.trim().toLowerCase();
    return v === 'true' ? true : v === 'false' ? false : value;
  });
}

/** class-validator decorator: a plain object whose values are all strings (extra HTTP headers…). */
export function IsStringRecord(): PropertyDecorator {
  return ValidateBy({
    name: 'isStringRecord',
    validator: {
      validate: (value: unknown): boolean =>
        typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string'),
      defaultMessage: buildMessage((prefix) => `${prefix}$property must be an object whose values are strings`),
    },
  });
}
