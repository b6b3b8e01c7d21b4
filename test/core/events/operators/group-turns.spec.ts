import { concat } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { groupTurns } from '../../../../src/core/events/operators/group-turns.js';

/** Marble items are their own letters; `E` (end of turn) is the boundary. */
const isBoundary = (v: string): boolean => v === 'E';

describe('groupTurns', () => {
  let scheduler: TestScheduler;

  beforeEach(() => {
    scheduler = new TestScheduler((a, e) => expect(a).toEqual(e));
  });

  describe('when boundaries arrive', () => {
    it('should emit each turn with its boundary item last', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-a-b-E-c-E-|');
        expectObservable(source.pipe(groupTurns(isBoundary))).toBe('-----x---y-|', {
          x: ['a', 'b', 'E'],
          y: ['c', 'E'],
        });
        expectSubscriptions(source.subscriptions).toBe('^----------!');
      });
    });

    it('should emit a turn made of the boundary alone', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('E-E|').pipe(groupTurns(isBoundary))).toBe('x-x|', { x: ['E'] });
      });
    });
  });

  describe('when the source completes inside a turn', () => {
    it('should drop the partial turn by default', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('a-E-b-c|').pipe(groupTurns(isBoundary))).toBe('--x----|', { x: ['a', 'E'] });
      });
    });

    it('should drop the partial turn when flushOnComplete is false', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('a-E-b|').pipe(groupTurns(isBoundary, { flushOnComplete: false }))).toBe('--x--|', {
          x: ['a', 'E'],
        });
      });
    });

    it('should emit the partial turn, then complete, when flushOnComplete is true', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('a-E-b-c|').pipe(groupTurns(isBoundary, { flushOnComplete: true }))).toBe('--x----(y|)', {
          x: ['a', 'E'],
          y: ['b', 'c'],
        });
      });
    });
  });

  describe('when the source completes right after a boundary, and flushOnComplete is true', () => {
    it('should not emit an empty turn', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('a-E|').pipe(groupTurns(isBoundary, { flushOnComplete: true }))).toBe('--x|', { x: ['a', 'E'] });
      });
    });
  });

  describe('when the source is empty', () => {
    it('should complete without emitting, even with flushOnComplete', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('|').pipe(groupTurns(isBoundary))).toBe('|');
        expectObservable(cold('|').pipe(groupTurns(isBoundary, { flushOnComplete: true }))).toBe('|');
      });
    });
  });

  describe('when the source never completes', () => {
    it('should emit nothing for an unclosed turn', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-a-b-');
        expectObservable(source.pipe(groupTurns(isBoundary, { flushOnComplete: true }))).toBe('-----');
        expectSubscriptions(source.subscriptions).toBe('^');
      });
    });
  });

  describe('when the source errors immediately', () => {
    it('should pass the error through', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const error = new Error('boom');
        expectObservable(cold<string>('#', undefined, error).pipe(groupTurns(isBoundary))).toBe('#', undefined, error);
      });
    });
  });

  describe('when the source errors mid-turn', () => {
    it('should emit the closed turns, drop the partial one and pass the error, even with flushOnComplete', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('boom');
        const source = cold('a-E-b-#', undefined, error);
        expectObservable(source.pipe(groupTurns(isBoundary, { flushOnComplete: true }))).toBe('--x---#', { x: ['a', 'E'] }, error);
        expectSubscriptions(source.subscriptions).toBe('^-----!');
      });
    });
  });

  describe('when the subscriber unsubscribes early', () => {
    it('should stop emitting and unsubscribe from the source', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('a-E-b-E-');
        expectObservable(source.pipe(groupTurns(isBoundary)), '^---!').toBe('--x--', { x: ['a', 'E'] });
        expectSubscriptions(source.subscriptions).toBe('^---!');
      });
    });
  });

  describe('when the operated observable is subscribed again', () => {
    it('should start with an empty buffer', () => {
      scheduler.run(({ cold, expectObservable }) => {
        // The first subscription leaves `b` buffered; it must not leak into the second.
        const turns = cold('a-E-b|').pipe(groupTurns(isBoundary));
        expectObservable(concat(turns, turns)).toBe('--x----x--|', { x: ['a', 'E'] });
      });
    });

    it('should keep concurrent subscriptions independent', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const turns = cold('a-b-E-').pipe(groupTurns(isBoundary));
        expectObservable(turns).toBe('----x-', { x: ['a', 'b', 'E'] });
        expectObservable(turns, '--^').toBe('------x-', { x: ['a', 'b', 'E'] });
      });
    });
  });

  describe('when isBoundary throws', () => {
    it('should treat the item as not a boundary', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const throwing = (v: string): boolean => {
          if (v === 'b') throw new Error('bad item');
          return v === 'E';
        };
        expectObservable(cold('a-b-E|').pipe(groupTurns(throwing))).toBe('----x|', { x: ['a', 'b', 'E'] });
      });
    });
  });
});
