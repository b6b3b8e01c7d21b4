import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import { plainToInstance } from 'class-transformer';
import {
  getMetadataStorage,
  IS_ARRAY,
  IS_BOOLEAN,
  IS_ENUM,
  IS_IN,
  IS_INT,
  IS_LENGTH,
  IS_NOT_EMPTY,
  IS_NUMBER,
  IS_OBJECT,
  IS_POSITIVE,
  IS_STRING,
  IS_URL,
  MATCHES,
  MAX,
  MAX_LENGTH,
  MIN,
  MIN_LENGTH,
  validateSync,
  type ValidationError,
  type ValidatorOptions,
} from 'class-validator';
import { AgentRxError } from '../errors.js';
import { AgentRxConfig } from './agentrx.config.js';
import { type ConfigSection, sectionPath } from './config-section.js';
import { IS_SECRET, isSecretKey, REDACTED, redactedView, Secret } from './secret.js';

/** Environment used for `${VAR}` interpolation. */
export type ConfigEnv = Readonly<Record<string, string | undefined>>;

/** Options of `loadConfig`. */
export interface LoadConfigOptions {
  /** Plugin sections validated together with the core config. */
  sections?: readonly ConfigSection[];
  /** Source of `${VAR}` values; default `process.env`. */
  env?: ConfigEnv;
}

/** A validated configuration: the core config plus each validated section instance by key. */
export interface LoadedConfig {
  config: AgentRxConfig;
  sections: Map<string, object>;
}

/**
 * One problem found in a configuration. Secret-free: the value of a secret-looking field is
 * `'[redacted]'`, long values are truncated, objects are rendered as (redacted) JSON text.
 */
export interface ConfigIssue {
  /** Dotted path, e.g. `limits.maxTurns` or `providers.local.baseUrl`. */
  path: string;
  /** What is wrong. */
  message: string;
  /** What was found, made safe to show. */
  value: unknown;
  /** What would be accepted. */
  expected: string;
}

const MAX_VALUE_CHARS = 60;

const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  validationError: { target: true, value: true },
};

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
    return validate(plain, opts.sections ?? [], opts.env ?? process.env, input);
  }
  return validateConfig(input ?? {}, opts.sections ?? [], opts.env ?? process.env);
}

/**
 * The synchronous core of `loadConfig` for callers that hold an object: interpolates,
 * validates, and returns validated instances with defaults filled. Throws like `loadConfig`.
 */
export function validateConfig(
  plain: object,
  sections: readonly ConfigSection[] = [],
  env: ConfigEnv = process.env,
): LoadedConfig {
  return validate(plain, sections, env, undefined);
}

