import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import type { AgentRxEvent, RunFinished, TurnEnd } from '../../../src/core/events/session-event.js';
import type { ConsumerContext, ConsumerContextOf, EventConsumer, ToolResultSource } from '../../../src/core/plugin/event-consumer.js';
import { HubFeed } from '../../consumers/feed-hub.js';

const usage = { inputTokens: 3, outputTokens: 2 };
const started: AgentRxEvent = { type: 'agentrx.run_started', runId: 'r', threadId: 't', resumed: false };
const text: AgentRxEvent = { type: 'agentrx.text_delta', text: 'hi', messageId: 'm' };
const reasoning: AgentRxEvent = { type: 'agentrx.reasoning_delta', text: 'hmm', messageId: 'x' };
const streamed: AgentRxEvent = { type: 'agentrx.tool_call_delta', toolUseId: 'a', name: 'read_file', argsDelta: '{"path":"draft.txt"}' };
const hostResult: AgentRxEvent = { type: 'agentrx.host_tool_result', toolUse: { id: 'h' }, result: { content: 'three hits', isError: false } };
const turnEnd: TurnEnd = {
  type: 'agentrx.turn_end',
  turn: 1,
  terminal: 'requires_action',
  stopReason: 'tool_calls',
  usage,
  customToolUses: [{ id: 'a', name: 'read_file', input: { path: 'a.txt' } }],
  serverToolUses: [{ id: 'h', name: 'web_search', input: { q: 'rx' } }],
};
const stateDelta: AgentRxEvent = { type: 'agentrx.state_delta', delta: [{ op: 'replace', path: '/count', value: 2 }] };
const finished: RunFinished = { type: 'agentrx.run_finished', runId: 'r', threadId: 't', terminal: 'end_turn', stopReason: 'end_turn', turns: 1, usage };

/** Records every hook with what it was given. */
class TypedRecorder implements EventConsumer {
  readonly id = 'typed';
  readonly calls: string[] = [];
  readonly sources: [string, string | undefined][] = [];
  readonly turns: TurnEnd[] = [];
  readonly outcomes: RunFinished[] = [];
  readonly resultSources: ToolResultSource[] = [];
  onEvent(ev: AgUiEvent, ctx: ConsumerContext): void {
    this.sources.push([ev.type, ctx.source?.type]);
  }
  onReasoningContent(messageId: string, delta: string): void {
    this.calls.push(`reasoning:${messageId}:${delta}`);
  }
  onToolArgsEnd(toolCallId: string): void {
    this.calls.push(`argsEnd:${toolCallId}`);
  }
  onToolArgsReplaced(toolCallId: string, args: string, ctx: ConsumerContextOf<TurnEnd>): void {
    this.calls.push(`argsReplaced:${toolCallId}:${args}:turn ${ctx.source.turn}`);
  }
  onToolResult(toolCallId: string, _result: unknown, ctx: ConsumerContextOf<ToolResultSource>): void {
    this.calls.push(`result:${toolCallId}`);
    this.resultSources.push(ctx.source);
  }
  onTurnEnd(turn: TurnEnd): void {
    this.calls.push(`turnEnd:${turn.turn}`);
    this.turns.push(turn);
  }
  onStateDelta(delta: readonly unknown[]): void {
    this.calls.push(`stateDelta:${JSON.stringify(delta)}`);
  }
  onRunFinished(_threadId: string, runId: string, ctx: ConsumerContextOf<RunFinished>): void {
    this.calls.push(`finished:${runId}`);
    this.outcomes.push(ctx.source);
  }
  onError(message: string, code: string | undefined, ctx: ConsumerContext): void {
    this.calls.push(`error:${code}:${message}:${ctx.source?.type}`);
  }
}

