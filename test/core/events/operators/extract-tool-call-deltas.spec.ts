import { TestScheduler } from 'rxjs/testing';
import type { EventDraft } from '../../../../src/core/events/session-event.js';
import type { RawEvent } from '../../../../src/core/model.js';
import { extractToolCallDeltas, type ToolCallDeltaOf } from '../../../../src/core/events/operators/extract-tool-call-deltas.js';
import { DraftFixtures } from './fixtures.js';

/** A provider mapping: `args` events carry the fragments in `parts` (one, or several for parallel calls). */
const toolCallDelta = (raw: RawEvent): ToolCallDeltaOf => (raw['type'] === 'args' ? (raw['parts'] as ToolCallDeltaOf) : undefined);

/** The draft `extractToolCallDeltas` synthesizes. */
function delta(toolUseId: string, argsDelta: string, more: { name?: string; parentMessageId?: string } = {}, turn = 1): EventDraft {
  return DraftFixtures.agentrx(
    {
      type: 'agentrx.tool_call_delta',
      toolUseId,
      ...(more.name ? { name: more.name } : {}),
      argsDelta,
      ...(more.parentMessageId ? { parentMessageId: more.parentMessageId } : {}),
    },
    turn,
  );
}

const drafts = {
  p: DraftFixtures.provider({ type: 'args', parts: { toolUseId: 'call-1', name: 'read_file', argsDelta: '', parentMessageId: 'msg-1' } }, 2),
  q: DraftFixtures.provider({ type: 'status' }, 2),
  // Two parallel calls in one event: one fragment each, in the order returned.
  r: DraftFixtures.provider(
    {
      type: 'args',
      parts: [
        { toolUseId: 'call-1', argsDelta: '{"path"' },
        { toolUseId: 'call-2', name: 'ls', argsDelta: '{}' },
      ],
    },
    2,
  ),
  // Would yield fragments if it were (wrongly) given to toolCallDelta.
  a: DraftFixtures.hostile({ type: 'args', parts: { toolUseId: 'x', argsDelta: 'y' } }, 2),
  c: delta('call-1', '', { name: 'read_file', parentMessageId: 'msg-1' }, 2),
  d: delta('call-1', '{"path"', {}, 2),
  e: delta('call-2', '{}', { name: 'ls' }, 2),
};

describe('extractToolCallDeltas', () => {
  let scheduler: TestScheduler;

  beforeEach(() => {
    scheduler = new TestScheduler((a, e) => expect(a).toEqual(e));
  });

  describe('when provider drafts carry tool-call fragments', () => {
    it('should follow each with one synthesized tool_call_delta per fragment, in order and in its turn', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('p---q-a-r----|', drafts);
        expectObservable(source.pipe(extractToolCallDeltas(toolCallDelta))).toBe('(pc)q-a-(rde)|', drafts);
        expectSubscriptions(source.subscriptions).toBe('^------------!');
      });
    });

    it('should pass the source drafts through as the same objects, and give synthesized drafts no id', () => {
      const seen: EventDraft[] = [];
      scheduler.run(({ cold }) => {
        cold('p|', drafts)
          .pipe(extractToolCallDeltas(toolCallDelta))
          .subscribe((d) => seen.push(d));
      });
      expect(seen[0]).toBe(drafts.p);
      expect(seen[1]).toEqual(drafts.c);
      expect(Object.keys(seen[1]!).sort()).toEqual(['raw', 'source', 'turn']);
    });
  });

  describe('when toolCallDelta returns something malformed or throws', () => {
    it('should drop the bad fragments, leave out bad optional fields, and keep going', () => {
      const parts = [
        { toolUseId: '', argsDelta: 'x' },
        { toolUseId: 'call-9', argsDelta: 7 },
        null,
        'text',
        { toolUseId: 'call-3', name: '', argsDelta: '{', parentMessageId: 5 },
      ];
      let calls = 0;
      const flaky = (raw: RawEvent): ToolCallDeltaOf => {
        if (raw['type'] !== 'args') return undefined;
        calls++;
        if (calls === 1) return parts as unknown as ToolCallDeltaOf;
        if (calls === 2) return { toolUseId: 'call-4' } as unknown as ToolCallDeltaOf;
        if (calls === 3) return [] as ToolCallDeltaOf;
        throw new Error('boom');
      };
      const out: EventDraft[] = [];
      scheduler.run(({ cold }) => {
        cold('pppp|', drafts)
          .pipe(extractToolCallDeltas(flaky))
          .subscribe((d) => out.push(d));
      });
      expect(out).toEqual([drafts.p, delta('call-3', '{', {}, 2), drafts.p, drafts.p, drafts.p]);
    });
  });

  describe('when the source is empty, never emits, or errors', () => {
    it('should complete, stay silent, or pass the error after what came before', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<EventDraft>('|').pipe(extractToolCallDeltas(toolCallDelta))).toBe('|');
        expectObservable(cold<EventDraft>('-').pipe(extractToolCallDeltas(toolCallDelta))).toBe('-');
        expectObservable(cold('p---#', drafts, new Error('x')).pipe(extractToolCallDeltas(toolCallDelta))).toBe('(pc)#', drafts, new Error('x'));
      });
    });
  });

  describe('when the subscriber unsubscribes early', () => {
    it('should stop emitting and unsubscribe from the source', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('p----r----q|', drafts);
        expectObservable(source.pipe(extractToolCallDeltas(toolCallDelta)), '^------!').toBe('(pc)-(rde)', drafts);
        expectSubscriptions(source.subscriptions).toBe('^------!');
      });
    });
  });

  describe('when re-subscribed', () => {
    it('should give each subscription the same output (stateless)', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const piped = cold('p---r-----|', drafts).pipe(extractToolCallDeltas(toolCallDelta));
        expectObservable(piped).toBe('(pc)(rde)-|', drafts);
        expectObservable(piped).toBe('(pc)(rde)-|', drafts);
      });
    });
  });
});
