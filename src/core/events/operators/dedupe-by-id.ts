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
      const seen = opts.seen ?? new Set<string>();
      const order = evictionOrder(seen);
      return source.pipe(
        filter((v) => {
          const key = safeKey(keyOf, v);
          if (key === undefined) return true;
          if (seen.has(key)) return false;
          while (seen.size >= maxSize && order.size > 0) seen.delete(order.shift()!);
          seen.add(key);
          order.push(key);
          return true;
        }),
      );
    });
}

/**
 * Insertion order of a seen set, kept beside it. Evicting through `set.values().next()` is
 * O(deleted entries) in V8 (deleted slots stay until a rehash), which turns a full seen set
 * quadratic; a ring of keys makes each eviction O(1).
 */
class KeyRing {
  private keys: string[] = [];
  private head = 0;
  get size(): number {
    return this.keys.length - this.head;
  }
  push(key: string): void {
    this.keys.push(key);
  }
  shift(): string | undefined {
    const key = this.keys[this.head++];
    if (this.head > 1024 && this.head * 2 > this.keys.length) {
      this.keys = this.keys.slice(this.head);
      this.head = 0;
    }
    return key;
  }
}

/** One ring per seen set, so a caller-owned set shared across subscriptions keeps one order. */
const rings = new WeakMap<Set<string>, KeyRing>();

function evictionOrder(seen: Set<string>): KeyRing {
  let ring = rings.get(seen);
  if (!ring) {
    ring = new KeyRing();
    for (const key of seen) ring.push(key);
    rings.set(seen, ring);
  }
  return ring;
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
