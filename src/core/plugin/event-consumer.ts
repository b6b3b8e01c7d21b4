import type { AgUiEvent } from '../events/agui-event.js';
import type { ToolCallResult } from '../events/tool-call-result.js';

export type { ToolCallResult } from '../events/tool-call-result.js';

/**
 * Extension point for event consumers (the AG-UI consumer contract in TypeScript). Each consumer
 * gets the AG-UI event stream of every session, through its own ordered, bounded queue and error
 * boundary:
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

/** Which session a `stop` is for. */
export interface StopContext {
  readonly sessionId: string | undefined;
  readonly threadId: string;
}

/** Context passed as the last argument of every hook. */
export interface ConsumerContext {
  readonly sessionId: string | undefined;
  readonly threadId: string;
  readonly runId: string;
  /** Monotonic, gap-free per session and consumer (counts AG-UI events). */
  readonly seq: number;
  /** Epoch ms the event was produced. */
  readonly at: number;
}

export interface EventConsumer {
  /** Stable kebab-case id, unique among consumers. */
  readonly id: string;
  /** Called (and awaited) before the consumer's first event of a session. A throw disables it for that session. */
  start?(ctx: { readonly sessionId: string | undefined; readonly threadId: string }): void | Promise<void>;
  /**
   * Called exactly once per successful `start`, after the last event of the session. Time-bounded.
   * `ctx` names the session that ended (one consumer instance serves concurrent sessions).
   */
  stop?(reason: StopReason, ctx: StopContext): void | Promise<void>;
  /** Sees every AG-UI event, before the typed hook for it. */
  onEvent?(event: AgUiEvent, ctx: ConsumerContext): void | Promise<void>;
  onRunStarted?(threadId: string, runId: string, ctx: ConsumerContext): void | Promise<void>;
  onTextStart?(messageId: string, role: string, ctx: ConsumerContext): void | Promise<void>;
  onTextContent?(messageId: string, delta: string, ctx: ConsumerContext): void | Promise<void>;
  onTextEnd?(messageId: string, ctx: ConsumerContext): void | Promise<void>;
  /**
   * A tool call is known (TOOL_CALL_START): a custom tool agentrx runs locally, or one the host
   * runs itself. Calls are announced when their turn ends.
   */
  onToolStart?(toolCallId: string, toolName: string, ctx: ConsumerContext): void | Promise<void>;
  /**
   * One chunk of the call's JSON arguments, as the AG-UI stream carries it (each TOOL_CALL_ARGS);
   * concatenated in order they are the whole arguments. No hook marks the end of the arguments
   * (TOOL_CALL_END): use `onEvent` for it.
   */
  onToolArgs?(toolCallId: string, argsDelta: string, ctx: ConsumerContext): void | Promise<void>;
  /**
   * The execution produced its result (TOOL_CALL_RESULT): `result.value` is what the tool returned
   * (the parsed value when the tool returned JSON, else the text), with the text, `isError`,
   * `hostRun` (the host ran it: a server or MCP tool) and `replayed` (taken from the ledger, not
   * run again). Followed by `onToolEnd`. A call whose execution never reports (the run failed
   * first, a host-run tool its host reports no result for) gets neither hook; a result redriven
   * after a reconnect or a resume may come without an `onToolStart` in the same run.
   */
  onToolResult?(toolCallId: string, result: ToolCallResult, ctx: ConsumerContext): void | Promise<void>;
  /**
   * The execution is over: called right after `onToolResult` settled (or at the result, for a
   * consumer without that hook), for local and host-run tools alike. Skipped when this consumer's
   * `onToolResult` threw or rejected (reported on `consumerErrors$`).
   */
  onToolEnd?(toolCallId: string, ctx: ConsumerContext): void | Promise<void>;
  onStateSnapshot?(snapshot: unknown, ctx: ConsumerContext): void | Promise<void>;
  onRunFinished?(threadId: string, runId: string, ctx: ConsumerContext): void | Promise<void>;
  onError?(message: string, code: string | undefined, ctx: ConsumerContext): void | Promise<void>;
}

/** No-op defaults for every hook; extend it and override what you need. */
export abstract class BaseEventConsumer implements EventConsumer {
  abstract readonly id: string;
  start(_ctx: { readonly sessionId: string | undefined; readonly threadId: string }): void | Promise<void> {}
  stop(_reason: StopReason, _ctx: StopContext): void | Promise<void> {}
  onEvent(_event: AgUiEvent, _ctx: ConsumerContext): void | Promise<void> {}
  onRunStarted(_threadId: string, _runId: string, _ctx: ConsumerContext): void | Promise<void> {}
  onTextStart(_messageId: string, _role: string, _ctx: ConsumerContext): void | Promise<void> {}
  onTextContent(_messageId: string, _delta: string, _ctx: ConsumerContext): void | Promise<void> {}
  onTextEnd(_messageId: string, _ctx: ConsumerContext): void | Promise<void> {}
  onToolStart(_toolCallId: string, _toolName: string, _ctx: ConsumerContext): void | Promise<void> {}
  onToolArgs(_toolCallId: string, _argsDelta: string, _ctx: ConsumerContext): void | Promise<void> {}
  onToolResult(_toolCallId: string, _result: ToolCallResult, _ctx: ConsumerContext): void | Promise<void> {}
  onToolEnd(_toolCallId: string, _ctx: ConsumerContext): void | Promise<void> {}
  onStateSnapshot(_snapshot: unknown, _ctx: ConsumerContext): void | Promise<void> {}
  onRunFinished(_threadId: string, _runId: string, _ctx: ConsumerContext): void | Promise<void> {}
  onError(_message: string, _code: string | undefined, _ctx: ConsumerContext): void | Promise<void> {}
}