function validate(plain: object, sections: readonly ConfigSection[], env: ConfigEnv, source: string | undefined): LoadedConfig {
  if (!isPlainObject(plain)) {
    throw new AgentRxError('invalid_config', `invalid configuration${from(source)}: expected an object, got ${describeType(plain)}`, { source });
  }
  checkSections(sections);

  const issues: ConfigIssue[] = [];
  const raw = interpolate(plain, '', env, issues) as Record<string, unknown>;
  const referenceIssues = issues.length;
  const unresolved = new Set(issues.map((i) => i.path));

  const rootKeys = new Set(sections.filter((s) => s.scope === 'root').map((s) => s.key));
  const coreRaw = Object.fromEntries(Object.entries(raw).filter(([k]) => !rootKeys.has(k)));
  const config = plainToInstance(AgentRxConfig, coreRaw, { exposeDefaultValues: true });
  collect(validateSync(config, VALIDATOR_OPTIONS), '', issues, [...rootKeys]);

  const providersRaw = isPlainObject(raw.providers) ? raw.providers : {};
  const validated = new Map<string, object>();
  for (const section of sections) {
    const path = sectionPath(section);
    const value = section.scope === 'root' ? raw[section.key] : providersRaw[section.key];
    if (value === undefined && !(section.required?.(config) ?? false)) continue;
    if (value !== undefined && !isPlainObject(value)) {
      issues.push(issue(path, section.key, 'must be an object', value, 'an object'));
      continue;
    }
    const instance = plainToInstance(section.options, value ?? {}, { exposeDefaultValues: true });
    collect(validateSync(instance, VALIDATOR_OPTIONS), path, issues);
    validated.set(section.key, instance);
  }
  for (const [key, value] of Object.entries(providersRaw)) {
    if (!isPlainObject(value) && !sections.some((s) => s.scope !== 'root' && s.key === key)) {
      issues.push(issue(`providers.${key}`, key, 'must be an object', value, 'an object'));
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

function configError(issues: ConfigIssue[], source: string | undefined): AgentRxError {
  const head = `invalid configuration${from(source)} (${issues.length} issue${issues.length === 1 ? '' : 's'}):`;
  const lines = issues.map((i) => `- ${i.path || '(root)'}: ${i.message}; got ${shownValues.get(i) ?? render(i.value)}; expected ${i.expected}`);
  return new AgentRxError('invalid_config', [head, ...lines].join('\n'), { ...(source ? { source } : {}), issues });
}

function from(source: string | undefined): string {
  return source === undefined ? '' : ` in ${source}`;
}

// ---------------------------------------------------------------------------------------------
// Issues from class-validator errors

function collect(errors: readonly ValidationError[], prefix: string, out: ConfigIssue[], extraKnown: string[] = []): void {
  for (const e of errors) {
    const path = join(prefix, e.property);
    const constraints = e.constraints ?? {};
    const names = Object.keys(constraints);
    if (names.length === 0) {
      if (e.children && e.children.length > 0) collect(e.children, path, out);
      continue;
    }
    const ctor = e.target?.constructor as (new () => object) | undefined;
    if (constraints[WHITELIST] !== undefined) {
      out.push(unknownKey(path, e.property, e.value, ctor ? [...knownKeys(ctor), ...extraKnown] : extraKnown));
      continue;
    }
    // The node itself is wrong (e.g. a string where an object belongs): its children are noise.
    out.push(issue(path, e.property, whatsWrong(e, names), e.value, ctor ? expectedOf(ctor, e.property, names) : names.join(', ')));
  }
}

const WHITELIST = 'whitelistValidation';
const NESTED = 'nestedValidation';
const TYPE_CONSTRAINTS = new Set<string>([IS_STRING, IS_INT, IS_NUMBER, IS_BOOLEAN, IS_OBJECT, IS_ARRAY, IS_SECRET, NESTED]);

/**
 * A missing value is "required"; a value of the wrong type reports only the type (not "must not
 * be less than 1" for a string); otherwise every failed constraint, without the property name.
 */
function whatsWrong(e: ValidationError, names: string[]): string {
  if (e.value === undefined) return 'is required';
  const typeFailures = names.filter((n) => TYPE_CONSTRAINTS.has(n));
  const chosen = typeFailures.length > 0 ? typeFailures : names;
  const messages = chosen.map((n) => (n === NESTED ? 'must be an object' : stripSubject(e.constraints?.[n] ?? n, e.property)));
  return [...new Set(messages)].join(' and ');
}

function issue(path: string, key: string, message: string, value: unknown, expected: string): ConfigIssue {
  const secret = (isSecretKey(key) && value !== undefined) || value instanceof Secret;
  return shown(
    {
      path,
      message: secret && typeof value === 'string' && value.length > 0 ? message.split(value).join(REDACTED) : message,
      value: secret ? REDACTED : safeValue(value),
      expected,
    },
    secret ? REDACTED : render(value),
  );
}

function unknownKey(path: string, key: string, value: unknown, known: string[]): ConfigIssue {
  const guess = closest(key, known);
  const hint = guess === undefined ? '' : ` (did you mean "${guess}"?)`;
  // An unknown key may be a misspelt secret field (`apiKye`, `pasword`): its strings are shown
  // only when it is clearly a misspelling of a known, non-secret key (`provdier`).
  const revealable = guess !== undefined && !isSecretKey(guess) && !isSecretKey(key);
  const safe = revealable ? redactedView(value, key) : redactStrings(value);
  return shown(
    {
      path,
      message: 'unknown key',
      value: safeValue(safe),
      expected: known.length > 0 ? `one of the known keys${hint}: ${known.join(', ')}` : 'no keys here',
    },
    render(safe),
  );
}

/** class-validator messages start with the property name; the path already says it. */
function stripSubject(message: string, property: string): string {
  for (const prefix of [`${property} `, `each value in ${property} `]) {
    if (message.startsWith(prefix)) return (prefix.startsWith('each') ? 'each value ' : '') + message.slice(prefix.length);
  }
  return message;
}

function knownKeys(ctor: new () => object): string[] {
  const metas = getMetadataStorage().getTargetValidationMetadatas(ctor, '', false, false);
  return [...new Set(metas.map((m) => m.propertyName))];
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  [IS_STRING]: 'a string',
  [IS_INT]: 'an integer',
  [IS_NUMBER]: 'a number',
  [IS_BOOLEAN]: 'true or false',
  [IS_OBJECT]: 'an object',
  [IS_ARRAY]: 'an array',
  [IS_URL]: 'a URL',
  [IS_SECRET]: 'a non-empty secret string',
  [NESTED]: 'an object',
};

/**
 * What the property accepts, described from all of its class-validator constraints (not only
 * the failed ones): `an integer from 1 to 1000`. A decorator's `context.expected` text wins,
 * which is how a section describes a custom validator.
 */
function expectedOf(ctor: new () => object, property: string, failed: string[]): string {
  const metas = getMetadataStorage()
    .getTargetValidationMetadatas(ctor, '', false, false)
    .filter((m) => m.propertyName === property);
  const given = metas.map((m) => (m.context as { expected?: unknown } | undefined)?.expected).find((x) => typeof x === 'string');
  if (typeof given === 'string') return given;

  const byName = new Map<string, unknown[]>();
  for (const m of metas) byName.set(m.name ?? m.type, m.constraints ?? []);
  const parts: string[] = [];
  for (const [name, c] of byName) {
    const word = TYPE_WORDS[name];
    if (word !== undefined) parts.unshift(word);
    else if (name === MIN && byName.has(MAX)) parts.push(`from ${String(c[0])} to ${String(byName.get(MAX)?.[0])}`);
    else if (name === MIN) parts.push(`≥ ${String(c[0])}`);
    else if (name === MAX && !byName.has(MIN)) parts.push(`≤ ${String(c[0])}`);
    else if (name === IS_IN) parts.push(`one of ${(c[0] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`);
    else if (name === IS_ENUM) parts.push(`one of ${(c[1] as unknown[] | undefined)?.map((v) => JSON.stringify(v)).join(', ') ?? 'the enum values'}`);
    else if (name === IS_LENGTH) parts.push(c[1] === undefined ? `of at least ${String(c[0])} characters` : `of ${String(c[0])}–${String(c[1])} characters`);
    else if (name === MIN_LENGTH) parts.push(`of at least ${String(c[0])} characters`);
    else if (name === MAX_LENGTH) parts.push(`of at most ${String(c[0])} characters`);
    else if (name === MATCHES) parts.push(`matching ${String(c[0])}`);
    else if (name === IS_NOT_EMPTY) parts.push('(non-empty)');
    else if (name === IS_POSITIVE) parts.push('> 0');
  }
  // Type word first, then size, then pattern: "a string of 1–64 characters matching /…/".
  const rank = (p: string): number => (p.startsWith('of ') ? 1 : p.startsWith('matching ') ? 2 : p.startsWith('(') ? 3 : 0);
  const ordered = [...new Set(parts)].map((p, n) => ({ p, n })).sort((a, b) => rank(a.p) - rank(b.p) || a.n - b.n);
  if (ordered.length > 0) return ordered.map(({ p }) => p).join(' ');
  return `a value that passes ${failed.join(', ')}`;
}

// ---------------------------------------------------------------------------------------------
// `${VAR}` interpolation

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

function interpolate(value: unknown, path: string, env: ConfigEnv, issues: ConfigIssue[]): unknown {
  if (typeof value === 'string') return interpolateString(value, path, env, issues);
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, join(path, String(i)), env, issues));
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, join(path, k), env, issues)]));
  }
  return value;
}

