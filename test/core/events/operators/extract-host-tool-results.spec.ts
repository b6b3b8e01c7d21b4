import { TestScheduler } from 'rxjs/testing';
import type { EventDraft } from '../../../../src/core/events/session-event.js';
import type { RawEvent } from '../../../../src/core/model.js';
import { extractHostToolResults, type HostToolResultOf } from '../../../../src/core/events/operators/extract-host-tool-results.js';
import { DraftFixtures } from './fixtures.js';

/** A provider mapping: `result` events carry a host-run tool result. */
const hostToolResult = (raw: RawEvent): HostToolResultOf =>
  raw['type'] === 'result' ? { toolUseId: raw['tool_use_id'] as string, content: raw['content'] as string, isError: raw['is_error'] === true } : undefined;

const drafts = {
  p: DraftFixtures.provider({ type: 'result', tool_use_id: 'srv-1', content: 'found' }, 2, 'ev-1'),
  q: DraftFixtures.provider({ type: 'status', id: 'ev-2' }, 2, 'ev-2'),
  r: DraftFixtures.provider({ type: 'result', tool_use_id: 'srv-2', content: 'denied', is_error: true }, 3),
  // Would yield a result if it were (wrongly) given to hostToolResult.
  a: DraftFixtures.hostile({ type: 'result', tool_use_id: 'srv-3', content: 'nope' }, 2),
  h: DraftFixtures.hostToolResult('srv-1', 'found', false, 2),
  k: DraftFixtures.hostToolResult('srv-2', 'denied', true, 3),
};

describe('extractHostToolResults', () => {
  let scheduler: TestScheduler;

  beforeEach(() => {
    scheduler = new TestScheduler((a, e) => expect(a).toEqual(e));
  });

  describe('when provider drafts carry host-run tool results', () => {
    it('should pass every draft and follow each result draft with a synthesized host_tool_result in its turn', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('p---q-a-r---|', drafts);
        expectObservable(source.pipe(extractHostToolResults(hostToolResult))).toBe('(ph)q-a-(rk)|', drafts);
        expectSubscriptions(source.subscriptions).toBe('^-----------!');
      });
    });

    it('should pass the source drafts through as the same objects, and give synthesized drafts no id', () => {
      const seen: EventDraft[] = [];
      scheduler.run(({ cold }) => {
        cold('p|', drafts)
          .pipe(extractHostToolResults(hostToolResult))
          .subscribe((d) => seen.push(d));
      });
      expect(seen[0]).toBe(drafts.p);
      expect(seen[1]).toEqual(drafts.h);
      expect(Object.keys(seen[1]!).sort()).toEqual(['raw', 'source', 'turn']);
    });
  });

  describe('when hostToolResult returns something malformed or throws', () => {
    it('should treat it as no result and keep going', () => {
      const bad: unknown[] = [
        { toolUseId: '', content: 'x', isError: false },
        { toolUseId: 'a', content: 1, isError: false },
        { toolUseId: 'a', content: 'x', isError: 'no' },
        'text',
        null,
      ];
      let n = 0;
      const flaky = (raw: RawEvent): HostToolResultOf => {
        if (raw['type'] !== 'result') return undefined;
        if (n === bad.length) throw new Error('boom');
        return bad[n++] as HostToolResultOf;
      };
      const many = Object.fromEntries([...bad, 'throws'].map((_, i) => [String.fromCharCode(97 + i), drafts.p]));
      scheduler.run(({ cold, expectObservable }) => {
        const marble = Object.keys(many).join('') + 'r---|';
        expectObservable(
          cold(marble, { ...many, r: drafts.r }).pipe(extractHostToolResults((raw) => (raw === drafts.r.raw ? hostToolResult(raw) : flaky(raw)))),
        ).toBe(`${Object.keys(many).join('')}(rk)|`, { ...many, r: drafts.r, k: drafts.k });
      });
    });
  });

  describe('when the source is empty, never emits, or errors', () => {
    it('should complete, stay silent, or pass the error after what came before', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<EventDraft>('|').pipe(extractHostToolResults(hostToolResult))).toBe('|');
        expectObservable(cold<EventDraft>('-').pipe(extractHostToolResults(hostToolResult))).toBe('-');
        expectObservable(cold('p---#', drafts, new Error('x')).pipe(extractHostToolResults(hostToolResult))).toBe('(ph)#', drafts, new Error('x'));
      });
    });
  });

  describe('when the subscriber unsubscribes early', () => {
    it('should stop emitting and unsubscribe from the source', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('p-------r|', drafts);
        expectObservable(source.pipe(extractHostToolResults(hostToolResult)), '^-----!').toBe('(ph)--', drafts);
        expectSubscriptions(source.subscriptions).toBe('^-----!');
      });
    });
  });

  describe('when an item is not a draft', () => {
    it('should drop it', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('n-p---|', { n: null as unknown as EventDraft, p: drafts.p }).pipe(extractHostToolResults(hostToolResult))).toBe(
          '--(ph)|',
          drafts,
        );
      });
    });
  });
});
