import { concat, defer, EMPTY, filter, map, of, type OperatorFunction } from '../../util/rxjs.js';

/** Options for {@link groupTurns}. */
export interface GroupTurnsOptions {
  /**
   * When the source completes with a non-empty partial group, emit it before completing.
   * Set it for request/response batches, where completion ends the turn; leave it unset (the
   * default) for streams, where a partial group at completion is an interrupted turn.
   */
  readonly flushOnComplete?: boolean;
}

/**
 * Collects items into turns, emitting each turn as an array when its boundary item arrives.
 *
 * ```
 * source:                                  --a--b--B--c--B--d--|
 * groupTurns(isBoundary):                  --------x-----y-----|
 * groupTurns(isBoundary, flush):           --------x-----y-----(z|)
 *
 * isBoundary(B) = true; x = [a, b, B], y = [c, B], z = [d]
 * ```
 *
 * The boundary item is the last element of its group. The partial group left when the source
 * completes is emitted only with `flushOnComplete` (and only if non-empty); on error the partial
 * group is dropped and the error passes through. The buffer is per subscription. An `isBoundary`
 * that throws counts as "not a boundary"; the operator never errors on its own.
 *
 * @param isBoundary Returns true for the item that closes a turn.
 * @param opts Whether to flush the trailing partial group on completion.
 * @returns A function that returns an Observable of turns (arrays of source items).
 */
export function groupTurns<T>(isBoundary: (v: T) => boolean, opts: GroupTurnsOptions = {}): OperatorFunction<T, T[]> {
  const flushOnComplete = opts.flushOnComplete === true;
  return (source) =>
    defer(() => {
      let buffer: T[] = [];
      const take = (): T[] => {
        const group = buffer;
        buffer = [];
        return group;
      };
      const groups$ = source.pipe(
        map((v): T[] | undefined => {
          buffer.push(v);
          return safeIsBoundary(isBoundary, v) ? take() : undefined;
        }),
        filter((group): group is T[] => group !== undefined),
      );
      // concat subscribes to the flush only after a clean completion, never after an error.
      const flush$ = defer(() => (flushOnComplete && buffer.length > 0 ? of(take()) : EMPTY));
      return concat(groups$, flush$);
    });
}

function safeIsBoundary<T>(isBoundary: (v: T) => boolean, v: T): boolean {
  try {
    return isBoundary(v) === true;
  } catch {
    return false;
  }
}
