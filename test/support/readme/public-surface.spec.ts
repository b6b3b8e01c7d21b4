import * as agentrx from 'agentrx';
import type {
  AgUiEvent,
  AgUiEventType,
  CustomEvent,
  RawAgUiEvent,
  ReasoningEndEvent,
  ReasoningMessageContentEvent,
  ReasoningMessageEndEvent,
  ReasoningMessageStartEvent,
  ReasoningStartEvent,
  RunErrorEvent,
  RunFinishedEvent,
  RunStartedEvent,
  StateSnapshotEvent,
  StateDeltaEvent,
  StepFinishedEvent,
  StepStartedEvent,
  TextMessageContentEvent,
  TextMessageEndEvent,
  TextMessageStartEvent,
  ToolCallArgsEvent,
  ToolCallEndEvent,
  ToolCallResultEvent,
  ToolCallStartEvent,
} from 'agentrx';

/**
 * Every AG-UI event type with the member type `agentrx` exports for it. Keyed by `AgUiEventType`,
 * so a new event type does not compile until its member type is exported and listed here.
 */
interface MemberTypes {
  RUN_STARTED: RunStartedEvent;
  RUN_FINISHED: RunFinishedEvent;
  RUN_ERROR: RunErrorEvent;
  STEP_STARTED: StepStartedEvent;
  STEP_FINISHED: StepFinishedEvent;
  TEXT_MESSAGE_START: TextMessageStartEvent;
  TEXT_MESSAGE_CONTENT: TextMessageContentEvent;
  TEXT_MESSAGE_END: TextMessageEndEvent;
  TOOL_CALL_START: ToolCallStartEvent;
  TOOL_CALL_ARGS: ToolCallArgsEvent;
  TOOL_CALL_END: ToolCallEndEvent;
  TOOL_CALL_RESULT: ToolCallResultEvent;
  REASONING_START: ReasoningStartEvent;
  REASONING_MESSAGE_START: ReasoningMessageStartEvent;
  REASONING_MESSAGE_CONTENT: ReasoningMessageContentEvent;
  REASONING_MESSAGE_END: ReasoningMessageEndEvent;
  REASONING_END: ReasoningEndEvent;
  STATE_SNAPSHOT: StateSnapshotEvent;
  STATE_DELTA: StateDeltaEvent;
  RAW: RawAgUiEvent;
  CUSTOM: CustomEvent;
}
/** `true` for each event type whose union member is exactly the exported member type. */
type Exact<K extends AgUiEventType> = [Extract<AgUiEvent, { type: K }>] extends [MemberTypes[K]]
  ? [MemberTypes[K]] extends [Extract<AgUiEvent, { type: K }>]
    ? true
    : false
  : false;
const everyMember: { [K in AgUiEventType]: Exact<K> } & Record<Exclude<keyof MemberTypes, AgUiEventType>, never> = {
  RUN_STARTED: true,
  RUN_FINISHED: true,
  RUN_ERROR: true,
  STEP_STARTED: true,
  STEP_FINISHED: true,
  TEXT_MESSAGE_START: true,
  TEXT_MESSAGE_CONTENT: true,
  TEXT_MESSAGE_END: true,
  TOOL_CALL_START: true,
  TOOL_CALL_ARGS: true,
  TOOL_CALL_END: true,
  TOOL_CALL_RESULT: true,
  REASONING_START: true,
  REASONING_MESSAGE_START: true,
  REASONING_MESSAGE_CONTENT: true,
  REASONING_MESSAGE_END: true,
  REASONING_END: true,
  STATE_SNAPSHOT: true,
  STATE_DELTA: true,
  RAW: true,
  CUSTOM: true,
};

describe('the agentrx entry point', () => {
  describe('the AG-UI event types', () => {
    it('should export a member type for every event type (checked by the typecheck)', () => {
      expect(Object.keys(everyMember).sort()).toEqual(Object.values(agentrx.AgUiEventType).sort());
    });
  });

  describe('the DI decorators a plugin needs', () => {
    it('should export inject, injectable and optional', () => {
      for (const name of ['inject', 'injectable', 'optional', 'ContainerModule', 'bindPlugin', 'bindProvider'] as const)
        expect(typeof agentrx[name]).toBe('function');
    });
  });
});
