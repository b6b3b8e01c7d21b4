import type { OtelConsumer } from '../../../src/consumers/otel/otel.consumer.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import type { AgentRxEvent, HostToolResultEvent, ToolResultEvent } from '../../../src/core/events/session-event.js';
import type { TurnResult } from '../../../src/core/model.js';
import { dispatch } from '../../../src/core/session/consumer-dispatch.js';

/** An AG-UI event with the typed session event it was translated from, as the consumer hub delivers it. */
export interface Fed {
  readonly agui: AgUiEvent;
  readonly source: AgentRxEvent;
}

/** Feeds events to one consumer as the consumer hub would (`onEvent`, then the typed hook), with explicit timestamps. */
export class Feed {
  private seq = 0;
  runId = 'run-1';
  constructor(
    readonly consumer: OtelConsumer,
    readonly threadId = 'thread-1',
  ) {}

  start(): this {
    this.consumer.start({ sessionId: this.threadId, threadId: this.threadId });
    return this;
  }

  at(timestamp: number, ...items: (AgUiEvent | Fed)[]): this {
    for (const item of items) {
      const { agui, source } = 'agui' in item ? item : { agui: item, source: undefined };
      if (agui.type === 'RUN_STARTED') this.runId = agui.runId;
      const ctx = { sessionId: this.threadId, threadId: this.threadId, runId: this.runId, seq: ++this.seq, at: timestamp, source };
      void dispatch(this.consumer, { ...agui, timestamp }, ctx);
    }
    return this;
  }
}

export const T0 = 1_700_000_000_000;
export const runStarted = (threadId = 'thread-1', runId = 'run-1'): Fed => ({
  agui: { type: 'RUN_STARTED', threadId, runId },
  source: { type: 'agentrx.run_started', threadId, runId, resumed: false },
});
export const toolCall = (id: string, name: string, args: string): AgUiEvent[] => [
  { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: name },
  { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: args },
  { type: 'TOOL_CALL_END', toolCallId: id },
];
/** A turn's end: the CUSTOM `agentrx.turn_end` with its typed `agentrx.turn_end`. */
export const snapshot = (turn: number, terminal: TurnResult['terminal'], stopReason: unknown, inputTokens = 10, outputTokens = 5): Fed => ({
  agui: { type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn, terminal, stopReason, usage: { inputTokens, outputTokens } } },
  source: { type: 'agentrx.turn_end', turn, terminal, stopReason, usage: { inputTokens, outputTokens }, customToolUses: [], serverToolUses: [] },
});
/** A TOOL_CALL_RESULT from `source`; by default a result with no flags beyond its text (as a host-run tool's). */
export const result = (
  id: string,
  content: string,
  source: ToolResultEvent | HostToolResultEvent = { type: 'agentrx.host_tool_result', toolUse: { id }, result: { content, isError: false } },
): Fed => ({
  agui: { type: 'TOOL_CALL_RESULT', messageId: `${id}:result`, toolCallId: id, content, role: 'tool', rawEvent: source },
  source,
});
export const finished = (
  turns: number,
  inputTokens: number,
  outputTokens: number,
  terminal: TurnResult['terminal'] = 'end_turn',
  threadId = 'thread-1',
  runId = 'run-1',
): Fed => ({
  agui: { type: 'RUN_FINISHED', threadId, runId, result: { terminal, stopReason: 'stop', turns, usage: { inputTokens, outputTokens } } },
  source: { type: 'agentrx.run_finished', threadId, runId, terminal, stopReason: 'stop', turns, usage: { inputTokens, outputTokens } },
});
export const text = (id: string, delta: string): AgUiEvent[] => [
  { type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta },
];

/** A local tool's typed result (`agentrx.tool_result`). */
export const toolResultRaw = (
  id: string,
  name: string,
  content: string,
  extra: { isError?: boolean; replayed?: boolean; durationMs?: number } = {},
): ToolResultEvent => ({
  type: 'agentrx.tool_result',
  toolUse: { id, name, input: {} },
  result: { toolUseId: id, content, isError: extra.isError ?? false },
  replayed: extra.replayed ?? false,
  durationMs: extra.durationMs ?? 0,
});
