import type { AgentRxEvent } from '../events/session-event.js';
import type { HostEvent, HostToolAnswered, HostToolUse, HostTurnEnd } from '../plugin/host-event.js';

/** The HostEvents a `requires_action` is answered from (kept per request): tool uses, their answers, turn ends. */
export type RecoveryEvent = HostToolUse | HostToolAnswered | HostTurnEnd;

/** True for a HostEvent the request keeps to answer a `requires_action` from; it derives no agentrx event. */
export function keptForRecovery(h: HostEvent): h is RecoveryEvent {
  return h.kind === 'tool_use' || h.kind === 'tool_answered' || h.kind === 'turn_end';
}

/**
 * The agentrx event that follows a provider event carrying `h` in turn `turn` (text, reasoning, a
 * tool-call fragment, a host-run tool's result), or undefined. A provider is typed, but its
 * HostEvents still come from outside: a malformed one (an empty text or id, a field of the wrong
 * type) derives nothing, as the extraction operators drop what their callbacks return malformed.
 * Never throws on a plain object.
 */
export function derivedEvent(h: HostEvent, turn: number): AgentRxEvent | undefined {
  switch (h.kind) {
    case 'text':
      return typeof h.text === 'string' && h.text.length > 0
        ? { type: 'agentrx.text_delta', text: h.text, messageId: nonEmpty(h.messageId) ?? `msg-${turn}` }
        : undefined;
    case 'reasoning':
      return typeof h.text === 'string' && h.text.length > 0
        ? { type: 'agentrx.reasoning_delta', text: h.text, messageId: nonEmpty(h.messageId) ?? `reasoning-${turn}` }
        : undefined;
    case 'host_tool_result':
      if (nonEmpty(h.toolUseId) === undefined || typeof h.content !== 'string' || typeof h.isError !== 'boolean') return undefined;
      return { type: 'agentrx.host_tool_result', toolUse: { id: h.toolUseId }, result: { content: h.content, isError: h.isError } };
    case 'tool_call_delta': {
      if (nonEmpty(h.toolUseId) === undefined || typeof h.argsDelta !== 'string') return undefined;
      const name = nonEmpty(h.name);
      const parentMessageId = nonEmpty(h.parentMessageId);
      return {
        type: 'agentrx.tool_call_delta',
        toolUseId: h.toolUseId,
        ...(name !== undefined ? { name } : {}),
        argsDelta: h.argsDelta,
        ...(parentMessageId !== undefined ? { parentMessageId } : {}),
      };
    }
    default:
      return undefined;
  }
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}
