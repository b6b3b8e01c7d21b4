import { Subject } from 'rxjs';
import { withAgUi, type TranslatedEvent } from '../../../src/core/events/translated-event.js';
import type { AgentRxEvent, SessionEvent } from '../../../src/core/events/session-event.js';
import type { ToolResult, ToolUse } from '../../../src/core/model.js';
import type { ConsumerContext, EventConsumer, ToolCallResult } from '../../../src/core/plugin/event-consumer.js';
import { ConsumerHub, type ConsumerError } from '../../../src/core/session/consumer-hub.js';

const opts = { handlerTimeoutMs: 1000, queueLimit: 100, stopTimeoutMs: 1000 };
const usage = { inputTokens: 1, outputTokens: 1 };
const add: ToolUse = { id: 'tu-1', name: 'add', input: { a: 1, b: 2 } };
const search: ToolUse = { id: 'srv-1', name: 'web_search', input: { q: 'rxjs' } };

const started: AgentRxEvent = { type: 'agentrx.run_started', runId: 'r', threadId: 't', resumed: false };
const finished: AgentRxEvent = { type: 'agentrx.run_finished', runId: 'r', threadId: 't', terminal: 'end_turn', stopReason: 'end_turn', turns: 2, usage };
const turnEnd = (over: { customToolUses?: ToolUse[]; serverToolUses?: ToolUse[] }): AgentRxEvent => ({
  type: 'agentrx.turn_end',
  turn: 1,
  terminal: 'requires_action',
  stopReason: 'requires_action',
  usage,
  customToolUses: over.customToolUses ?? [],
  serverToolUses: over.serverToolUses ?? [],
});
const localResult = (result: Omit<ToolResult, 'toolUseId'>, replayed = false): AgentRxEvent => ({
  type: 'agentrx.tool_result',
  toolUse: add,
  result: { toolUseId: add.id, ...result },
  replayed,
  durationMs: 4,
});
const hostResult = (content: string, isError = false): AgentRxEvent => ({
  type: 'agentrx.host_tool_result',
  toolUse: { id: search.id },
  result: { content, isError },
});

/** Records the typed tool hooks, in call order. */
class ToolHookRecorder implements EventConsumer {
  readonly calls: string[] = [];
  readonly results: ToolCallResult[] = [];
  constructor(readonly id = 'tool-hooks') {}
  onToolStart(id: string, name: string): void {
    this.calls.push(`start:${id}:${name}`);
  }
  onToolArgs(id: string, delta: string): void {
    this.calls.push(`args:${id}:${delta}`);
  }
  onToolResult(id: string, result: ToolCallResult): void {
    this.calls.push(`result:${id}`);
    this.results.push(result);
  }
  onToolEnd(id: string): void {
    this.calls.push(`end:${id}`);
  }
}

/** Feeds agentrx events through `withAgUi` into a hub of `consumers`; resolves once every consumer stopped. */
async function deliver(consumers: EventConsumer[], events: AgentRxEvent[], errors: ConsumerError[] = []): Promise<void> {
  const errors$ = new Subject<ConsumerError>();
  errors$.subscribe((e) => errors.push(e));
  const source = new Subject<SessionEvent>();
  const attachment = new ConsumerHub(consumers, opts, errors$).attach(source.pipe(withAgUi()), () => 's');
  events.forEach((raw, i) => source.next({ seq: i + 1, sessionId: 's', turn: 1, provider: 'scripted', source: 'agentrx', raw, at: 1_000 + i }));
  source.complete();
  await attachment.close('completed');
}

