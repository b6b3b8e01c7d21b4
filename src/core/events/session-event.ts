import type { JsonPatchOperation } from '@ag-ui/core';
import type { RawEvent, ToolResult, ToolUse, TurnResult, Usage } from '../model.js';

/** What every envelope carries, whatever its source. */
interface EnvelopeBase {
  /** Gap-free and monotonic per session. */
  readonly seq: number;
  readonly sessionId: string | undefined;
  /** 1-based turn number within the current request (0 before the first turn). */
  readonly turn: number;
  /** Provider id. */
  readonly provider: string;
  /** Epoch ms at ingestion. */
  readonly at: number;
}

/** A host event, verbatim in `raw`. Events whose `id` was already ingested never get an envelope. */
export interface ProviderEnvelope extends EnvelopeBase {
  readonly source: 'provider';
  /** Provider event id (dedupe key), when it has one. */
  readonly id?: string;
  readonly raw: RawEvent;
}

/** An event the Session synthesizes, typed in `raw`. */
export interface AgentRxEnvelope<E extends AgentRxEvent = AgentRxEvent> extends EnvelopeBase {
  readonly source: 'agentrx';
  readonly raw: E;
}

/**
 * The envelope every event of a session travels in, told apart by `source`: `provider` for host
 * events (verbatim), `agentrx` for the typed events the Session synthesizes.
 */
export type SessionEvent = ProviderEnvelope | AgentRxEnvelope;

/** A request began (one per `run`, one per message of a live session). */
export interface RunStarted {
  readonly type: 'agentrx.run_started';
  readonly runId: string;
  readonly threadId: string;
  readonly resumed: boolean;
}
/** Normalized assistant text, right after the host event that carried it. */
export interface TextDelta {
  readonly type: 'agentrx.text_delta';
  readonly text: string;
  readonly messageId: string;
}
/**
 * A fragment of a tool call's arguments as the host streams them, right after the host event that
 * carried it (a `tool_call_delta` its provider decoded). The turn's `agentrx.turn_end` still carries the
 * call whole (its final input); `toAgUi` opens the call at its first delta.
 */
export interface ToolCallDelta {
  readonly type: 'agentrx.tool_call_delta';
  /** The id the turn's end and the tool's result use for this call. */
  readonly toolUseId: string;
  /** The tool's name; present at least on the call's first delta. */
  readonly name?: string;
  /** The next fragment of the arguments' JSON text (may be empty: the call is known, no argument yet). */
  readonly argsDelta: string;
  /** The assistant message the call belongs to (the `messageId` of its text deltas), when the host says. */
  readonly parentMessageId?: string;
}
/** The model's reasoning text (OpenAI-compatible `reasoning_content`), right after the host event that carried it. */
export interface ReasoningDelta {
  readonly type: 'agentrx.reasoning_delta';
  readonly text: string;
  readonly messageId: string;
}
/** A turn closed; its tool uses (custom and host-run) are final here. */
export interface TurnEnd {
  readonly type: 'agentrx.turn_end';
  readonly turn: number;
  readonly terminal: TurnResult['terminal'];
  readonly stopReason: unknown;
  readonly usage: Usage;
  readonly customToolUses: readonly ToolUse[];
  readonly serverToolUses: readonly ToolUse[];
}
/** A custom tool is about to run locally. */
export interface ToolStarted {
  readonly type: 'agentrx.tool_started';
  readonly toolUse: ToolUse;
}
/** A custom tool's result (`replayed`: taken from the ledger, not run again). */
export interface ToolResultEvent {
  readonly type: 'agentrx.tool_result';
  readonly toolUse: ToolUse;
  readonly result: ToolResult;
  readonly replayed: boolean;
  readonly durationMs: number;
}
/**
 * The result of a tool the host ran itself (a server tool, an MCP tool run by the host), right
 * after the host event that carried it (a `host_tool_result` its provider decoded). The call itself is
 * announced by the turn's `agentrx.turn_end` (`serverToolUses`), usually after its result.
 */
