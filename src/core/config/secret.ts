import { Transform } from '../util/class-transformer.js';
import { ValidateBy, type ValidationOptions } from '../util/class-validator.js';

/** What every rendering of a secret shows instead of its value. */
export const REDACTED = '[redacted]';

const inspectCustom = Symbol.for('nodejs.util.inspect.custom');

/**
 * A string that must not leak: an API key, an AWS secret, a bearer token. Only `reveal()` gives
 * the value; `String()`, template literals, `JSON.stringify` and `util.inspect` all give
 * `'[redacted]'`. The value lives in a private field, so it is not an own enumerable property
 * either (`Object.keys`, spread and `toEqual` never see it).
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The wrapped value. Call it at the last moment (building a header), never to log. */
  reveal(): string {
    return this.#value;
  }

  /** True when the wrapped value is the empty string. */
  get isEmpty(): boolean {
    return this.#value.length === 0;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspectCustom](): string {
    return REDACTED;
  }
}

/** True when `value` is a Secret. */
export function isSecret(value: unknown): value is Secret {
  return value instanceof Secret;
}

/**
 * class-transformer decorator: during `plainToInstance`, a string becomes a `Secret`; a Secret
 * is kept; anything else is left as it is so that `@IsSecret()` reports it. Reads the raw source
 * value (not class-transformer's copy), so a Secret passed in an already-built object survives.
 *
 * ```ts
 * class LocalProviderOptions {
 *   @SecretField() @IsSecret() apiKey!: Secret;
 *   @IsOptional() @SecretField() @IsSecret() orgToken?: Secret;
 * }
 * ```
 */
export function SecretField(): PropertyDecorator {
  return Transform(({ obj, key, value }) => {
    const raw: unknown = obj !== null && typeof obj === 'object' && key in obj ? (obj as Record<string, unknown>)[key] : value;
    if (raw instanceof Secret) return raw;
    if (typeof raw === 'string') return new Secret(raw);
    return raw;
  });
}

/** Name of the `@IsSecret()` constraint (the key in a ValidationError's `constraints`). */
export const IS_SECRET = 'isSecret';

/**
 * class-validator decorator: the value is a non-empty `Secret` (pair it with `@SecretField()`,
 * which does the wrapping). The message never contains the value.
 */
export function IsSecret(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_SECRET,
      validator: {
        validate: (value: unknown) => value instanceof Secret && !value.isEmpty,
        defaultMessage: () => '$property must be a non-empty secret string',
      },
    },
    options,
  );
}

/**
 * True for keys whose values are secrets: apiKey, secretAccessKey, sessionToken, token,
 * password, authorization, credentials, and any key containing `secret` or `key`
 * (case-insensitive). `maxTokens` is not one (only keys ending in `token` are).
 */
export function isSecretKey(key: string): boolean {
  return /secret|key|password|passwd|authorization|credential|token$/i.test(key);
}

/** `scheme://anything up to the last @`: the user-info part of a URL, however malformed. */
const SCHEME_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^@]*@/gi;
/** `user:anything@` at the start of a value with no scheme (`admin:s3cret@127.0.0.1:6379`). */
const BARE_USERINFO = /^[^\s:/@]+:[^@]*@/;

/**
 * `text` with the credentials of every URL-shaped part replaced by `[redacted]`, whatever the key
 * it came from: `https://user:pass@host/v1` → `https://[redacted]@host/v1`, and a scheme-less
 * `user:pass@host` → `[redacted]@host`. Works on malformed URLs too (those are the ones an error
 * shows), so it errs towards hiding more: everything from `://` to the last `@` goes.
 */
export function redactUrlCredentials(text: string): string {
  if (!text.includes('@')) return text;
  const schemed = text.replace(SCHEME_USERINFO, (_all, scheme: string) => `${scheme}${REDACTED}@`);
  return schemed === text && !text.includes('://') ? text.replace(BARE_USERINFO, `${REDACTED}@`) : schemed;
}

/**
 * Credentials with a recognisable form: provider API keys (`sk-…`, `sk_live_…`), GitHub, Slack,
 * GitLab and Google tokens, AWS access key ids, JWTs.
 */
