/** Default upper bound of a computed backoff delay, in ms. */
export const DEFAULT_BACKOFF_MAX_MS = 30_000;

/** Inputs of `backoffDelay`. */
export interface BackoffOptions {
  /** Delay scale in ms: the first retry waits between `baseMs / 2` and `baseMs`. 0 gives no wait. */
  readonly baseMs: number;
  /** Upper bound of the exponential window. Default `DEFAULT_BACKOFF_MAX_MS` (30 s). */
  readonly maxMs?: number;
  /** Randomness in [0, 1) for the jitter; inject a constant in tests. Default `Math.random`. */
  readonly random?: () => number;
}

/**
 * The one backoff of agentrx, used by stream reconnects and by retried HTTP calls: exponential
 * with **equal jitter**. Retry `retry` (1-based: 1 is the first retry) waits
 * `cap / 2 + random() * cap / 2` ms, rounded, where `cap = min(maxMs, baseMs * 2^(retry - 1))`.
 *
 * Why equal jitter rather than full jitter (`random() * cap`): full jitter spreads clients best,
 * but it may draw a wait near 0 at every attempt, so a bounded number of attempts (a one-shot
 * run's `limits.reconnectAttempts`, a provider's `maxRetries`) can all be spent within a few
 * milliseconds of the failure and a short outage then fails the run. Equal jitter keeps a floor of
 * half the exponential schedule, so the attempts together always span at least half of it, and
 * still spreads each wait over half its window, so sessions dropped by the same host event do not
 * come back in lockstep.
 *
 * Pure; never throws. A `retry` below 1 counts as 1, `random()` is clamped to [0, 1], and a
 * zero, negative or NaN window gives 0.
 *
 * @param retry 1-based number of the retry about to happen.
 * @param opts base, cap and randomness.
 * @returns the delay in whole milliseconds, in `[round(cap / 2), cap]`.
 */
export function backoffDelay(retry: number, opts: BackoffOptions): number {
  const maxMs = opts.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
  const exponent = Math.max(0, Math.floor(Number.isNaN(retry) ? 1 : retry) - 1);
  const cap = Math.min(maxMs, opts.baseMs * 2 ** exponent);
  if (!(cap > 0)) return 0;
  const r = Math.min(Math.max((opts.random ?? Math.random)(), 0), 1);
  return Math.round(cap / 2 + (r * cap) / 2);
}
