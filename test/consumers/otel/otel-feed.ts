import type { OtelConsumer } from '../../../src/consumers/otel/otel.consumer.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import type { ToolResultEvent } from '../../../src/core/events/session-event.js';

/** Feeds AG-UI events to one consumer as the consumer hub would, with explicit timestamps. */
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

  at(timestamp: number, ...events: AgUiEvent[]): this {
    for (const ev of events) {
      if (ev.type === 'RUN_STARTED') this.runId = ev.runId;
      this.consumer.onEvent({ ...ev, timestamp }, { sessionId: this.threadId, threadId: this.threadId, runId: this.runId, seq: ++this.seq, at: timestamp });
    }
    return this;
  }
}

export const T0 = 1_700_000_000_000;
export const runStarted = (threadId = 'thread-1', runId = 'run-1'): AgUiEvent => ({ type: 'RUN_STARTED', threadId, runId });
export const toolCall = (id: string, name: string, args: string): AgUiEvent[] => [
  { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: name },
  { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: args },
  { type: 'TOOL_CALL_END', toolCallId: id },
];
export const snapshot = (turn: number, terminal: string, stopReason: unknown, inputTokens = 10, outputTokens = 5): AgUiEvent => ({ type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn, terminal, stopReason, usage: { inputTokens, outputTokens } } });
export const result = (id: string, content: string, rawEvent?: ToolResultEvent): AgUiEvent => ({ type: 'TOOL_CALL_RESULT', messageId: `${id}:result`, toolCallId: id, content, role: 'tool', ...(rawEvent !== undefined ? { rawEvent } : {}) });
export const finished = (turns: number, inputTokens: number, outputTokens: number, terminal = 'end_turn', threadId = 'thread-1', runId = 'run-1'): AgUiEvent => ({
  type: 'RUN_FINISHED',
  threadId,
  runId,
  result: { terminal, stopReason: 'stop', turns, usage: { inputTokens, outputTokens } },
});
export const text = (id: string, delta: string): AgUiEvent[] => [
  { type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta },
];

/** The verbatim `agentrx.tool_result` that toAgUi puts in TOOL_CALL_RESULT.rawEvent. */
export const toolResultRaw = (id: string, name: string, content: string, extra: { isError?: boolean; replayed?: boolean; durationMs?: number } = {}): ToolResultEvent => ({
  type: 'agentrx.tool_result',
  toolUse: { id, name, input: {} },
  result: { toolUseId: id, content, isError: extra.isError ?? false },
  replayed: extra.replayed ?? false,
  durationMs: extra.durationMs ?? 0,
});
