import { defer, filter, type MonoTypeOperatorFunction } from 'rxjs';

/** Options for {@link dedupeById}. */
export interface DedupeByIdOptions {
  /**
   * How many keys the operator remembers. Once the seen set is full, the oldest key is forgotten
   * (FIFO) to make room. Default 100 000. Values below 1 (or not a number) fall back to the
   * default; `Infinity` remembers every key.
   */
  readonly maxSize?: number;
  /**
   * A seen set owned by the caller, shared across subscriptions and readable from outside (the
   * Session hands it to `reconnect`). Default: a fresh set per subscription.
   */
  readonly seen?: Set<string>;
}

/** Default bound of the seen set. */
const DEDUPE_BY_ID_DEFAULT_MAX_SIZE = 100_000;

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
 * The seen set is per subscription (a re-subscription starts empty) unless the caller passes its
 * own `opts.seen`, and is bounded by
 * `opts.maxSize`: once full, the oldest key is evicted first, so a key seen long enough ago may
 * pass again. A `keyOf` that throws is treated as "no key" (the item passes); the operator never
 * errors on its own.
 *
 * @param keyOf Returns the dedupe key of an item, or `undefined` when it has none.
 * @param opts Bound of the seen set.
 * @returns A function that returns an Observable mirroring the source without repeated keys.
 */
export function dedupeById<T>(
  keyOf: (v: T) => string | undefined,
  opts: DedupeByIdOptions = {},
): MonoTypeOperatorFunction<T> {
  const maxSize = normalizeMaxSize(opts.maxSize);
  return (source) =>
    defer(() => {
      // Set iterates in insertion order, which makes it a FIFO for eviction.
      const seen = opts.seen ?? new Set<string>();
      return source.pipe(
        filter((v) => {
          const key = safeKey(keyOf, v);
          if (key === undefined) return true;
          if (seen.has(key)) return false;
          if (seen.size >= maxSize) {
            const oldest = seen.values().next();
            if (oldest.done !== true) seen.delete(oldest.value);
          }
          seen.add(key);
          return true;
        }),
      );
    });
}

function normalizeMaxSize(maxSize: number | undefined): number {
  if (typeof maxSize !== 'number' || Number.isNaN(maxSize) || maxSize < 1) return DEDUPE_BY_ID_DEFAULT_MAX_SIZE;
  return Math.floor(maxSize);
}

function safeKey<T>(keyOf: (v: T) => string | undefined, v: T): string | undefined {
  try {
    const key = keyOf(v);
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}
