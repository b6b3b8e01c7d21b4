import * as index from 'rxjs';
import * as shim from '../../../src/core/util/rxjs.js';

/**
 * The sources take rxjs's values from its `rxjs/internal/*` files, not its index (issue 28: the
 * index loads ~220 modules). Each is the index's own object: a host's operators, `instanceof`
 * and `isObservable` work on what agentrx returns, and the reverse.
 */
describe('src/core/util/rxjs', () => {
  it.each(Object.entries(shim))("should export rxjs's own %s", (name, value) => {
    expect(value).toBeDefined();
    expect(value).toBe((index as Record<string, unknown>)[name]);
  });

  it("should make observables a host's rxjs pipes, subscribes to and recognizes", async () => {
    const ours = shim.defer(() => shim.of(1, 2, 3)).pipe(shim.map((n) => n * 2));
    expect(ours).toBeInstanceOf(index.Observable);
    expect(index.isObservable(ours)).toBe(true);
    await expect(
      index.lastValueFrom(
        ours.pipe(
          index.filter((n) => n > 2),
          index.toArray(),
        ),
      ),
    ).resolves.toEqual([4, 6]);
    await expect(shim.firstValueFrom(index.from([7]).pipe(shim.switchMap((n) => shim.of(n + 1))))).resolves.toBe(8);
    await expect(shim.firstValueFrom(shim.EMPTY)).rejects.toBeInstanceOf(index.EmptyError);
  });
});
