import { abortReason, sleep } from '../util/async.js';
import { backoffDelay, DEFAULT_BACKOFF_MAX_MS } from '../util/backoff.js';

/**
 * Retry with the shared exponential, equal-jitter backoff (`backoffDelay` in `core/util/backoff`)
 * for calls that are safe to repeat only when they failed transiently (the Local model call, the
 * whole AgentCore invoke). A transient failure is HTTP 408, 429 or 5xx, or a transport
 * reset/refusal/timeout; any other 4xx is final. A `Retry-After` header (seconds or HTTP-date)
 * found on the error wins over the computed backoff.
 */

/** What the retry loop reports before each wait. */
export interface RetryAttemptInfo {
  /** 1-based number of the retry about to happen (1 = the second attempt). */
  readonly retry: number;
  readonly maxRetries: number;
  readonly delayMs: number;
  /** True when `delayMs` came from a Retry-After value rather than the backoff. */
  readonly fromRetryAfter: boolean;
  readonly error: unknown;
}

export interface RetryOptions {
  /** Retries after the first attempt (0 = no retry). */
  readonly maxRetries: number;
  /**
   * Backoff base: retry `n` (1-based) waits `backoffDelay(n, { baseMs, maxMs: maxDelayMs, random })`,
   * i.e. between half and all of `min(maxDelayMs, baseMs * 2^(n-1))`.
   */
  readonly baseMs: number;
  /** Upper bound of the computed backoff. Default 30 000 ms. */
  readonly maxDelayMs?: number;
  /** Upper bound of a honoured Retry-After value. Default 60 000 ms. */
  readonly maxRetryAfterMs?: number;
  /**
   * Aborts the wait and any further attempt promptly; the loop then rejects with the signal's
   * AgentRxError reason (`abortReason`: the session's `cancelled`/`timeout`, else `cancelled`).
   */
  readonly signal?: AbortSignal;
  /** Decides whether an error may be retried. Default `isTransientError`. */
  readonly isRetryable?: (error: unknown) => boolean;
  /** Called before each wait (logging). Must not throw; a throw is ignored. */
  readonly onRetry?: (info: RetryAttemptInfo) => void;
  /** Injectable wait (tests). Must reject promptly when `signal` aborts. Default `sleep` (core/util/async). */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injectable randomness in [0, 1) for the jitter (tests). Default `Math.random`. */
  readonly random?: () => number;
  /** Injectable clock for HTTP-date Retry-After values (tests). Default `Date.now`. */
  readonly now?: () => number;
}

const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ECONNABORTED', 'UND_ERR_SOCKET']);

/**
 * Runs `fn` and retries it while it fails with a retryable error, at most `maxRetries` times.
 * `fn` receives the 0-based attempt number. Rejects with the last error when it is not retryable
 * or the retries are used up, and with `abortReason(signal)` as soon as `signal` aborts (during a
 * wait, during an attempt or before one).
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const isRetryable = opts.isRetryable ?? isTransientError;
  const wait = opts.sleep ?? sleep;
  const now = opts.now ?? Date.now;
  const backoff = { baseMs: opts.baseMs, maxMs: opts.maxDelayMs ?? DEFAULT_BACKOFF_MAX_MS, random: opts.random };
  const maxRetryAfterMs = opts.maxRetryAfterMs ?? 60_000;
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(opts.signal);
    try {
      return await fn(attempt);
    } catch (error) {
      if (opts.signal?.aborted) throw abortReason(opts.signal);
      if (attempt >= opts.maxRetries || !isRetryable(error)) throw error;
      const after = retryAfterMs(error, now());
      const delayMs = after !== undefined ? Math.min(after, maxRetryAfterMs) : backoffDelay(attempt + 1, backoff);
      try {
        opts.onRetry?.({ retry: attempt + 1, maxRetries: opts.maxRetries, delayMs, fromRetryAfter: after !== undefined, error });
      } catch {
        // A logging hook must not change the outcome of the call.
      }
      try {
        await wait(delayMs, opts.signal);
      } catch (e) {
        if (opts.signal?.aborted) throw abortReason(opts.signal);
        throw e;
      }
    }
  }
}

/**
 * True for failures worth repeating: HTTP 408, 429 and 5xx; transport resets, refusals and
 * timeouts (`ECONNRESET`, `ECONNREFUSED`, `ETIMEDOUT`, `EPIPE`, `EAI_AGAIN`, `ECONNABORTED`,
 * "socket hang up"). An explicit boolean `details.transient` on an AgentRxError (or `transient` on
 * any error) decides first. Cancellations and every other 4xx are not transient. Looks through
 * `cause` chains.
 */
