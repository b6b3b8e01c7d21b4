import type { JsonPatchOperation } from '@ag-ui/core';
import type { AgUiEvent } from '../events/agui-event.js';
import type { AgentRxEvent, AgentRxEventOf, AgentRxEventType, HostToolResultEvent, RunFinished, ToolResultEvent, TurnEnd } from '../events/session-event.js';
import type { ToolCallResult } from '../events/tool-call-result.js';

export type { ToolCallResult } from '../events/tool-call-result.js';

/**
 * Extension point for event consumers (the AG-UI consumer contract in TypeScript). Each consumer
 * gets every session's events, each as its AG-UI event and the typed session event it was
 * translated from, through its own ordered, bounded queue and error boundary:
 * a hook that throws, rejects or never settles is reported on `consumerErrors$` and affects
 * neither the run nor other consumers. Every hook may be async; the next event is delivered
 * only after the previous hook settled (or timed out).
 */
export const EventConsumer = Symbol('EventConsumer');

/** Why a consumer is being stopped. */
export type StopReason = 'completed' | 'error' | 'cancelled' | 'timeout' | 'limit';

/** The stop reason a terminal error code leads to (the Session's mapping, shared with consumers). */
export function stopReasonForCode(code: string): StopReason {
  switch (code) {
    case 'cancelled':
      return 'cancelled';
    case 'timeout':
      return 'timeout';
    case 'max_turns_exceeded':
    case 'halted':
      return 'limit';
    default:
      return 'error';
  }
}

/** Which session a `start` is for. */
export interface StartContext {
  readonly sessionId: string | undefined;
  readonly threadId: string;
}

/** Which session a `stop` is for. */
export interface StopContext {
  readonly sessionId: string | undefined;
  readonly threadId: string;
}

/** Context passed as the last argument of every event hook. */
export interface ConsumerContext {
  readonly sessionId: string | undefined;
  readonly threadId: string;
  readonly runId: string;
  /** Monotonic, gap-free per session and consumer (counts AG-UI events). */
  readonly seq: number;
  /** Epoch ms the event was produced. */
  readonly at: number;
  /**
   * The typed session event the AG-UI event was translated from (`agentrx.text_delta` for a
   * TEXT_MESSAGE_CONTENT, `agentrx.turn_end` for the calls it announces, `agentrx.tool_result` or
   * `agentrx.host_tool_result` for a TOOL_CALL_RESULT, even one held until its call was
   * announced…). Undefined for the RUN_ERROR synthesized when the session's events end without a
   * terminal.
   */
  readonly source: AgentRxEvent | undefined;
}

/** A {@link ConsumerContext} whose `source` is known to be one of the events `E`. */
export type ConsumerContextOf<E extends AgentRxEvent> = ConsumerContext & { readonly source: E };

/** The events a tool result is reported from: a local tool's, or one the host ran itself. */
export type ToolResultSource = ToolResultEvent | HostToolResultEvent;

/** Narrows a context to one whose `source` is an event of `type` (for `onEvent` consumers). */
export function hasSource<T extends AgentRxEventType>(ctx: ConsumerContext, type: T): ctx is ConsumerContextOf<AgentRxEventOf<T>> {
  return ctx.source?.type === type;
}

/**
 * A consumer of session events. Every hook is optional; see {@link BaseEventConsumer} for no-op
 * defaults. For each AG-UI event, `onEvent` is called first, then the typed hook for it.
 */
