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

/** The AgentRxError an aborted signal carries (cancel or timeout), or a generic `cancelled`. */
export function abortReason(signal: AbortSignal): AgentRxError {
  const r: unknown = signal.reason;
  return r instanceof AgentRxError ? r : new AgentRxError('cancelled', 'the session was cancelled');
}

/** Resolves after `ms`, or rejects with the abort reason. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Races a promise against the signal. */
export function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
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
