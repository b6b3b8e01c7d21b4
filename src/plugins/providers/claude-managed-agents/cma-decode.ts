import type { RawEvent } from '../../../core/model.js';
import { NO_HOST_EVENTS, type HostEvent } from '../../../core/plugin/host-event.js';
import { cmaHostToolResult, hostToolUse, requestedIds, retryStatusOf, toToolUse } from './cma-normalize.js';
import type { CmaTextDeltas } from './cma-text-deltas.js';
import { CmaEventType, idOf, isMap, typeOf } from './cma-wire.js';

/**
 * What one Claude Managed Agents event says to the Session, its `type` read once:
 * - `agent.message` and `event_delta` previews: text, never twice (`deltas`, the session's
 *   tracker, joins a preview with the message that concludes it);
 * - `agent.custom_tool_use`: a tool use the caller runs; `agent.tool_use` / `agent.mcp_tool_use`:
 *   one the host runs (an MCP tool named `<server>/<tool>`), which may wait for a confirmation;
 * - `agent.tool_result` / `agent.mcp_tool_result`: a host-run tool's result;
 * - `user.custom_tool_result` / `user.tool_confirmation` (the host's record of what was posted):
 *   the tool use they answer;
 * - `session.status_idle`, `session.status_terminated`, `session.deleted`, and a `session.error`
 *   that is not retrying: a turn's end (an idle whose stop reason is `requires_action` names its
 *   `event_ids`).
 * Never throws on odd input.
 */
export function decodeCmaEvent(deltas: CmaTextDeltas, event: RawEvent): readonly HostEvent[] {
  switch (typeOf(event)) {
    case CmaEventType.agentMessage:
      return textOf(deltas.message(event));
    case CmaEventType.eventDelta:
      return textOf(deltas.fragment(event));
    case CmaEventType.agentCustomToolUse:
      return idOf(event) !== undefined ? [{ kind: 'tool_use', runBy: 'caller', use: toToolUse(event) }] : NO_HOST_EVENTS;
    case CmaEventType.agentToolUse:
    case CmaEventType.agentMcpToolUse:
      return idOf(event) !== undefined ? [{ kind: 'tool_use', runBy: 'host', use: hostToolUse(event) }] : NO_HOST_EVENTS;
    case CmaEventType.agentToolResult:
    case CmaEventType.agentMcpToolResult: {
      const result = cmaHostToolResult(event);
      return result ? [{ kind: 'host_tool_result', ...result }] : NO_HOST_EVENTS;
    }
    case CmaEventType.userCustomToolResult:
      return answered(event['custom_tool_use_id'], 'result');
    case CmaEventType.userToolConfirmation:
      return answered(event['tool_use_id'], 'confirmation');
    case CmaEventType.statusIdle: {
      const reason = event['stop_reason'];
      return isMap(reason) && reason['type'] === 'requires_action' ? [{ kind: 'turn_end', requiresAction: { toolUseIds: requestedIds(reason) } }] : TURN_END;
    }
    case CmaEventType.statusTerminated:
    case CmaEventType.sessionDeleted:
      return TURN_END;
    case CmaEventType.sessionError:
      // The service retries by itself and the turn goes on (the official types say to wait).
      return retryStatusOf(event) !== 'retrying' ? TURN_END : NO_HOST_EVENTS;
    default:
      return NO_HOST_EVENTS;
  }
}

const TURN_END: readonly HostEvent[] = Object.freeze([{ kind: 'turn_end' }]);

function textOf(chunk: { readonly text: string; readonly messageId: string } | undefined): readonly HostEvent[] {
  return chunk ? [{ kind: 'text', text: chunk.text, messageId: chunk.messageId }] : NO_HOST_EVENTS;
}

function answered(toolUseId: unknown, by: 'result' | 'confirmation'): readonly HostEvent[] {
  return typeof toolUseId === 'string' ? [{ kind: 'tool_answered', toolUseId, by }] : NO_HOST_EVENTS;
}