describe('ConsumerHub', () => {
  describe('.attach (typed hooks)', () => {
    describe('when a run reasons, streams a call, holds a host-run result and changes the state', () => {
      const rec = new TypedRecorder();
      beforeAll(() => new HubFeed([rec]).push(started, reasoning, text, streamed, hostResult, turnEnd, stateDelta, finished).close());

      it('should call each typed hook with the typed event it describes', () => {
        expect(rec.calls).toEqual([
          'reasoning:x:hmm',
          'argsEnd:a',
          'argsReplaced:a:{"path":"a.txt"}:turn 1',
          'argsEnd:h',
          'result:h',
          'turnEnd:1',
          'stateDelta:[{"op":"replace","path":"/count","value":2}]',
          'finished:r',
        ]);
        expect(rec.turns).toEqual([turnEnd]);
        expect(rec.outcomes).toEqual([finished]);
      });

      it('should give the held host-run result the event that carried it as its source, not the turn end that released it', () => {
        expect(rec.resultSources).toEqual([hostResult]);
        expect(rec.sources.filter(([type]) => type === 'TOOL_CALL_RESULT')).toEqual([['TOOL_CALL_RESULT', 'agentrx.host_tool_result']]);
      });

      it('should give every AG-UI event the envelope it was translated from as its source', () => {
        expect(rec.sources).toEqual([
          ['RUN_STARTED', 'agentrx.run_started'],
          ['REASONING_START', 'agentrx.reasoning_delta'],
          ['REASONING_MESSAGE_START', 'agentrx.reasoning_delta'],
          ['REASONING_MESSAGE_CONTENT', 'agentrx.reasoning_delta'],
          ['REASONING_MESSAGE_END', 'agentrx.text_delta'],
          ['REASONING_END', 'agentrx.text_delta'],
          ['TEXT_MESSAGE_START', 'agentrx.text_delta'],
          ['TEXT_MESSAGE_CONTENT', 'agentrx.text_delta'],
          ['TOOL_CALL_START', 'agentrx.tool_call_delta'],
          ['TOOL_CALL_ARGS', 'agentrx.tool_call_delta'],
          ['TEXT_MESSAGE_END', 'agentrx.turn_end'],
          ['TOOL_CALL_END', 'agentrx.turn_end'],
          ['CUSTOM', 'agentrx.turn_end'],
          ['TOOL_CALL_START', 'agentrx.turn_end'],
          ['TOOL_CALL_ARGS', 'agentrx.turn_end'],
          ['TOOL_CALL_END', 'agentrx.turn_end'],
          ['TOOL_CALL_RESULT', 'agentrx.host_tool_result'],
          ['CUSTOM', 'agentrx.turn_end'],
          ['STATE_DELTA', 'agentrx.state_delta'],
          ['RUN_FINISHED', 'agentrx.run_finished'],
        ]);
      });
    });

    describe('when the run fails with a code', () => {
      it('should call onError with the code and the typed run error as source', async () => {
        const rec = new TypedRecorder();
        await new HubFeed([rec]).push(started, { type: 'agentrx.run_error', runId: 'r', threadId: 't', code: 'timeout', message: 'too slow' }).close('timeout');
        expect(rec.calls).toEqual(['error:timeout:too slow:agentrx.run_error']);
      });
    });

    describe("when the session's events end inside a run", () => {
      it('should call onError for the synthesized terminal, with no source', async () => {
        const rec = new TypedRecorder();
        await new HubFeed([rec]).push(started, text).close('error');
        expect(rec.calls).toEqual(['error:incomplete:event stream ended without a terminal event:undefined']);
      });
    });

    describe('when a host-run result never gets its call announced', () => {
      it("should forget it at the run's end: a later run's result of the same id is its own", async () => {
        const rec = new TypedRecorder();
        const second: AgentRxEvent = { type: 'agentrx.host_tool_result', toolUse: { id: 'h' }, result: { content: 'second', isError: true } };
        const announce: TurnEnd = { ...turnEnd, customToolUses: [] };
        await new HubFeed([rec]).push(started, hostResult, finished, started, second, announce, finished).close();
        expect(rec.resultSources).toEqual([second]);
      });
    });
  });
});