describe('ConsumerHub', () => {
  describe('.attach (tool hooks)', () => {
    describe('when a local tool returns a JSON value', () => {
      const recorder = new ToolHookRecorder();
      const errors: ConsumerError[] = [];
      beforeAll(() =>
        deliver([recorder], [started, turnEnd({ customToolUses: [add] }), localResult({ content: '{"sum":3}', isError: false, json: true }), finished], errors),
      );

      it('should call start, the arguments as streamed, the result, and end only after the result', () => {
        expect(recorder.calls).toEqual(['start:tu-1:add', 'args:tu-1:{"a":1,"b":2}', 'result:tu-1', 'end:tu-1']);
        expect(errors).toEqual([]);
      });

      it('should give the result as the value the tool returned, with its text and flags', () => {
        expect(recorder.results[0]).toMatchObject({ value: { sum: 3 }, content: '{"sum":3}', isError: false, hostRun: false, replayed: false });
      });
    });

    describe('when a local tool fails', () => {
      it('should report isError with the error text as the value', async () => {
        const recorder = new ToolHookRecorder();
        await deliver([recorder], [started, turnEnd({ customToolUses: [add] }), localResult({ content: 'boom', isError: true }), finished]);
        expect(recorder.calls).toEqual(['start:tu-1:add', 'args:tu-1:{"a":1,"b":2}', 'result:tu-1', 'end:tu-1']);
        expect(recorder.results[0]).toMatchObject({ value: 'boom', content: 'boom', isError: true, hostRun: false, replayed: false });
      });
    });

    describe('when a result is replayed from the ledger', () => {
      it('should say so, and still end the execution after the result', async () => {
        const recorder = new ToolHookRecorder();
        await deliver([recorder], [started, localResult({ content: '{"sum":3}', isError: false, json: true }, true), finished]);
        expect(recorder.calls).toEqual(['result:tu-1', 'end:tu-1']);
        expect(recorder.results[0]).toMatchObject({ value: { sum: 3 }, isError: false, hostRun: false, replayed: true });
      });
    });

    describe('when a result is marked JSON but its text does not parse', () => {
      it('should give the text as the value', async () => {
        const recorder = new ToolHookRecorder();
        await deliver([recorder], [started, localResult({ content: '{not json', isError: false, json: true }), finished]);
        expect(recorder.results[0]?.value).toBe('{not json');
      });
    });

    describe('when a tool returned a string that looks like JSON', () => {
      it('should give the string, not a parsed value (no json flag)', async () => {
        const recorder = new ToolHookRecorder();
        await deliver([recorder], [started, localResult({ content: '42', isError: false }), finished]);
        expect(recorder.results[0]?.value).toBe('42');
      });
    });

    describe('when a host-run tool reports its result before the turn end announces the call', () => {
      it('should call start, args, then the result with hostRun, then end', async () => {
        const recorder = new ToolHookRecorder();
        await deliver([recorder], [started, hostResult('permission denied', true), turnEnd({ serverToolUses: [search] }), finished]);
        expect(recorder.calls).toEqual(['start:srv-1:web_search', 'args:srv-1:{"q":"rxjs"}', 'result:srv-1', 'end:srv-1']);
        expect(recorder.results[0]).toEqual({ value: 'permission denied', content: 'permission denied', isError: true, hostRun: true, replayed: false });
      });
    });

    describe('when a host-run tool reports no result', () => {
      it('should call start and args only: its execution is never reported over', async () => {
        const recorder = new ToolHookRecorder();
        await deliver([recorder], [started, turnEnd({ serverToolUses: [search] }), finished]);
        expect(recorder.calls).toEqual(['start:srv-1:web_search', 'args:srv-1:{"q":"rxjs"}']);
      });
    });

    describe('when onToolResult is async', () => {
      it('should call onToolEnd only once it settled', async () => {
        const calls: string[] = [];
        let release!: () => void;
        const consumer: EventConsumer = {
          id: 'async',
          onToolResult: () =>
            new Promise<void>((r) => {
              calls.push('result:begun');
              release = () => {
                calls.push('result:settled');
                r();
              };
            }),
          onToolEnd: (id) => void calls.push(`end:${id}`),
        };
        const source = new Subject<SessionEvent>();
        const attachment = new ConsumerHub([consumer], opts, new Subject()).attach(source.pipe(withAgUi()), () => 's');
        [started, localResult({ content: 'ok', isError: false }), finished].forEach((raw, i) =>
          source.next({ seq: i + 1, sessionId: 's', turn: 1, provider: 'p', source: 'agentrx', raw, at: i }),
        );
        expect(calls).toEqual(['result:begun']);
        release();
        await attachment.close('completed');
        expect(calls).toEqual(['result:begun', 'result:settled', 'end:tu-1']);
      });
    });

    describe('when consumers read and change the value', () => {
      it('should give each consumer its own copy, and still end the execution for a consumer without onToolResult', async () => {
        const a = new ToolHookRecorder('a');
        const b = new ToolHookRecorder('b');
        const ends: string[] = [];
        const endOnly: EventConsumer = { id: 'end-only', onToolEnd: (id) => void ends.push(id) };
        await deliver([a, b, endOnly], [started, localResult({ content: '{"sum":3}', isError: false, json: true }), finished]);
        (a.results[0]!.value as { sum: number }).sum = 99;
        expect(a.results[0]!.value).toEqual({ sum: 99 });
        expect(b.results[0]!.value).toEqual({ sum: 3 });
        expect(ends).toEqual(['tu-1']);
      });
    });

    describe('when a TOOL_CALL_RESULT comes without its typed result event (a translation made by hand)', () => {
      it('should show it to onEvent only: no result value is made up from its text', async () => {
        const recorder = new ToolHookRecorder();
        const seen: string[] = [];
        const witness: EventConsumer = { id: 'witness', onEvent: (ev) => void seen.push(ev.type) };
        const source = new Subject<TranslatedEvent>();
        const attachment = new ConsumerHub([recorder, witness], opts, new Subject()).attach(source, () => 's');
        source.next({ envelope: undefined, event: { type: 'RUN_STARTED', threadId: 't', runId: 'r' } });
        source.next({
          envelope: undefined,
          event: { type: 'TOOL_CALL_RESULT', messageId: 'm', toolCallId: 'x', content: '{"a":1}', rawEvent: { type: 'agentrx.tool_result' } },
        });
        await attachment.close('completed');
        expect(seen).toEqual(['RUN_STARTED', 'TOOL_CALL_RESULT']);
        expect(recorder.calls).toEqual([]);
      });
    });

    describe('when TOOL_CALL_END arrives', () => {
      it('should call onToolArgsEnd, not onToolEnd (the arguments are complete, the execution is not over)', async () => {
        const recorder = new ToolHookRecorder();
        const seen: string[] = [];
        const ctxs: ConsumerContext[] = [];
        const both: EventConsumer = {
          id: 'both',
          onEvent: (ev, ctx) => {
            seen.push(ev.type);
            ctxs.push(ctx);
          },
          onToolArgsEnd: (id) => void seen.push(`onToolArgsEnd:${id}`),
          onToolEnd: (id) => void seen.push(`onToolEnd:${id}`),
        };
        await deliver([recorder, both], [started, turnEnd({ customToolUses: [add] }), finished]);
        expect(recorder.calls).toEqual(['start:tu-1:add', 'args:tu-1:{"a":1,"b":2}']);
        expect(seen).toEqual(['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'onToolArgsEnd:tu-1', 'CUSTOM', 'RUN_FINISHED']);
        expect(ctxs.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      });
    });
  });
});
