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
  type ValidationError,
} from '../util/class-validator.js';
import { AgentRxError } from '../errors.js';
import { IS_SECRET, isSecretKey, REDACTED, redactedView, redactSecretText, Secret } from './secret.js';

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

/**
 * The `invalid_config` error listing `issues`: one `- <path>: <what>; got <value>; expected <…>`
 * line per issue after a head naming the source file (if any); `details.issues` holds them.
 */
export function configError(issues: ConfigIssue[], source: string | undefined): AgentRxError {
  const head = `invalid configuration${inSource(source)} (${issues.length} issue${issues.length === 1 ? '' : 's'}):`;
  // Issues may come from anywhere (a section's own check): what looks like a secret goes, whatever the field.
  for (const i of issues) {
    i.message = redactSecretText(i.message);
    if (typeof i.value === 'string') i.value = redactSecretText(i.value);
  }
  const lines = issues.map((i) => `- ${i.path || '(root)'}: ${i.message}; got ${shownValues.get(i) ?? render(i.value)}; expected ${i.expected}`);
  return new AgentRxError('invalid_config', [head, ...lines].join('\n'), { ...(source ? { source } : {}), issues });
}

/** ` in <file>` for messages about a config file, '' for an object. */
export function inSource(source: string | undefined): string {
  return source === undefined ? '' : ` in ${source}`;
}

// ---------------------------------------------------------------------------------------------
// Issues from class-validator errors

/**
 * Appends one issue per failed property of `errors` (recursing into nested objects) at paths under
 * `prefix`. `extraKnown` are keys the validated class does not declare but that are allowed at
 * this level (root sections); unknown-key issues list them.
 */
export function collectIssues(errors: readonly ValidationError[], prefix: string, out: ConfigIssue[], extraKnown: string[] = []): void {
  for (const e of errors) {
    const path = joinPath(prefix, e.property);
    const constraints = e.constraints ?? {};
    const names = Object.keys(constraints);
    if (names.length === 0) {
      if (e.children && e.children.length > 0) collectIssues(e.children, path, out);
      continue;
    }
    const ctor = e.target?.constructor as (new () => object) | undefined;
    if (constraints[WHITELIST] !== undefined) {
      out.push(unknownKey(path, e.property, e.value, ctor ? [...knownKeys(ctor), ...extraKnown] : extraKnown));
      continue;
    }
    // The node itself is wrong (e.g. a string where an object belongs): its children are noise.
    out.push(configIssue(path, e.property, whatsWrong(e, names), e.value, ctor ? expectedOf(ctor, e.property, names) : names.join(', ')));
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

/**
 * One issue, made safe to show: a secret-looking key or a Secret value is `[redacted]`, and under
 * any key a URL loses its credentials (`https://[redacted]@host`) and what looks like a secret
 * (`sk-…`, `Bearer …`, a long random token: a key pasted into the wrong field) is `[redacted]`,
 * in the value and in the message.
 */
export function configIssue(path: string, key: string, message: string, value: unknown, expected: string): ConfigIssue {
  const secret = (isSecretKey(key) && value !== undefined) || value instanceof Secret;
  const hidden = typeof value === 'string' && value.length > 0 ? (secret ? REDACTED : redactSecretText(value)) : undefined;
  return shown(
    {
      path,
      message: redactSecretText(hidden !== undefined && hidden !== value ? message.split(value as string).join(hidden) : message),
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

/**
 * The issue of a `provider` that no registered provider plugin has: listed with the other
 * problems of the config (one `invalid_config`), with the known ids and the closest one.
 */
export function unknownProviderIssue(id: string, known: readonly string[]): ConfigIssue {
  const guess = closest(id, known);
  const hint = guess === undefined ? '' : ` (did you mean "${guess}"?)`;
  return configIssue(
    'provider',
    'provider',
    'no provider plugin has this id',
    id,
    `the id of a registered provider${hint}; known: ${known.join(', ') || '(none)'}`,
  );
}

/** class-validator messages start with the property name; the path already says it. */
function stripSubject(message: string, property: string): string {
  for (const prefix of [`${property} `, `each value in ${property} `]) {
    if (message.startsWith(prefix)) return (prefix.startsWith('each') ? 'each value ' : '') + message.slice(prefix.length);
  }
  return message;
}

/** The properties `ctor` declares validators for: the keys accepted at its level. */
export function knownKeys(ctor: new () => object): string[] {
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
// Safe rendering

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
  if (typeof value === 'string') return truncate(redactSecretText(value));
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
  if (typeof value === 'string') return truncate(JSON.stringify(redactSecretText(value)));
  const safe = safeValue(value);
  return typeof safe === 'string' ? safe : String(safe);
}

function truncate(s: string): string {
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS - 1)}…` : s;
}

// ---------------------------------------------------------------------------------------------
// Paths and spelling

/** `prefix.key`, or either one alone when the other is empty. */
export function joinPath(prefix: string, key: string | undefined): string {
  if (key === undefined || key === '') return prefix;
  return prefix === '' ? key : `${prefix}.${key}`;
}

/** The last segment of a dotted path. */
export function lastKey(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? path : path.slice(dot + 1);
}

/** The entry of `known` closest to `key` (a likely misspelling of it), or undefined when none is close. */
export function closest(key: string, known: readonly string[]): string | undefined {
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