function interpolateString(text: string, path: string, env: ConfigEnv, issues: ConfigIssue[]): string {
  if (!text.includes('${')) return text;
  const key = lastKey(path);
  let out = '';
  let i = 0;
  while (i < text.length) {
    const start = text.indexOf('${', i);
    if (start < 0) break;
    if (start > 0 && text[start - 1] === '$') {
      out += text.slice(i, start - 1) + '${';
      i = start + 2;
      continue;
    }
    out += text.slice(i, start);
    const end = text.indexOf('}', start + 2);
    if (end < 0) {
      issues.push(issue(path, key, 'unterminated ${ reference', text, 'a reference like ${NAME} or ${NAME:-default}'));
      return text;
    }
    const match = REFERENCE.exec(text.slice(start + 2, end));
    if (!match) {
      issues.push(issue(path, key, 'malformed ${…} reference', text, 'a reference like ${NAME} or ${NAME:-default}'));
      return text;
    }
    const [, name, fallback] = match as unknown as [string, string, string | undefined];
    const set = env[name];
    if (fallback !== undefined && (set === undefined || set === '')) out += fallback;
    else if (set !== undefined) out += set;
    else {
      issues.push(issue(path, key, `environment variable ${name} is not set`, text, `${name} to be set, or a default as in \${${name}:-value}`));
      return text;
    }
    i = end + 1;
  }
  return out + text.slice(i);
}

// ---------------------------------------------------------------------------------------------
// Secrets and safe rendering

/** A copy of `value` in which every secret-looking string field is wrapped in a Secret. */
function wrapSecrets(value: unknown, key: string): unknown {
  if (typeof value === 'string' && isSecretKey(key)) return new Secret(value);
  if (Array.isArray(value)) return value.map((v) => wrapSecrets(v, key));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wrapSecrets(v, k)]));
  return value;
}

