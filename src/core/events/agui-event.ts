import type { JsonPatchOperation } from '@ag-ui/core';

/**
 * AG-UI 1.0 event types (the subset of fields agentrx produces, named exactly as `@ag-ui/core`).
 * Optional fields are omitted, never null.
 */
export const AgUiEventType = {
  RUN_STARTED: 'RUN_STARTED',
  RUN_FINISHED: 'RUN_FINISHED',
  RUN_ERROR: 'RUN_ERROR',
  STEP_STARTED: 'STEP_STARTED',
  STEP_FINISHED: 'STEP_FINISHED',
  TEXT_MESSAGE_START: 'TEXT_MESSAGE_START',
  TEXT_MESSAGE_CONTENT: 'TEXT_MESSAGE_CONTENT',
  TEXT_MESSAGE_END: 'TEXT_MESSAGE_END',
  TOOL_CALL_START: 'TOOL_CALL_START',
  TOOL_CALL_ARGS: 'TOOL_CALL_ARGS',
  TOOL_CALL_END: 'TOOL_CALL_END',
  TOOL_CALL_RESULT: 'TOOL_CALL_RESULT',
  REASONING_START: 'REASONING_START',
  REASONING_MESSAGE_START: 'REASONING_MESSAGE_START',
  REASONING_MESSAGE_CONTENT: 'REASONING_MESSAGE_CONTENT',
  REASONING_MESSAGE_END: 'REASONING_MESSAGE_END',
  REASONING_END: 'REASONING_END',
  STATE_SNAPSHOT: 'STATE_SNAPSHOT',
  STATE_DELTA: 'STATE_DELTA',
  RAW: 'RAW',
  CUSTOM: 'CUSTOM',
} as const;
export type AgUiEventType = (typeof AgUiEventType)[keyof typeof AgUiEventType];

interface Base {
  readonly timestamp?: number;
  readonly rawEvent?: unknown;
}
export interface RunStartedEvent extends Base {
  readonly type: 'RUN_STARTED';
  readonly threadId: string;
  readonly runId: string;
}
export interface RunFinishedEvent extends Base {
  readonly type: 'RUN_FINISHED';
  readonly threadId: string;
  readonly runId: string;
  readonly result?: unknown;
  /**
   * AG-UI 1.0: `success` (with the frontend tool calls left for the client, `pendingToolCallIds`)
   * or `interrupt` (what the run waits for; the client's next run answers with `resume`).
   */
  readonly outcome?:
    { readonly type: 'success'; readonly pendingToolCallIds?: string[] } | { readonly type: 'interrupt'; readonly interrupts: AgUiInterrupt[] };
}
/** Something a run waits for from the client (AG-UI 1.0 `Interrupt`). */
export interface AgUiInterrupt {
  readonly id: string;
  readonly reason: string;
  readonly message?: string;
  readonly toolCallId?: string;
  readonly responseSchema?: Record<string, unknown>;
}
export interface RunErrorEvent extends Base {
  readonly type: 'RUN_ERROR';
  readonly message: string;
  readonly code?: string;
}
export interface StepStartedEvent extends Base {
  readonly type: 'STEP_STARTED';
  readonly stepName: string;
}
export interface StepFinishedEvent extends Base {
  readonly type: 'STEP_FINISHED';
  readonly stepName: string;
}
export interface TextMessageStartEvent extends Base {
  readonly type: 'TEXT_MESSAGE_START';
  readonly messageId: string;
  readonly role: 'assistant';
}
export interface TextMessageContentEvent extends Base {
  readonly type: 'TEXT_MESSAGE_CONTENT';
  readonly messageId: string;
  readonly delta: string;
}
export interface TextMessageEndEvent extends Base {
  readonly type: 'TEXT_MESSAGE_END';
  readonly messageId: string;
}
export interface ToolCallStartEvent extends Base {
  readonly type: 'TOOL_CALL_START';
  readonly toolCallId: string;
  readonly toolCallName: string;
  readonly parentMessageId?: string;
}
export interface ToolCallArgsEvent extends Base {
  readonly type: 'TOOL_CALL_ARGS';
  readonly toolCallId: string;
  readonly delta: string;
}
export interface ToolCallEndEvent extends Base {
  readonly type: 'TOOL_CALL_END';
  readonly toolCallId: string;
}
export interface ToolCallResultEvent extends Base {
  readonly type: 'TOOL_CALL_RESULT';
  readonly messageId: string;
  readonly toolCallId: string;
  readonly content: string;
  readonly role?: 'tool';
}
/** A reasoning span opens (`messageId` names the span; the reasoning message inside it has the same id). */
export interface ReasoningStartEvent extends Base {
  readonly type: 'REASONING_START';
  readonly messageId: string;
}
export interface ReasoningMessageStartEvent extends Base {
  readonly type: 'REASONING_MESSAGE_START';
  readonly messageId: string;
  readonly role: 'reasoning';
}
export interface ReasoningMessageContentEvent extends Base {
  readonly type: 'REASONING_MESSAGE_CONTENT';
  readonly messageId: string;
  readonly delta: string;
}
export interface ReasoningMessageEndEvent extends Base {
  readonly type: 'REASONING_MESSAGE_END';
  readonly messageId: string;
}
export interface ReasoningEndEvent extends Base {
  readonly type: 'REASONING_END';
  readonly messageId: string;
}
export interface StateSnapshotEvent extends Base {
  readonly type: 'STATE_SNAPSHOT';
  readonly snapshot: unknown;
}
/** A change of the shared state as a JSON Patch (RFC 6902), applied to the last snapshot. */
export interface StateDeltaEvent extends Base {
  readonly type: 'STATE_DELTA';
  readonly delta: JsonPatchOperation[];
}
export interface RawAgUiEvent extends Base {
  readonly type: 'RAW';
  readonly event: unknown;
  readonly source?: string;
}
export interface CustomEvent extends Base {
  readonly type: 'CUSTOM';
  readonly name: string;
  readonly value: unknown;
}

export type AgUiEvent =
  | RunStartedEvent
  | RunFinishedEvent
  | RunErrorEvent
  | StepStartedEvent
  | StepFinishedEvent
  | TextMessageStartEvent
  | TextMessageContentEvent
  | TextMessageEndEvent
  | ToolCallStartEvent
  | ToolCallArgsEvent
  | ToolCallEndEvent
  | ToolCallResultEvent
  | ReasoningStartEvent
  | ReasoningMessageStartEvent
  | ReasoningMessageContentEvent
  | ReasoningMessageEndEvent
  | ReasoningEndEvent
  | StateSnapshotEvent
  | StateDeltaEvent
  | RawAgUiEvent
  | CustomEvent;
