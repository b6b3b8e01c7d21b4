import { TestScheduler } from 'rxjs/testing';
import type { EventDraft } from '../../../../src/core/events/session-event.js';
import type { RawEvent } from '../../../../src/core/model.js';
import { extractReasoningDeltas } from '../../../../src/core/events/operators/extract-reasoning-deltas.js';
import type { TextDeltaResult } from '../../../../src/core/events/operators/extract-text-deltas.js';
import { DraftFixtures } from './fixtures.js';

/** A provider mapping: `think` events carry reasoning (with a message id when they have one). */
const reasoningDelta = (raw: RawEvent): TextDeltaResult =>
  raw['type'] === 'think' ? (typeof raw['mid'] === 'string' ? { text: raw['text'] as string, messageId: raw['mid'] } : (raw['text'] as string)) : undefined;

function reasoning(text: string, messageId: string, turn = 1): EventDraft {
  return DraftFixtures.agentrx({ type: 'agentrx.reasoning_delta', text, messageId }, turn);
}

const drafts = {
  p: DraftFixtures.provider({ type: 'think', text: 'Let me see', mid: 'chatcmpl-1.reasoning' }, 2),
  q: DraftFixtures.provider({ type: 'text', text: 'answer' }, 2),
  r: DraftFixtures.provider({ type: 'think', text: 'hmm' }, 3),
  e: DraftFixtures.provider({ type: 'think', text: '' }, 3),
  a: DraftFixtures.hostile({ type: 'think', text: 'nope' }, 2),
  t: reasoning('Let me see', 'chatcmpl-1.reasoning', 2),
  u: reasoning('hmm', 'reasoning-3', 3),
};

describe('extractReasoningDeltas', () => {
  let scheduler: TestScheduler;

  beforeEach(() => {
    scheduler = new TestScheduler((a, e) => expect(a).toEqual(e));
  });

  describe('when provider drafts carry reasoning', () => {
    it('should follow each with a reasoning_delta, with the id given or reasoning-<turn>, and nothing for empty text', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('p---q-a-r---e-|', drafts);
        expectObservable(source.pipe(extractReasoningDeltas(reasoningDelta))).toBe('(pt)q-a-(ru)e-|', drafts);
        expectSubscriptions(source.subscriptions).toBe('^-------------!');
      });
    });
  });

  describe('when reasoningDelta throws or returns something malformed', () => {
    it('should treat it as no reasoning and keep going', () => {
      const bad: unknown[] = [{ text: 3 }, { text: 'x', messageId: 7 }, null];
      let n = 0;
      const flaky = (raw: RawEvent): TextDeltaResult => {
        if (raw['type'] !== 'think') return undefined;
        if (n === bad.length) throw new Error('boom');
        return bad[n++] as TextDeltaResult;
      };
      const out: EventDraft[] = [];
      scheduler.run(({ cold }) => {
        cold('pppp|', drafts)
          .pipe(extractReasoningDeltas(flaky))
          .subscribe((d) => out.push(d));
      });
      // A malformed message id falls back to the default; the rest yields nothing.
      expect(out).toEqual([drafts.p, drafts.p, reasoning('x', 'reasoning-2', 2), drafts.p, drafts.p]);
    });
  });

  describe('when the source is empty, never emits, errors, or is left early', () => {
    it('should complete, stay silent, pass the error, or stop and unsubscribe', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        expectObservable(cold<EventDraft>('|').pipe(extractReasoningDeltas(reasoningDelta))).toBe('|');
        expectObservable(cold<EventDraft>('-').pipe(extractReasoningDeltas(reasoningDelta))).toBe('-');
        expectObservable(cold('p---#', drafts, new Error('x')).pipe(extractReasoningDeltas(reasoningDelta))).toBe('(pt)#', drafts, new Error('x'));
        const source = cold('p--r--|', drafts);
        expectObservable(source.pipe(extractReasoningDeltas(reasoningDelta)), '^--!').toBe('(pt)', drafts);
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
    });
  });
});