/** A copy of `value` with every string (and Secret) replaced by '[redacted]'. */
function redactStrings(value: unknown): unknown {
  if (typeof value === 'string' || value instanceof Secret) return REDACTED;
  if (Array.isArray(value)) return value.map(redactStrings);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactStrings(v)]));
  }
  return value;
}

function safeValue(value: unknown): unknown {
  if (value === undefined || value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return truncate(value);
  if (value instanceof Secret) return REDACTED;
  if (typeof value === 'object') {
    try {
      return truncate(JSON.stringify(redactedView(value)));
    } catch {
      return '[unserializable]';
    }
  }
  return `[${typeof value}]`;
}

/** How each issue's value is shown in the error message (kept apart from `details`). */
const shownValues = new WeakMap<ConfigIssue, string>();

function shown(issue: ConfigIssue, text: string): ConfigIssue {
  shownValues.set(issue, text);
  return issue;
}

/** The value as the message shows it: JSON-like, redacted, truncated. */
function render(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value instanceof Secret) return REDACTED;
  if (value === REDACTED) return REDACTED;
  if (typeof value === 'string') return truncate(JSON.stringify(value));
  const safe = safeValue(value);
  return typeof safe === 'string' ? safe : String(safe);
}

function truncate(s: string): string {
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS - 1)}…` : s;
}

// ---------------------------------------------------------------------------------------------
// Files

async function readConfigFile(path: string): Promise<object> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const why = code === 'ENOENT' ? 'not found' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${String(code ?? e)})`;
    throw new AgentRxError('invalid_config', `config file ${path} ${why}`, { path, code }, { cause: e });
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // V8's message quotes the source text, which may hold a secret: locate the error ourselves
    // and never attach the SyntaxError as cause.
    const { position, reason } = locateJsonError(text);
    const { line, column } = lineColumn(text, position);
    throw new AgentRxError(
      'invalid_config',
      `config file ${path} is not valid JSON: ${reason} at position ${position} (line ${line} column ${column})`,
      { path, position, line, column },
    );
  }
  if (!isPlainObject(parsed)) {
    throw new AgentRxError('invalid_config', `config file ${path} must hold a JSON object, got ${describeType(parsed)}`, { path });
  }
  return parsed;
}

class JsonSyntaxError {
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {}
}

/** Position and reason of the first JSON syntax error in `text` (RFC 8259 grammar). */
function locateJsonError(text: string): { position: number; reason: string } {
  let i = 0;
  const fail = (reason: string): never => {
    throw new JsonSyntaxError(i, i >= text.length ? 'unexpected end of input' : reason);
  };
  const unexpected = (): never => fail(`unexpected ${JSON.stringify(text[i])}`);
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const string = (): void => {
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text[i] as string;
      if (c === '"') return void i++;
      if (c === '\\') {
        const e = text[i + 1];
        if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else fail('bad escape in string');
        continue;
      }
      if (c.charCodeAt(0) < 0x20) fail('control character in string');
      i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a property name in double quotes, found ${JSON.stringify(text[i])}`);
        string();
        ws();
        if (text[i] !== ':') fail(`expected ':' after a property name, found ${JSON.stringify(text[i])}`);
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail(`expected ',' or '}' after a property value, found ${JSON.stringify(text[i])}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail(`expected ',' or ']' after an array element, found ${JSON.stringify(text[i])}`);
      }
    }
    if (c === '"') return string();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) return void (i += word.length);
    }
    const num = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
    num.lastIndex = i;
    if (c !== undefined && /[-0-9]/.test(c) && num.test(text)) return void (i = num.lastIndex);
    unexpected();
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${JSON.stringify(text[i])} after the JSON value`);
  } catch (e) {
    if (e instanceof JsonSyntaxError) return { position: e.position, reason: e.reason };
    throw e;
  }
  return { position: 0, reason: 'invalid JSON' };
}

function lineColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  return { line, column: position - before.lastIndexOf('\n') };
}

// ---------------------------------------------------------------------------------------------
// Helpers

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  // Realm-independent: an object literal from another realm (vm, worker, structuredClone) has
  // that realm's Object.prototype, whose own prototype is null.
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || (Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(value) === '[object Object]');
}

function describeType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

function join(prefix: string, key: string | undefined): string {
  if (key === undefined || key === '') return prefix;
  return prefix === '' ? key : `${prefix}.${key}`;
}

function lastKey(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? path : path.slice(dot + 1);
}

function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = k.toLowerCase() === key.toLowerCase() ? 0 : levenshtein(key, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length] as number;
}
