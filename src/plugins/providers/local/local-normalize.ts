import { emptyUsage, type RawEvent, type TurnResult, type Usage } from '../../../core/model.js';
import { NO_HOST_EVENTS, type HostEvent } from '../../../core/plugin/host-event.js';
import { isMap, type WireMap } from './chat-stream.js';
import { toToolUse } from './local-conversation.js';
import { DUPLICATE_TOOL_CONTENT } from './loop-guards.js';
import type { LocalToolCallDelta } from './local-stream-calls.js';

/**
 * Pure interpretation of the `local` provider's raw events: the fold of a closed turn into a
 * `TurnResult`, and what each event says to the Session (`decodeLocalEvent`). Nothing here
 * rewrites or drops a raw event.
 */

/**
 * Folds a turn's events: the last `local.model_response` decides; its calls become ToolUses with
 * the ids the event names (`toolUseIds`, else the calls' own). Surviving tool calls →
 * `requires_action`; none left because every call was a duplicate → `requires_action` with
 * `continueWithoutTools`; else `stop` → `end_turn`, `tool_calls` → `requires_action`, anything
 * else → `terminated`; no response → `terminated` with an undefined stop reason. Pure; never
 * throws on odd input.
 */
export function normalizeLocalTurn(events: readonly RawEvent[]): TurnResult {
  const response = [...events].reverse().find((e) => e['type'] === 'local.model_response');
  if (!response) {
    return { terminal: 'terminated', stopReason: undefined, text: '', customToolUses: [], serverToolUses: [], usage: emptyUsage(), events: [...events] };
  }
  const message = isMap(response['message']) ? response['message'] : {};
  const ids = Array.isArray(response['toolUseIds']) ? (response['toolUseIds'] as unknown[]) : [];
  const rawCalls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
  const hadDuplicates = events.some((e) => e['type'] === 'local.duplicate_tool_call');
  const stopReason = response['finish_reason'];
  const customToolUses = rawCalls.flatMap((c, i) => {
    if (!isMap(c)) return [];
    const id = ids[i];
    return [toToolUse(c, typeof id === 'string' ? id : undefined)];
  });
  const continueWithoutTools = customToolUses.length === 0 && hadDuplicates;
  const terminal: TurnResult['terminal'] =
    customToolUses.length > 0 || hadDuplicates || stopReason === 'tool_calls' ? 'requires_action' : stopReason === 'stop' ? 'end_turn' : 'terminated';
  return {
    terminal,
    stopReason,
    text: typeof message['content'] === 'string' ? message['content'] : '',
    customToolUses,
    serverToolUses: [],
    usage: toUsage(response['usage']),
    events: [...events],
    ...(continueWithoutTools ? { continueWithoutTools: true } : {}),
  };
}

/**
 * What one `local` event says, read once:
 * - a streamed `local.chunk`: its reasoning (`choices[0].delta.reasoning_content`, or `reasoning`
 *   as some servers name it; message id: the chunk id with `.reasoning` appended, since AG-UI keeps
 *   reasoning and text messages apart), its text (`choices[0].delta.content`, message id: the
 *   chunk id), then the tool-call fragments it carries (`toolCallDeltas`, named with the ToolUse
 *   ids their calls get when the chunk arrived, see `LocalStreamCalls`);
 * - a `local.model_response` that was not streamed: its whole reasoning and text (a streamed
 *   response's text is never reported twice: the event says how it came);
 * - a `local.duplicate_tool_call`: the duplicate notice as the call's result, an error (the tool
 *   did not run), so a call whose arguments streamed is not left without one.
 * Stateless and pure; never throws on odd input.
 */
export function decodeLocalEvent(event: RawEvent): readonly HostEvent[] {
  switch (event['type']) {
    case 'local.chunk':
      return isMap(event['chunk']) ? chunkEvents(event['chunk'], event['toolCallDeltas']) : NO_HOST_EVENTS;
    case 'local.model_response': {
      const message = event['message'];
      if (event['streamed'] === true || !isMap(message)) return NO_HOST_EVENTS;
      const host: HostEvent[] = [];
      const reasoning = reasoningOf(message);
      if (reasoning !== undefined) host.push({ kind: 'reasoning', text: reasoning });
      const text = message['content'];
      if (typeof text === 'string' && text !== '') host.push({ kind: 'text', text });
      return host;
    }
    case 'local.duplicate_tool_call': {
      const toolUseId = event['toolUseId'];
      return typeof toolUseId === 'string' && toolUseId !== ''
        ? [{ kind: 'host_tool_result', toolUseId, content: DUPLICATE_TOOL_CONTENT, isError: true }]
        : NO_HOST_EVENTS;
    }
    default:
      return NO_HOST_EVENTS;
  }
}

/** The reasoning, text and tool-call fragments of one streamed chunk, in that order. */
function chunkEvents(chunk: WireMap, toolCallDeltas: unknown): readonly HostEvent[] {
  const id = typeof chunk['id'] === 'string' ? chunk['id'] : undefined;
  const choice = Array.isArray(chunk['choices']) ? (chunk['choices'][0] as unknown) : undefined;
  const delta = isMap(choice) ? choice['delta'] : undefined;
  const calls = Array.isArray(toolCallDeltas) ? (toolCallDeltas as readonly LocalToolCallDelta[]) : undefined;
  if (!isMap(delta) && calls === undefined) return NO_HOST_EVENTS;
  const host: HostEvent[] = [];
  const reasoning = reasoningOf(delta);
  if (reasoning !== undefined)
    host.push(id !== undefined ? { kind: 'reasoning', text: reasoning, messageId: `${id}.reasoning` } : { kind: 'reasoning', text: reasoning });
  const text = isMap(delta) ? delta['content'] : undefined;
  if (typeof text === 'string' && text !== '') host.push(id !== undefined ? { kind: 'text', text, messageId: id } : { kind: 'text', text });
  for (const call of calls ?? []) host.push({ kind: 'tool_call_delta', ...call });
  return host;
}

/** The non-empty reasoning text of a delta or message (`reasoning_content`, else `reasoning`). */
function reasoningOf(delta: unknown): string | undefined {
  if (!isMap(delta)) return undefined;
  const text = typeof delta['reasoning_content'] === 'string' ? delta['reasoning_content'] : delta['reasoning'];
  return typeof text === 'string' && text !== '' ? text : undefined;
}

function toUsage(usage: unknown): Usage {
  if (!isMap(usage)) return emptyUsage();
  const input = usage['prompt_tokens'];
  const output = usage['completion_tokens'];
  return { inputTokens: typeof input === 'number' ? input : 0, outputTokens: typeof output === 'number' ? output : 0 };
}
