import type { RawEvent, ToolResult, ToolUse, TurnResult, Usage } from '../model.js';

/**
 * The envelope every event of a session travels in. `seq` is gap-free and monotonic per session;
 * provider events whose `id` was already ingested never get an envelope.
 */
export interface SessionEvent<R extends RawEvent = RawEvent> {
  readonly seq: number;
  readonly sessionId: string | undefined;
  /** 1-based turn number within the current request (0 before the first turn). */
  readonly turn: number;
  /** Provider id. */
  readonly provider: string;
  /** `provider` for host events (verbatim in `raw`); `agentrx` for events the Session synthesizes. */
  readonly source: 'provider' | 'agentrx';
  /** Provider event id (dedupe key), when it has one. */
  readonly id?: string;
  readonly raw: R;
  /** Epoch ms at ingestion. */
  readonly at: number;
}

/** Events the Session synthesizes (`source: 'agentrx'`). Their `type` values are prefixed `agentrx.`. */
export type AgentRxEvent =
  | { readonly type: 'agentrx.run_started'; readonly runId: string; readonly threadId: string; readonly resumed: boolean }
  | { readonly type: 'agentrx.text_delta'; readonly text: string; readonly messageId: string }
  | { readonly type: 'agentrx.turn_end'; readonly turn: number; readonly terminal: TurnResult['terminal']; readonly stopReason: unknown; readonly usage: Usage; readonly customToolUses: readonly ToolUse[]; readonly serverToolUses: readonly ToolUse[] }
  | { readonly type: 'agentrx.tool_started'; readonly toolUse: ToolUse }
  | { readonly type: 'agentrx.tool_result'; readonly toolUse: ToolUse; readonly result: ToolResult; readonly replayed: boolean; readonly durationMs: number }
  | { readonly type: 'agentrx.reconnecting'; readonly attempt: number; readonly delayMs: number; readonly reason: string }
  | { readonly type: 'agentrx.reconnected'; readonly attempt: number; readonly missed: number; readonly pending: number }
  | { readonly type: 'agentrx.reprompt'; readonly attempt: number; readonly text: string }
  /** The host waits for the caller to allow or deny these tool uses of its own (no `confirmTool` option: answer with `sendEvent`). */
  | { readonly type: 'agentrx.confirmation_required'; readonly toolUses: readonly ToolUse[] }
  /** The `confirmTool` option decided on a host-run tool use; the decision is being posted. */
  | { readonly type: 'agentrx.tool_confirmation'; readonly toolUse: ToolUse; readonly allow: boolean; readonly denyMessage?: string }
  | { readonly type: 'agentrx.diagnostic'; readonly message: string }
  | { readonly type: 'agentrx.run_finished'; readonly runId: string; readonly threadId: string; readonly terminal: TurnResult['terminal']; readonly stopReason: unknown; readonly turns: number; readonly usage: Usage }
  | { readonly type: 'agentrx.run_error'; readonly runId: string; readonly threadId: string; readonly code: string; readonly message: string };

export type AgentRxEventType = AgentRxEvent['type'];

/** Narrows an envelope to a synthesized event of the given type. */
export function isAgentRxEvent<T extends AgentRxEventType>(
  env: SessionEvent,
  type: T,
): env is SessionEvent<Extract<AgentRxEvent, { type: T }> & RawEvent> {
  return env.source === 'agentrx' && env.raw['type'] === type;
}

/** An event before the Session stamps it with `seq`, `sessionId`, `provider` and `at`. */
export interface EventDraft {
  readonly source: 'provider' | 'agentrx';
  readonly id?: string;
  readonly raw: RawEvent;
  readonly turn: number;
}