export function isTransientError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (typeof e !== 'object') return false;
    const o = e as Record<string, unknown>;
    const flag = explicitTransient(o);
    if (flag !== undefined) return flag;
    if (o['name'] === 'AbortError' || o['name'] === 'CanceledError' || o['code'] === 'ERR_CANCELED') return false;
    const status = statusOf(o);
    if (status !== undefined) return isTransientStatus(status);
    // A transport code may sit on the error itself or, for a wrapped AgentRxError, in its details.
    const code = o['code'];
    const detailCode = (o['details'] as Record<string, unknown> | undefined)?.['code'];
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
    if (typeof detailCode === 'string' && TRANSIENT_CODES.has(detailCode)) return true;
    const message = o['message'];
    if (typeof message === 'string' && /socket hang up/i.test(message)) return true;
    e = o['cause'];
  }
  return false;
}

/** HTTP statuses worth retrying: 408, 429 and every 5xx. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * The Retry-After delay carried by `source` in ms, or undefined. `source` may be the header value
 * itself (`"3"`, `"Wed, 21 Oct 2026 07:28:00 GMT"`), or an error whose `response.headers`,
 * `headers` or `details.retryAfter` carries it. An HTTP-date in the past gives 0.
 */
export function retryAfterMs(source: unknown, now: number = Date.now()): number | undefined {
  const value = typeof source === 'string' || typeof source === 'number' ? source : findRetryAfter(source);
  if (value === undefined) return undefined;
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

function explicitTransient(o: Record<string, unknown>): boolean | undefined {
  if (typeof o['transient'] === 'boolean') return o['transient'];
  const details = o['details'];
  if (details && typeof details === 'object' && typeof (details as Record<string, unknown>)['transient'] === 'boolean') {
    return (details as Record<string, unknown>)['transient'] as boolean;
  }
  return undefined;
}

function statusOf(o: Record<string, unknown>): number | undefined {
  const candidates = [
    o['status'],
    (o['response'] as Record<string, unknown> | undefined)?.['status'],
    (o['details'] as Record<string, unknown> | undefined)?.['status'],
    // AWS SDK v3 service errors.
    (o['$metadata'] as Record<string, unknown> | undefined)?.['httpStatusCode'],
  ];
  for (const c of candidates) if (typeof c === 'number' && Number.isInteger(c) && c >= 100 && c <= 599) return c;
  return undefined;
}

function findRetryAfter(source: unknown): string | number | undefined {
  if (!source || typeof source !== 'object') return undefined;
  const o = source as Record<string, unknown>;
  const details = o['details'] as Record<string, unknown> | undefined;
  const fromDetails = details?.['retryAfter'];
  if (typeof fromDetails === 'string' || typeof fromDetails === 'number') return fromDetails;
  for (const headers of [(o['response'] as Record<string, unknown> | undefined)?.['headers'], o['headers']]) {
    const v = headerValue(headers, 'retry-after');
    if (v !== undefined) return v;
  }
  return undefined;
}

function headerValue(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  const h = headers as { get?: unknown } & Record<string, unknown>;
  if (typeof h.get === 'function') {
    const v: unknown = (h.get as (n: string) => unknown).call(headers, name);
    if (typeof v === 'string') return v;
  }
  for (const [k, v] of Object.entries(h)) {
    if (k.toLowerCase() === name) {
      if (typeof v === 'string') return v;
      if (typeof v === 'number') return String(v);
      if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
    }
  }
  return undefined;
}
