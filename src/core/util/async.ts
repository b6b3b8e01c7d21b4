import { setTimeout as timerDelay } from 'node:timers/promises';
import { AgentRxError } from '../errors.js';

/**
 * An unbounded FIFO whose `take` waits for the first item matching a predicate. Items that do not
 * match stay queued in order. `take` rejects with the signal's reason when the signal aborts.
 */
export class AsyncQueue<T> {
  private readonly items: T[] = [];
  private waiter: { match: (v: T) => boolean; resolve: (v: T) => void } | undefined;

  push(item: T): void {
    if (this.waiter?.match(item)) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve(item);
      return;
    }
    this.items.push(item);
  }

  /** Puts an item back at the head. */
  unshift(item: T): void {
    this.items.unshift(item);
  }

  get length(): number {
    return this.items.length;
  }

  /** Whether an item matching `match` is queued. */
  has(match: (v: T) => boolean): boolean {
    return this.items.some(match);
  }

  /** Removes and returns the first matching item, if any, without waiting. */
  tryTake(match: (v: T) => boolean): T | undefined {
    const i = this.items.findIndex(match);
    return i >= 0 ? this.items.splice(i, 1)[0] : undefined;
  }

  take(signal: AbortSignal, match: (v: T) => boolean = () => true): Promise<T> {
    const i = this.items.findIndex(match);
    if (i >= 0) return Promise.resolve(this.items.splice(i, 1)[0]!);
    if (signal.aborted) return Promise.reject(abortReason(signal));
    if (this.waiter) return Promise.reject(new Error('AsyncQueue supports one waiter at a time'));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiter = undefined;
        reject(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiter = {
        match,
        resolve: (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
      };
    });
  }
}

/**
 * The error to reject with once `signal` has aborted: its reason when that is an AgentRxError (the
 * session aborts with `cancelled` or `timeout`, and callers rely on that very error coming out);
 * a `timeout` AgentRxError for the TimeoutError of `AbortSignal.timeout()`; otherwise a generic
 * `cancelled` AgentRxError whose `cause` is the reason.
 */
export function abortReason(signal: AbortSignal): AgentRxError {
  const r: unknown = signal.reason;
  if (r instanceof AgentRxError) return r;
  // Checked by name: the DOMException comes from Node's realm, not necessarily the caller's.
  if (typeof r === 'object' && r !== null && (r as { name?: unknown }).name === 'TimeoutError') {
    return new AgentRxError('timeout', 'the operation timed out', undefined, { cause: r });
  }
  return new AgentRxError('cancelled', 'the operation was cancelled', undefined, r === undefined ? undefined : { cause: r });
}

/** Longest delay a Node timer honours; a longer one would fire after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The one abortable sleep of agentrx (Node's `timers/promises` `setTimeout` with a signal).
 * Resolves after `ms` (clamped to `[0, MAX_TIMER_MS]`; NaN counts as 0), or rejects with
 * `abortReason(signal)` as soon as `signal` aborts, at once if it already has; the timer is then
 * cleared. Never rejects otherwise.
 *
 * Jest's fake timers do not drive `timers/promises`: tests end a sleep through its signal, or
 * inject their own wait where the code under test takes one (`RetryOptions.sleep`).
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw abortReason(signal);
  const delayMs = Number.isNaN(ms) ? 0 : Math.min(Math.max(ms, 0), MAX_TIMER_MS);
  try {
    await timerDelay(delayMs, undefined, signal === undefined ? undefined : { signal });
  } catch (e) {
    if (signal?.aborted) throw abortReason(signal);
    throw e;
  }
}

/**
 * Calls `onAbort` once when `signal` aborts (at once if it already has), for as long as `until`
 * has not settled; then the listener is removed, so a long-lived signal shared by many short-lived
 * users (a caller's signal passed to many sessions) does not collect one listener per user.
 */
export function followAbort(signal: AbortSignal, onAbort: () => void, until: Promise<unknown>): void {
  if (signal.aborted) {
    onAbort();
    return;
  }
  signal.addEventListener('abort', onAbort, { once: true });
  const release = (): void => signal.removeEventListener('abort', onAbort);
  until.then(release, release);
}

/** Races a promise against the signal. */
export function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Nobody waits for `p` any more: its own failure must not surface as an unhandled rejection.
    p.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Rejects with `<what> did not settle within <ms> ms` if `p` has not settled by then. */
export function withTimeout<T>(p: Promise<T>, ms: number, what = 'hook'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** The message of anything thrown. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
