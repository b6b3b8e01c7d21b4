import { AgentRxError } from '../../core/errors.js';
import type { AgUiInterrupt } from '../../core/events/agui-event.js';
import type { ToolConfirmation, ToolUse } from '../../core/model.js';
import type { AgUiResumeEntry } from './agui-http.input.js';

/** The interrupt reason of a tool the agent asks the client to allow (AG-UI 1.0 `Interrupt.reason`). */
export const TOOL_CONFIRMATION_REASON = 'tool_confirmation';

/** The answer a `tool_confirmation` interrupt asks for: `resume[].payload`. */
const CONFIRMATION_SCHEMA = {
  type: 'object',
  properties: { allow: { type: 'boolean' }, denyMessage: { type: 'string' } },
  required: ['allow'],
};

/** The deny message posted when the client cancels a confirmation instead of answering it. */
const DISMISSED = 'the user dismissed the request to run this tool';

/** One AG-UI interrupt per tool use waiting for the client's decision (its id is the tool use id). */
export function confirmationInterrupts(toolUses: readonly ToolUse[]): AgUiInterrupt[] {
  return toolUses.map((u) => ({
    id: u.id,
    reason: TOOL_CONFIRMATION_REASON,
    message: `Allow the agent to run '${u.name}' with ${JSON.stringify(u.input ?? {}).slice(0, 500)}?`,
    toolCallId: u.id,
    responseSchema: CONFIRMATION_SCHEMA,
  }));
}

/**
 * The `user.tool_confirmation` events that answer `waiting` (by interrupt id) with the client's
 * `resume` entries: allowed only for `resolved` with `payload` `true` or `{ allow: true }`; a
 * `cancelled` entry denies with a "dismissed" message. Throws `invalid_options` unless the entries
 * answer exactly the waiting interrupts of thread `threadId`.
 */
export function confirmationAnswers(threadId: string, waiting: ReadonlyMap<string, ToolUse>, resume: readonly AgUiResumeEntry[]): Record<string, unknown>[] {
  const unknown = resume.filter((r) => !waiting.has(r.interruptId)).map((r) => r.interruptId);
  if (unknown.length > 0)
    throw new AgentRxError(
      'invalid_options',
      `resume: ${unknown.join(', ')} is not an interrupt thread ${threadId} waits for (waiting: ${[...waiting.keys()].join(', ')})`,
    );
  const missing = [...waiting.keys()].filter((id) => !resume.some((r) => r.interruptId === id));
  if (missing.length > 0) throw new AgentRxError('invalid_options', `resume: every pending interrupt needs an answer; missing ${missing.join(', ')}`);
  return resume.map((r) => {
    const d = confirmationDecision(r);
    return {
      type: 'user.tool_confirmation',
      tool_use_id: d.toolUseId,
      result: d.allow ? 'allow' : 'deny',
      ...(d.denyMessage !== undefined ? { deny_message: d.denyMessage } : {}),
    };
  });
}

/**
 * The decision a `resume` entry gives on the tool use its interrupt names: allowed only for
 * `resolved` with `payload` `true` or `{ allow: true }`; a `cancelled` entry denies with a
 * "dismissed" message.
 */
export function confirmationDecision(r: AgUiResumeEntry): ToolConfirmation {
  const payload = typeof r.payload === 'object' && r.payload !== null ? (r.payload as { allow?: unknown; denyMessage?: unknown }) : undefined;
  const allow = r.status === 'resolved' && (r.payload === true || payload?.allow === true);
  const denyMessage = r.status === 'cancelled' ? DISMISSED : typeof payload?.denyMessage === 'string' ? payload.denyMessage : undefined;
  return { toolUseId: r.interruptId, allow, ...(!allow && denyMessage !== undefined ? { denyMessage } : {}) };
}