export interface EventConsumer {
  /** Stable kebab-case id, unique among consumers. */
  readonly id: string;
  /** Called (and awaited) before the consumer's first event of a session. A throw disables it for that session. */
  start?(ctx: StartContext): void | Promise<void>;
  /**
   * Called exactly once per successful `start`, after the last event of the session. Time-bounded.
   * `ctx` names the session that ended (one consumer instance serves concurrent sessions).
   */
  stop?(reason: StopReason, ctx: StopContext): void | Promise<void>;
  /** Sees every AG-UI event (the whole vocabulary), before the typed hook for it. */
  onEvent?(event: AgUiEvent, ctx: ConsumerContext): void | Promise<void>;
  /** A run started (RUN_STARTED): one per `run`, one per message of a live session. */
  onRunStarted?(threadId: string, runId: string, ctx: ConsumerContext): void | Promise<void>;
  /** An assistant text message opens (TEXT_MESSAGE_START). */
  onTextStart?(messageId: string, role: string, ctx: ConsumerContext): void | Promise<void>;
  /** A fragment of assistant text (TEXT_MESSAGE_CONTENT), in order. */
  onTextContent?(messageId: string, delta: string, ctx: ConsumerContext): void | Promise<void>;
  /** The text message is complete (TEXT_MESSAGE_END). */
  onTextEnd?(messageId: string, ctx: ConsumerContext): void | Promise<void>;
  /** A fragment of the model's reasoning (REASONING_MESSAGE_CONTENT); the reasoning span's start and end are in `onEvent`. */
  onReasoningContent?(messageId: string, delta: string, ctx: ConsumerContext): void | Promise<void>;
  /**
   * A tool call is known (TOOL_CALL_START): a custom tool agentrx runs locally, or one the host
   * runs itself. Calls are announced when their turn ends, or at their first streamed fragment.
   */
  onToolStart?(toolCallId: string, toolName: string, ctx: ConsumerContext): void | Promise<void>;
  /**
   * One chunk of the call's JSON arguments, as the AG-UI stream carries it (each TOOL_CALL_ARGS);
   * concatenated in order they are the whole arguments, unless `onToolArgsReplaced` follows.
   */
  onToolArgs?(toolCallId: string, argsDelta: string, ctx: ConsumerContext): void | Promise<void>;
  /** The call's arguments are complete (TOOL_CALL_END); a local tool's execution can start. */
  onToolArgsEnd?(toolCallId: string, ctx: ConsumerContext): void | Promise<void>;
  /**
   * A streamed call runs with other arguments than its chunks spelled out (the turn's end gave its
   * final input): `args` is the JSON text of that input and replaces the chunks. Follows `onToolArgsEnd`.
   */
  onToolArgsReplaced?(toolCallId: string, args: string, ctx: ConsumerContextOf<TurnEnd>): void | Promise<void>;
  /**
   * The execution produced its result (TOOL_CALL_RESULT): `result.value` is what the tool returned
   * (the parsed value when the tool returned JSON, else the text), with the text, `isError`,
   * `hostRun` (the host ran it: a server or MCP tool) and `replayed` (taken from the ledger, not
   * run again); `ctx.source` is the typed result event (a local tool's has its `durationMs`).
   * Followed by `onToolEnd`. A call whose execution never reports (the run failed first, a
   * host-run tool its host reports no result for) gets neither hook; a result redriven after a
   * reconnect or a resume may come without an `onToolStart` in the same run.
   */
  onToolResult?(toolCallId: string, result: ToolCallResult, ctx: ConsumerContextOf<ToolResultSource>): void | Promise<void>;
  /**
   * The execution is over: called right after `onToolResult` settled (or at the result, for a
   * consumer without that hook), for local and host-run tools alike. Skipped when this consumer's
   * `onToolResult` threw or rejected (reported on `consumerErrors$`).
   */
  onToolEnd?(toolCallId: string, ctx: ConsumerContextOf<ToolResultSource>): void | Promise<void>;
  /**
   * A turn closed (the CUSTOM `agentrx.turn_end`, after the calls it announces): its number,
   * terminal, the host's stop reason, its usage and its tool uses.
   */
  onTurnEnd?(turn: TurnEnd, ctx: ConsumerContextOf<TurnEnd>): void | Promise<void>;
  /** The client's state at the start of a request (STATE_SNAPSHOT). */
  onStateSnapshot?(snapshot: unknown, ctx: ConsumerContext): void | Promise<void>;
  /** A tool changed the client's state (STATE_DELTA): a JSON Patch from the last snapshot or delta. */
  onStateDelta?(delta: readonly JsonPatchOperation[], ctx: ConsumerContext): void | Promise<void>;
  /** The run reached its terminal (RUN_FINISHED); `ctx.source` has its terminal, stop reason, turns and summed usage. */
  onRunFinished?(threadId: string, runId: string, ctx: ConsumerContextOf<RunFinished>): void | Promise<void>;
  /** The run failed (RUN_ERROR), with its error code (`timeout`, `cancelled`, `http_error`, …). */
  onError?(message: string, code: string | undefined, ctx: ConsumerContext): void | Promise<void>;
}

/** No-op defaults for every hook; extend it and override what you need. */
export abstract class BaseEventConsumer implements EventConsumer {
  abstract readonly id: string;
  start(_ctx: StartContext): void | Promise<void> {}
  stop(_reason: StopReason, _ctx: StopContext): void | Promise<void> {}
  onEvent(_event: AgUiEvent, _ctx: ConsumerContext): void | Promise<void> {}
  onRunStarted(_threadId: string, _runId: string, _ctx: ConsumerContext): void | Promise<void> {}
  onTextStart(_messageId: string, _role: string, _ctx: ConsumerContext): void | Promise<void> {}
  onTextContent(_messageId: string, _delta: string, _ctx: ConsumerContext): void | Promise<void> {}
  onTextEnd(_messageId: string, _ctx: ConsumerContext): void | Promise<void> {}
  onReasoningContent(_messageId: string, _delta: string, _ctx: ConsumerContext): void | Promise<void> {}
  onToolStart(_toolCallId: string, _toolName: string, _ctx: ConsumerContext): void | Promise<void> {}
  onToolArgs(_toolCallId: string, _argsDelta: string, _ctx: ConsumerContext): void | Promise<void> {}
  onToolArgsEnd(_toolCallId: string, _ctx: ConsumerContext): void | Promise<void> {}
  onToolArgsReplaced(_toolCallId: string, _args: string, _ctx: ConsumerContextOf<TurnEnd>): void | Promise<void> {}
  onToolResult(_toolCallId: string, _result: ToolCallResult, _ctx: ConsumerContextOf<ToolResultSource>): void | Promise<void> {}
  onToolEnd(_toolCallId: string, _ctx: ConsumerContextOf<ToolResultSource>): void | Promise<void> {}
  onTurnEnd(_turn: TurnEnd, _ctx: ConsumerContextOf<TurnEnd>): void | Promise<void> {}
  onStateSnapshot(_snapshot: unknown, _ctx: ConsumerContext): void | Promise<void> {}
  onStateDelta(_delta: readonly JsonPatchOperation[], _ctx: ConsumerContext): void | Promise<void> {}
  onRunFinished(_threadId: string, _runId: string, _ctx: ConsumerContextOf<RunFinished>): void | Promise<void> {}
  onError(_message: string, _code: string | undefined, _ctx: ConsumerContext): void | Promise<void> {}
}
