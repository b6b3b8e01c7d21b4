import { Subject, from, lastValueFrom, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import { toAgUi } from '../../../src/core/events/operators/to-ag-ui.js';
import type { AgentRxEnvelope, AgentRxEvent, ProviderEnvelope, SessionEvent } from '../../../src/core/events/session-event.js';
import { agUiOf, withAgUi, type TranslatedEvent } from '../../../src/core/events/translated-event.js';

const env = (seq: number, raw: AgentRxEvent): AgentRxEnvelope => ({ seq, sessionId: 's', turn: 1, provider: 'p', source: 'agentrx', raw, at: seq });
const usage = { inputTokens: 0, outputTokens: 0 };
const s = env(1, { type: 'agentrx.run_started', runId: 'r', threadId: 't', resumed: false });
const t = env(2, { type: 'agentrx.text_delta', text: 'hi', messageId: 'm' });
const p: ProviderEnvelope = { seq: 3, sessionId: 's', turn: 1, provider: 'p', source: 'provider', id: 'e1', raw: { type: 'idle' }, at: 3 };
const f = env(4, { type: 'agentrx.run_finished', runId: 'r', threadId: 't', terminal: 'end_turn', stopReason: 'end_turn', turns: 1, usage });
const h = env(5, { type: 'agentrx.host_tool_result', toolUse: { id: 'h1' }, result: { content: 'hits', isError: false } });
const e = env(6, {
  type: 'agentrx.turn_end',
  turn: 1,
  terminal: 'end_turn',
  stopReason: 'end_turn',
  usage,
  customToolUses: [],
  serverToolUses: [{ id: 'h1', name: 'web_search', input: {} }],
});

/** What `toAgUi` alone emits for `envelopes` (and at their end). */
function translate(envelopes: SessionEvent[]): AgUiEvent[] {
  const out: AgUiEvent[] = [];
  const src = new Subject<SessionEvent>();
  src.pipe(toAgUi()).subscribe((ev) => out.push(ev));
  envelopes.forEach((x) => src.next(x));
  src.complete();
  return out;
}

describe('withAgUi', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  });

  describe('when a run goes through', () => {
    it('should pair each AG-UI event with the envelope it was translated from', async () => {
      const [runStarted, msgStart, msgContent, msgEnd, runFinished] = translate([s, t, p, f]);
      await expect(lastValueFrom(from([s, t, p, f]).pipe(withAgUi(), toArray()))).resolves.toEqual([
        { event: runStarted, envelope: s },
        { event: msgStart, envelope: t },
        { event: msgContent, envelope: t },
        { event: msgEnd, envelope: f },
        { event: runFinished, envelope: f },
      ]);
    });
  });

  describe('when a host-run result is held until the turn end announces its call', () => {
    it('should pair the result with the envelope that carried it, not the turn end', async () => {
      const out = await lastValueFrom(from([s, h, e, f]).pipe(withAgUi(), toArray()));
      const result = out.find((x) => x.event.type === 'TOOL_CALL_RESULT');
      expect(result?.envelope).toBe(h);
      expect(out.filter((x) => x.event.type === 'TOOL_CALL_START').map((x) => x.envelope)).toEqual([e]);
    });
  });

  describe('when the source is empty or never emits', () => {
    it('should complete with nothing, or stay silent', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<SessionEvent>('|').pipe(withAgUi())).toBe('|');
        expectObservable(cold<SessionEvent>('-').pipe(withAgUi())).toBe('-');
      });
    });
  });

  describe('when the source completes inside a run', () => {
    it('should pair the synthesized end with no envelope, then complete', async () => {
      const [, , , msgEnd, incomplete] = translate([s, t]);
      const out = await lastValueFrom(from([s, t]).pipe(withAgUi(), toArray()));
      expect(out.map((x) => x.envelope)).toEqual([s, t, t, undefined, undefined]);
      expect(out.slice(3)).toEqual([
        { event: msgEnd, envelope: undefined },
        { event: incomplete, envelope: undefined },
      ]);
    });
  });

  describe('when the source errors mid-run', () => {
    it('should emit the RUN_ERROR toAgUi makes of it with no envelope, then propagate the error', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const out = cold('-s-#', { s }, new Error('drop')).pipe(withAgUi());
        expectObservable(out).toBe(
          '-S-(X#)',
          {
            S: expect.objectContaining({ envelope: s }),
            X: { event: expect.objectContaining({ type: 'RUN_ERROR', code: 'stream_error', message: 'drop' }), envelope: undefined },
          },
          new Error('drop'),
        );
      });
    });
  });

  describe('when unsubscribed early', () => {
    it('should unsubscribe from the source', () => {
      scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const source = hot('-s-t-f-|', { s, t, f });
        expectObservable(source.pipe(withAgUi()), '^--!').toBe('-S-', { S: expect.objectContaining({ envelope: s }) });
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
    });
  });

  describe('when subscribed twice', () => {
    it('should translate each subscription with its own state', async () => {
      const once = from([s, h, e, f]).pipe(withAgUi());
      const a = await lastValueFrom(once.pipe(toArray()));
      const b = await lastValueFrom(once.pipe(toArray()));
      expect(b).toEqual(a);
      expect(a.find((x) => x.event.type === 'TOOL_CALL_RESULT')?.envelope).toBe(h);
    });
  });
});

describe('agUiOf', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  });
  describe('when fed the translation of a session', () => {
    it('should give exactly what toAgUi alone gives', async () => {
      const envelopes = [s, t, p, h, e, f, s, t];
      const flat = await lastValueFrom(from(envelopes).pipe(withAgUi(), agUiOf(), toArray()));
      expect(flat).toEqual(translate(envelopes));
    });
  });

  describe('when the translation errors', () => {
    it('should propagate the error after the events before it', () => {
      const r: AgUiEvent = { type: 'RUN_STARTED', threadId: 't', runId: 'r' };
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<TranslatedEvent>('-a-#', { a: { event: r, envelope: s } }).pipe(agUiOf())).toBe('-r-#', { r });
      });
    });
  });
});
