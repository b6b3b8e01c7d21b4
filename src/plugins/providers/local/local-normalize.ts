import { emptyUsage, type RawEvent, type TurnResult, type Usage } from '../../../core/model.js';
import { isMap } from './chat-stream.js';
import { toToolUse } from './local-conversation.js';

/**
 * Pure interpretation of the `local` provider's raw events: the fold of a closed turn into a
 * `TurnResult` and the text each event contributes. Nothing here rewrites or drops a raw event.
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
 * Text of a streamed chunk (`choices[0].delta.content`, with the chunk id as message id), or the
 * whole content of a `local.model_response` that was not streamed. A streamed response's text is
 * never reported twice. Stateless: the event says whether it was streamed. Pure.
 */
export function localTextDelta(event: RawEvent): { readonly text: string; readonly messageId?: string } | undefined {
  if (event['type'] === 'local.chunk' && isMap(event['chunk'])) {
    const chunk = event['chunk'];
    const choice = Array.isArray(chunk['choices']) ? (chunk['choices'][0] as unknown) : undefined;
    const delta = isMap(choice) ? choice['delta'] : undefined;
    const text = isMap(delta) ? delta['content'] : undefined;
    if (typeof text !== 'string' || text === '') return undefined;
    return typeof chunk['id'] === 'string' ? { text, messageId: chunk['id'] } : { text };
  }
  if (event['type'] === 'local.model_response' && event['streamed'] !== true && isMap(event['message'])) {
    const text = event['message']['content'];
    return typeof text === 'string' && text !== '' ? { text } : undefined;
  }
  return undefined;
}

function toUsage(usage: unknown): Usage {
  if (!isMap(usage)) return emptyUsage();
  const input = usage['prompt_tokens'];
  const output = usage['completion_tokens'];
  return { inputTokens: typeof input === 'number' ? input : 0, outputTokens: typeof output === 'number' ? output : 0 };
}
