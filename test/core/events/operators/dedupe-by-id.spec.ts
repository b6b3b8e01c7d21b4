import { concat, count, from, range, map, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { dedupeById } from '../../../../src/core/events/operators/dedupe-by-id.js';

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

  describe('when the seen set reaches maxSize', () => {
    it('should evict the oldest key so it passes again', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('a-b-c-A-C-B|', items);
        // maxSize 2: c evicts a, A evicts b, C is still held, B passes again.
        expectObservable(source.pipe(dedupeById(keyOf, { maxSize: 2 }))).toBe('a-b-c-A---B|', items);
      });
    });

    it('should evict in first-in order, not by recent use', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('a-b-A-c-A|', items);
        // The dropped A does not refresh a; c evicts a (FIFO), so the second A passes.
        expectObservable(source.pipe(dedupeById(keyOf, { maxSize: 2 }))).toBe('a-b---c-A|', items);
      });
    });

    it('should bound the seen set at 100 000 keys by default', () => {
      scheduler.run(({ expectObservable }) => {
        const keys = concat(range(0, 100_001), from([0, 2]));
        // 100 001 distinct keys evict key 0, so 0 passes again (evicting 1) while 2 is still held.
        const passed = keys.pipe(
          map((n): Item => ({ key: String(n), n })),
          dedupeById(keyOf),
          count(),
        );
        expectObservable(passed).toBe('(c|)', { c: 100_002 });
      });
    });
  });

  describe('when maxSize is not a positive number', () => {
    it('should fall back to the default bound', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('a-b-A-B|', items);
        expectObservable(source.pipe(dedupeById(keyOf, { maxSize: 0 }))).toBe('a-b----|', items);
        expectObservable(source.pipe(dedupeById(keyOf, { maxSize: Number.NaN }))).toBe('a-b----|', items);
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
      const seen = new Set<string>(['a']);
      const out: string[] = [];
      of('a', 'b', 'b', 'c').pipe(dedupeById((v: string) => v, { seen })).subscribe((v) => out.push(v));
      of('c', 'd').pipe(dedupeById((v: string) => v, { seen })).subscribe((v) => out.push(v));
      expect(out).toEqual(['b', 'c', 'd']);
      expect([...seen]).toEqual(['a', 'b', 'c', 'd']);
    });
  });
});
