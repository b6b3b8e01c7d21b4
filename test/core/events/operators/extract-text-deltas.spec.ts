import type { Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { EventDraft } from '../../../../src/core/events/session-event.js';
import type { RawEvent } from '../../../../src/core/model.js';
import { extractTextDeltas, type TextDeltaResult } from '../../../../src/core/events/operators/extract-text-deltas.js';
import { DraftFixtures } from './fixtures.js';

/** A provider mapping: `delta` events carry a string, `chunk` events an object with a message id. */
const textDelta = (raw: RawEvent): TextDeltaResult => {
  if (raw['type'] === 'delta') return raw['text'] as string;
  if (raw['type'] === 'chunk') return { text: raw['text'] as string, messageId: raw['messageId'] as string | undefined };
  return undefined;
};

const drafts = {
  p: DraftFixtures.provider({ type: 'delta', text: 'Hel' }, 2, 'ev-1'),
  q: DraftFixtures.provider({ type: 'status', id: 'ev-2' }, 2, 'ev-2'),
  r: DraftFixtures.provider({ type: 'delta', text: 'lo' }, 3),
  c: DraftFixtures.provider({ type: 'chunk', text: 'Hi', messageId: 'm-9' }, 2),
  e: DraftFixtures.provider({ type: 'delta', text: '' }, 2),
  a: DraftFixtures.hostile({ type: 'agentrx.turn_end', turn: 2 }, 2),
  // Would yield a delta if it were (wrongly) given to textDelta.
  d: DraftFixtures.hostile({ type: 'delta', text: 'nope' }, 2),
  t: DraftFixtures.textDelta('Hel', 'msg-2', 2),
  s: DraftFixtures.textDelta('lo', 'msg-3', 3),
  m: DraftFixtures.textDelta('Hi', 'm-9', 2),
};

describe('extractTextDeltas', () => {
  let scheduler: TestScheduler;

  beforeEach(() => {
    scheduler = new TestScheduler((a, e) => expect(a).toEqual(e));
  });

  describe('when provider drafts carry text', () => {
    it('should pass every draft and follow each text draft with a synthesized text_delta', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('p---q-a-r---|', drafts);
        expectObservable(source.pipe(extractTextDeltas(textDelta))).toBe('(pt)q-a-(rs)|', drafts);
        expectSubscriptions(source.subscriptions).toBe('^-----------!');
      });
    });

    it('should pass the source drafts through as the same objects, and give synthesized drafts no id', () => {
      const seen: EventDraft[] = [];
      scheduler.run(({ cold }) => {
        cold('p|', drafts)
          .pipe(extractTextDeltas(textDelta))
          .subscribe((d) => seen.push(d));
      });
      expect(seen).toHaveLength(2);
      expect(seen[0]).toBe(drafts.p);
      expect(seen[1]).toEqual(drafts.t);
      expect(Object.keys(seen[1]!).sort()).toEqual(['raw', 'source', 'turn']);
    });
  });

  describe('when textDelta returns a message id', () => {
    it('should use it instead of the turn-derived one', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('c---|', drafts).pipe(extractTextDeltas(textDelta))).toBe('(cm)|', drafts);
      });
    });
  });

  describe('when textDelta returns an object without a message id', () => {
    it('should derive the message id from the turn', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const chunk = DraftFixtures.provider({ type: 'chunk', text: 'Yo' }, 4);
        expectObservable(cold('c---|', { c: chunk }).pipe(extractTextDeltas(textDelta))).toBe('(cm)|', {
          c: chunk,
          m: DraftFixtures.textDelta('Yo', 'msg-4', 4),
        });
      });
    });
  });

  describe('when textDelta returns empty text or nothing', () => {
    it('should pass the draft without synthesizing', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('e-q|', drafts).pipe(extractTextDeltas(textDelta))).toBe('e-q|', drafts);
      });
    });
  });

  describe('when textDelta returns a malformed value', () => {
    it('should treat it as no delta', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const malformed = (): TextDeltaResult => ({ text: 42 }) as unknown as TextDeltaResult;
        expectObservable(cold('p|', drafts).pipe(extractTextDeltas(malformed))).toBe('p|', drafts);
      });
    });
  });

  describe('when textDelta throws', () => {
    it('should treat it as no delta and keep going', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const throwing = (raw: RawEvent): TextDeltaResult => {
          if (raw['text'] === 'Hel') throw new Error('bad event');
          return textDelta(raw);
        };
        expectObservable(cold('p-r---|', drafts).pipe(extractTextDeltas(throwing))).toBe('p-(rs)|', drafts);
      });
    });
  });

  describe('when drafts come from agentrx', () => {
    it('should pass them without calling textDelta', () => {
      const calledWith: RawEvent[] = [];
      const recording = (raw: RawEvent): TextDeltaResult => {
        calledWith.push(raw);
        return textDelta(raw);
      };
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('d-a|', drafts).pipe(extractTextDeltas(recording))).toBe('d-a|', drafts);
      });
      expect(calledWith).toEqual([]);
    });
  });

  describe('when the source is empty', () => {
    it('should complete without emitting', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<EventDraft>('|').pipe(extractTextDeltas(textDelta))).toBe('|');
      });
    });
  });

  describe('when the source never emits', () => {
    it('should never emit nor complete', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold<EventDraft>('-');
        expectObservable(source.pipe(extractTextDeltas(textDelta))).toBe('-');
        expectSubscriptions(source.subscriptions).toBe('^');
      });
    });
  });

  describe('when the source errors immediately', () => {
    it('should pass the error through', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const error = new Error('boom');
        expectObservable(cold<EventDraft>('#', undefined, error).pipe(extractTextDeltas(textDelta))).toBe('#', undefined, error);
      });
    });
  });

  describe('when the source errors mid-stream', () => {
    it('should emit what came before, then the error', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('boom');
        const source = cold('p---#', drafts, error);
        expectObservable(source.pipe(extractTextDeltas(textDelta))).toBe('(pt)#', drafts, error);
        expectSubscriptions(source.subscriptions).toBe('^---!');
      });
    });
  });

  describe('when the subscriber unsubscribes early', () => {
    it('should stop emitting and unsubscribe from the source', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('q-p---r-', drafts);
        expectObservable(source.pipe(extractTextDeltas(textDelta)), '^----!').toBe('q-(pt)', drafts);
        expectSubscriptions(source.subscriptions).toBe('^----!');
      });
    });
  });

  describe('when an item is not a draft', () => {
    it('should drop it', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('n-q|', { n: null, q: drafts.q }) as unknown as Observable<EventDraft>;
        expectObservable(source.pipe(extractTextDeltas(textDelta))).toBe('--q|', drafts);
      });
    });
  });
});