export interface HostToolResultEvent {
  readonly type: 'agentrx.host_tool_result';
  /** The host's tool use id; `name` when the host event names the tool. */
  readonly toolUse: { readonly id: string; readonly name?: string };
  /** The result text the model reads; `isError` as the host reported it. */
  readonly result: { readonly content: string; readonly isError: boolean };
}
/**
 * The agent's state at the start of a request (the session's `state`, as a client such as an
 * AG-UI page sent it): a JSON object, shared with tools (`ctx.state`).
 */
export interface StateSnapshot {
  readonly type: 'agentrx.state_snapshot';
  readonly snapshot: Readonly<Record<string, unknown>>;
}
/** A tool changed the agent's state: the change as a JSON Patch (RFC 6902), from the last snapshot or delta. */
export interface StateDelta {
  readonly type: 'agentrx.state_delta';
  readonly delta: readonly JsonPatchOperation[];
}
/** The stream dropped; the Session re-attaches after `delayMs`. */
export interface Reconnecting {
  readonly type: 'agentrx.reconnecting';
  readonly attempt: number;
  readonly delayMs: number;
  readonly reason: string;
}
/** The stream is back and the missed history was fed. */
export interface ReconnectedEvent {
  readonly type: 'agentrx.reconnected';
  readonly attempt: number;
  readonly missed: number;
  readonly pending: number;
}
/** `requireTerminalTool` re-prompted after an `end_turn` without the terminal tool. */
export interface Reprompt {
  readonly type: 'agentrx.reprompt';
  readonly attempt: number;
  readonly text: string;
}
/** The host waits for the caller to allow or deny these tool uses of its own (no `confirmTool` option: answer with `sendEvent`). */
export interface ConfirmationRequired {
  readonly type: 'agentrx.confirmation_required';
  readonly toolUses: readonly ToolUse[];
}
/** The `confirmTool` option decided on a host-run tool use; the decision is being posted. */
export interface ToolConfirmationEvent {
  readonly type: 'agentrx.tool_confirmation';
  readonly toolUse: ToolUse;
  readonly allow: boolean;
  readonly denyMessage?: string;
}
/** Something worth reporting that is not an event (a bad frame, an input held back…). */
export interface Diagnostic {
  readonly type: 'agentrx.diagnostic';
  readonly message: string;
}
/** A request reached its terminal. */
export interface RunFinished {
  readonly type: 'agentrx.run_finished';
  readonly runId: string;
  readonly threadId: string;
  readonly terminal: TurnResult['terminal'];
  readonly stopReason: unknown;
  readonly turns: number;
  readonly usage: Usage;
  /** With `outputSchema`: the validated final answer, as JSON (`result.output`). */
  readonly output?: unknown;
}
/** The session failed (the request's terminal when it did not finish). */
export interface RunError {
  readonly type: 'agentrx.run_error';
  readonly runId: string;
  readonly threadId: string;
  readonly code: string;
  readonly message: string;
}

/** Events the Session synthesizes (`source: 'agentrx'`), a union on `type` (each prefixed `agentrx.`). */
export type AgentRxEvent =
  | RunStarted
  | TextDelta
  | ReasoningDelta
  | ToolCallDelta
  | TurnEnd
  | ToolStarted
  | ToolResultEvent
  | HostToolResultEvent
  | StateSnapshot
  | StateDelta
  | Reconnecting
  | ReconnectedEvent
  | Reprompt
  | ConfirmationRequired
  | ToolConfirmationEvent
  | Diagnostic
  | RunFinished
  | RunError;

export type AgentRxEventType = AgentRxEvent['type'];

/** The member of {@link AgentRxEvent} with type `T`. */
export type AgentRxEventOf<T extends AgentRxEventType> = Extract<AgentRxEvent, { type: T }>;

/** Narrows an envelope to a synthesized event of the given type. */
export function isAgentRxEvent<T extends AgentRxEventType>(env: SessionEvent, type: T): env is AgentRxEnvelope<AgentRxEventOf<T>> {
  return env.source === 'agentrx' && env.raw.type === type;
}

/** An event before the Session stamps it with `seq`, `sessionId`, `provider` and `at`. */
export type EventDraft =
  | { readonly source: 'provider'; readonly id?: string; readonly raw: RawEvent; readonly turn: number }
  | { readonly source: 'agentrx'; readonly raw: AgentRxEvent; readonly turn: number };