const KNOWN_TOKENS =
  /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}|\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}|\bgh[pousr]_[A-Za-z0-9]{16,}|\bxox[abposr]-[A-Za-z0-9-]{10,}|\bglpat-[A-Za-z0-9_-]{16,}|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{30,}|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g;
/** An HTTP authorization value (`Bearer <token>`, `Basic <base64>`): the scheme stays, the credentials go. */
const AUTH_VALUE = /\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{6,}/gi;
/** A run of token characters long enough to be a key; `looksRandom` decides. */
const LONG_RUN = /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{24,}(?![A-Za-z0-9+/=_-])/g;

/**
 * True for a run of token characters that reads as random rather than as words: letters and
 * digits mixed, the character class (upper, lower, digit) changing often, few letters in word-like
 * runs (`Session`, `agent`), high entropy per character; or a long hex string. Paths, model ids
 * (`claude-sonnet-4-5-20250929`) and identifiers made of words are not.
 */
function looksRandom(run: string): boolean {
  const alnum = run.replace(/[^A-Za-z0-9]/g, '');
  if (!/[0-9]/.test(alnum) || !/[A-Za-z]/.test(alnum)) return false;
  if (alnum.length >= 32 && alnum.length === run.length && /^(?:[0-9a-f]+|[0-9A-F]+)$/.test(alnum)) return true;
  const cls = (c: string): number => (c >= '0' && c <= '9' ? 0 : c >= 'a' && c <= 'z' ? 1 : 2);
  let changes = 0;
  for (let i = 1; i < alnum.length; i++) if (cls(alnum[i]!) !== cls(alnum[i - 1]!)) changes++;
  const wordy = (alnum.match(/[A-Z]?[a-z]{4,}|[A-Z]{4,}/g) ?? []).reduce((n, w) => n + w.length, 0);
  if (changes < alnum.length * 0.3 || wordy > alnum.length * 0.4) return false;
  const counts = new Map<string, number>();
  for (const c of run) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / run.length) * Math.log2(n / run.length);
  return bits >= 3.5;
}

/**
 * `text` with what looks like a secret replaced by `[redacted]`, whatever field it was typed in:
 * URL credentials ({@link redactUrlCredentials}), well-known key formats (`sk-…`, `ghp_…`,
 * `AKIA…`, JWTs), the credentials of `Bearer …`/`Basic …`, and long random-looking tokens.
 */
export function redactSecretText(text: string): string {
  let out = redactUrlCredentials(text);
  out = out.replace(AUTH_VALUE, (_all, scheme: string, space: string) => `${scheme}${space}${REDACTED}`);
  out = out.replace(KNOWN_TOKENS, REDACTED);
  return out.replace(LONG_RUN, (run) => (looksRandom(run) ? REDACTED : run));
}

/**
 * A deep copy of `value` for showing (inspect, JSON): Secrets stay Secrets, and a string,
 * number or boolean under a secret-looking key becomes a placeholder Secret, so both render as
 * `[redacted]`; any other string has what looks like a secret redacted ({@link redactSecretText}).
 * Arrays, plain objects and class instances are copied (class instances keep their
 * prototype, so inspect still names the class); other built-ins (Date, Map…) are kept as they are.
 */
export function redactedView(value: unknown, key = '', seen: WeakMap<object, unknown> = new WeakMap()): unknown {
  if (value instanceof Secret) return value;
  if (value === null || typeof value !== 'object') {
    const shown = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint';
    if (shown && isSecretKey(key)) return new Secret(REDACTED);
    return typeof value === 'string' ? redactSecretText(value) : value;
  }
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    seen.set(value, copy);
    for (const v of value) copy.push(redactedView(v, key, seen));
    return copy;
  }
  if (isBuiltIn(value)) return value;
  const copy = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
  seen.set(value, copy);
  for (const [k, v] of Object.entries(value)) copy[k] = redactedView(v, k, seen);
  return copy;
}

function isBuiltIn(value: object): boolean {
  return (
    value instanceof Date ||
    value instanceof RegExp ||
    value instanceof Map ||
    value instanceof Set ||
    value instanceof WeakMap ||
    value instanceof WeakSet ||
    value instanceof Error ||
    value instanceof Promise ||
    ArrayBuffer.isView(value) ||
    value instanceof ArrayBuffer
  );
}
