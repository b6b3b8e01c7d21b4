import type { Outcome, RawEvent, ToolResult } from '../../../core/model.js';

/**
 * Wire facts of Claude Managed Agents (beta `managed-agents-2026-04-01`), as the official
 * `@anthropic-ai/sdk` types describe them: header values, event type names and builders for the
 * user events agentrx sends. Everything here is pure and allocation-only.
 */

/** `anthropic-beta` value every Managed Agents request carries. */
export const CMA_BETA = 'managed-agents-2026-04-01';

/** `anthropic-version` value every request carries. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** A decoded JSON object, kept verbatim. */
export type WireMap = Record<string, unknown>;

/** Event types the provider interprets; every other type passes through untouched. */
export const CmaEventType = {
  agentMessage: 'agent.message',
  agentCustomToolUse: 'agent.custom_tool_use',
  agentToolUse: 'agent.tool_use',
  agentMcpToolUse: 'agent.mcp_tool_use',
  agentToolResult: 'agent.tool_result',
  agentMcpToolResult: 'agent.mcp_tool_result',
  userMessage: 'user.message',
  userCustomToolResult: 'user.custom_tool_result',
  userDefineOutcome: 'user.define_outcome',
  userInterrupt: 'user.interrupt',
  userToolConfirmation: 'user.tool_confirmation',
  statusIdle: 'session.status_idle',
  statusTerminated: 'session.status_terminated',
  sessionError: 'session.error',
  sessionDeleted: 'session.deleted',
  modelRequestEnd: 'span.model_request_end',
  outcomeEvaluationEnd: 'span.outcome_evaluation_end',
  eventStart: 'event_start',
  eventDelta: 'event_delta',
} as const;

/** True for a plain JSON object (not null, not an array). */
export function isMap(v: unknown): v is WireMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The string `type` of an event, or undefined. */
export function typeOf(event: RawEvent | undefined): string | undefined {
  const t = event?.['type'];
  return typeof t === 'string' ? t : undefined;
}

/** The string `id` of an event, or undefined. */
export function idOf(event: RawEvent | undefined): string | undefined {
  const id = event?.['id'];
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}

/** `user.message` with one text block. */
export function userMessageEvent(text: string): WireMap {
  return { type: CmaEventType.userMessage, content: [{ type: 'text', text }] };
}

/** `user.custom_tool_result` answering `result.toolUseId` (`is_error` as returned). */
export function customToolResultEvent(result: ToolResult): WireMap {
  return {
    type: CmaEventType.userCustomToolResult,
    custom_tool_use_id: result.toolUseId,
    content: [{ type: 'text', text: result.content }],
    is_error: result.isError,
  };
}

/** `user.define_outcome` with a text rubric; `max_iterations` only when set (never null). */
export function defineOutcomeEvent(outcome: Outcome): WireMap {
  return {
    type: CmaEventType.userDefineOutcome,
    description: outcome.description,
    rubric: { type: 'text', content: outcome.rubric },
    ...(outcome.maxIterations !== undefined ? { max_iterations: outcome.maxIterations } : {}),
  };
}

/** `user.interrupt` for every thread of the session. */
export function interruptEvent(): WireMap {
  return { type: CmaEventType.userInterrupt };
}

/** `user.tool_confirmation` approving or denying a pending server or MCP tool use (`deny_message` only with a deny). */
export function toolConfirmationEvent(toolUseId: string, result: 'allow' | 'deny', denyMessage?: string): WireMap {
  return {
    type: CmaEventType.userToolConfirmation,
    tool_use_id: toolUseId,
    result,
    ...(result === 'deny' && denyMessage ? { deny_message: denyMessage } : {}),
  };
}

/** Shortens text for a message. */
export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}

/**
 * The human-readable message of an Anthropic error body (`{type:'error', error:{type, message}}`),
 * or of anything else that carries one; falls back to the raw text, truncated.
 */
export function errorMessageOf(body: unknown): string {
  if (typeof body === 'string') {
    try {
      return errorMessageOf(JSON.parse(body));
    } catch {
      return truncate(body, 300);
    }
  }
  if (!isMap(body)) return '';
  const err = body['error'];
  if (isMap(err) && typeof err['message'] === 'string') return err['message'];
  if (typeof err === 'string') return err;
  if (typeof body['message'] === 'string') return body['message'];
  return truncate(JSON.stringify(body), 300);
}

/** The `error.type` of an Anthropic error body, if any. */
export function errorTypeOf(body: unknown): string | undefined {
  if (typeof body === 'string') {
    try {
      return errorTypeOf(JSON.parse(body));
    } catch {
      return undefined;
    }
  }
  if (!isMap(body)) return undefined;
  const err = body['error'];
  return isMap(err) && typeof err['type'] === 'string' ? err['type'] : undefined;
}
