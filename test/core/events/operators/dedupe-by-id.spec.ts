import { concat, count, from, range, map, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { RecentKeys, dedupeById } from '../../../../src/core/events/operators/dedupe-by-id.js';

interface Item {
  readonly key: string | undefined;
  readonly n: number;
}

const keyOf = (v: Item): string | undefined => v.key;

/** Marble values: a lower- and upper-case letter share a key (a and A are both 'a'); u and U have none. */
const items: Record<string, Item> = {
  a: { key: 'a', n: 1 },
  A: { key: 'a', n: 2 },
  b: { key: 'b', n: 3 },
  B: { key: 'b', n: 4 },
  c: { key: 'c', n: 5 },
  C: { key: 'c', n: 6 },
  u: { key: undefined, n: 7 },
  U: { key: undefined, n: 8 },
};

describe('dedupeById', () => {
  let scheduler: TestScheduler;

  beforeEach(() => {
    scheduler = new TestScheduler((a, e) => expect(a).toEqual(e));
  });

  describe('when a key repeats', () => {
    it('should drop every later item with that key', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-a-b-A-c-B-C-|', items);
        expectObservable(source.pipe(dedupeById(keyOf))).toBe('-a-b---c-----|', items);
        expectSubscriptions(source.subscriptions).toBe('^------------!');
      });
    });
  });

  describe('when items have no key', () => {
    it('should always pass them', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('-u-a-U-u-A-|', items);
        expectObservable(source.pipe(dedupeById(keyOf))).toBe('-u-a-U-u---|', items);
      });
    });
  });

  describe('when the source is empty', () => {
    it('should complete without emitting', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<Item>('|').pipe(dedupeById(keyOf))).toBe('|');
      });
    });
  });

  describe('when the source never emits', () => {
    it('should never emit nor complete', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold<Item>('-');
        expectObservable(source.pipe(dedupeById(keyOf))).toBe('-');
        expectSubscriptions(source.subscriptions).toBe('^');
      });
    });
  });

  describe('when the source errors immediately', () => {
    it('should pass the error through', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const error = new Error('boom');
        expectObservable(cold<Item>('#', undefined, error).pipe(dedupeById(keyOf))).toBe('#', undefined, error);
      });
    });
  });

  describe('when the source errors mid-stream', () => {
    it('should emit the unique items, then the error', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('boom');
        const source = cold('-a-b-A-#', items, error);
        expectObservable(source.pipe(dedupeById(keyOf))).toBe('-a-b---#', items, error);
        expectSubscriptions(source.subscriptions).toBe('^------!');
      });
    });
  });

  describe('when the subscriber unsubscribes early', () => {
    it('should stop emitting and unsubscribe from the source', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-a-b-c-', items);
        expectObservable(source.pipe(dedupeById(keyOf)), '^--!').toBe('-a--', items);
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
    });
  });

  describe('when the operated observable is subscribed again', () => {
    it('should start with an empty seen set', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const deduped = cold('a-b-A|', items).pipe(dedupeById(keyOf));
        expectObservable(concat(deduped, deduped)).toBe('a-b--a-b--|', items);
      });
    });

    it('should keep concurrent subscriptions independent', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const deduped = cold('a-b-A-', items).pipe(dedupeById(keyOf));
        expectObservable(deduped).toBe('a-b---', items);
        expectObservable(deduped, '--^').toBe('--a-b---', items);
      });
    });
  });

  describe('when more keys than the window have passed', () => {
    it('should still drop every key of the last window', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('a-b-c-B-C|', items);
        expectObservable(source.pipe(dedupeById(keyOf, { window: 2 }))).toBe('a-b-c----|', items);
      });
    });

    it('should let a key pass again once twice the window of newer keys passed', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('a-b-c-A|', items);
        // window 1: b and c push a out of both generations.
        expectObservable(source.pipe(dedupeById(keyOf, { window: 1 }))).toBe('a-b-c-A|', items);
      });
    });

    it('should not refresh a key when its duplicate is dropped', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('a-b-A-c-A|', items);
        // window 1: b pushes a to the older generation, c drops it; the dropped A did not renew a.
        expectObservable(source.pipe(dedupeById(keyOf, { window: 1 }))).toBe('a-b---c-A|', items);
      });
    });

    it('should remember at least 100 000 keys by default and at most 200 000', () => {
      scheduler.run(({ expectObservable }) => {
        const keys = concat(range(0, 200_001), from([0, 100_000]));
        // 0 was pushed out by 200 000 newer keys and passes; 100 000 is still held.
        const passed = keys.pipe(
          map((n): Item => ({ key: String(n), n })),
          dedupeById(keyOf),
          count(),
        );
        expectObservable(passed).toBe('(c|)', { c: 200_002 });
      });
    });
  });

  describe('when window is not a positive number', () => {
    it('should fall back to the default window', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('a-b-A-B|', items);
        expectObservable(source.pipe(dedupeById(keyOf, { window: 0 }))).toBe('a-b----|', items);
        expectObservable(source.pipe(dedupeById(keyOf, { window: Number.NaN }))).toBe('a-b----|', items);
      });
    });
  });

  describe('when keyOf throws', () => {
    it('should treat the item as keyless and pass it', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const throwing = (v: Item): string | undefined => {
          if (v.key === 'b') throw new Error('bad key');
          return v.key;
        };
        const source = cold('a-b-B-A|', items);
        expectObservable(source.pipe(dedupeById(throwing))).toBe('a-b-B--|', items);
      });
    });
  });
});

describe('dedupeById with a caller-owned seen set', () => {
  describe('when the set is shared across subscriptions', () => {
    it('should drop keys the set already holds and record new ones in it', () => {
      const seen = new RecentKeys(10);
      seen.add('a');
      const out: string[] = [];
      of('a', 'b', 'b', 'c')
        .pipe(dedupeById((v: string) => v, { seen }))
        .subscribe((v) => out.push(v));
      of('c', 'd')
        .pipe(dedupeById((v: string) => v, { seen }))
        .subscribe((v) => out.push(v));
      expect(out).toEqual(['b', 'c', 'd']);
      expect(['a', 'b', 'c', 'd', 'e'].map((k) => seen.has(k))).toEqual([true, true, true, true, false]);
      expect(seen.size).toBe(4);
    });
  });
});

describe('RecentKeys', () => {
  it('should hold at most twice its window however many keys are added', () => {
    const keys = new RecentKeys(3);
    for (let i = 0; i < 100; i++) keys.add(`k${i}`);
    expect(keys.size).toBeLessThanOrEqual(6);
    expect(['k97', 'k98', 'k99', 'k0'].map((k) => keys.has(k))).toEqual([true, true, true, false]);
  });

  it('should fall back to a window of 100 000 for a bad value', () => {
    expect([new RecentKeys(0).window, new RecentKeys(-1).window, new RecentKeys(Number.NaN).window, new RecentKeys(2.7).window]).toEqual([
      100_000, 100_000, 100_000, 2,
    ]);
  });
});
