import { defer, filter, type MonoTypeOperatorFunction } from '../../util/rxjs.js';

/** Default window of {@link dedupeById} and {@link RecentKeys}. */
const DEFAULT_WINDOW = 100_000;

/**
 * The most recently added keys, bounded: it remembers at least the last `window` keys and at most
 * twice as many. Keys live in two generations; when the current one is full it becomes the
 * previous one and the older generation is dropped whole. Nothing is deleted key by key, so there
 * is no eviction order to keep and no deleted-slot churn in the hash tables: memory is flat and
 * `add` is O(1) however many keys pass through.
 */
export class RecentKeys {
  /** The guaranteed window (a positive integer). */
  readonly window: number;
  private current = new Set<string>();
  private previous = new Set<string>();

  /** @param window How many recent keys are always remembered. Values below 1 (or not a number) fall back to 100 000. */
  constructor(window?: number) {
    this.window = normalizeWindow(window);
  }

  /** How many keys are held now (between `min(added, window)` and `2 × window`). */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  has(key: string): boolean {
    return this.current.has(key) || this.previous.has(key);
  }

  /** Records `key` as the most recent one. */
  add(key: string): void {
    if (this.current.size >= this.window) {
      this.previous = this.current;
      this.current = new Set();
    }
    this.current.add(key);
  }
}

/** Options for {@link dedupeById}. */
export interface DedupeByIdOptions {
  /**
   * How many of the most recent keys are always remembered; a key is forgotten after at most
   * twice as many newer keys. Default 100 000. Values below 1 (or not a number) fall back to the
   * default. Ignored when `seen` is given (it has its own window).
   */
  readonly window?: number;
  /**
   * Keys owned by the caller, shared across subscriptions and readable from outside (the Session
   * uses them to find its place in the host's history). Default: fresh keys per subscription.
   */
  readonly seen?: RecentKeys;
}

/**
 * Drops items whose key was already seen; items without a key always pass.
 *
 * ```
 * source:            --a--b--a--u--b--u--|
 * dedupeById(keyOf): --a--b-----u-----u--|
 *
 * keyOf(a) = 'a', keyOf(b) = 'b', keyOf(u) = undefined
 * ```
 *
 * The seen keys are per subscription (a re-subscription starts empty) unless the caller passes
 * its own `opts.seen`, and are bounded (see {@link RecentKeys}): a key seen long enough ago may
 * pass again. A dropped item does not refresh its key. A `keyOf` that throws is treated as
 * "no key" (the item passes); the operator never errors on its own.
 *
 * @param keyOf Returns the dedupe key of an item, or `undefined` when it has none.
 * @param opts The window, or caller-owned keys.
 * @returns A function that returns an Observable mirroring the source without repeated keys.
 */
export function dedupeById<T>(keyOf: (v: T) => string | undefined, opts: DedupeByIdOptions = {}): MonoTypeOperatorFunction<T> {
  return (source) =>
    defer(() => {
      const seen = opts.seen ?? new RecentKeys(opts.window);
      return source.pipe(
        filter((v) => {
          const key = safeKey(keyOf, v);
          if (key === undefined) return true;
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        }),
      );
    });
}

function normalizeWindow(window: number | undefined): number {
  if (typeof window !== 'number' || Number.isNaN(window) || window < 1) return DEFAULT_WINDOW;
  return Math.floor(window);
}

function safeKey<T>(keyOf: (v: T) => string | undefined, v: T): string | undefined {
  try {
    const key = keyOf(v);
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}
