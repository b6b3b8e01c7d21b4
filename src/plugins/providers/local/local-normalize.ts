import { emptyUsage, type RawEvent, type TurnResult, type Usage } from '../../../core/model.js';
import { isMap } from './chat-stream.js';
import { toToolUse } from './local-conversation.js';
import { DUPLICATE_TOOL_CONTENT } from './loop-guards.js';
import type { LocalToolCallDelta } from './local-stream-calls.js';

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

/**
 * Reasoning of a streamed chunk (`choices[0].delta.reasoning_content`, or `reasoning` as some
 * servers name it), or the whole reasoning of a `local.model_response` that was not streamed. Its
 * message id is the chunk id with `.reasoning` appended (AG-UI keeps reasoning and text messages
 * apart, and the text message has the chunk id). Stateless and pure, like `localTextDelta`.
 */
export function localReasoningDelta(event: RawEvent): { readonly text: string; readonly messageId?: string } | undefined {
  if (event['type'] === 'local.chunk' && isMap(event['chunk'])) {
    const chunk = event['chunk'];
    const choice = Array.isArray(chunk['choices']) ? (chunk['choices'][0] as unknown) : undefined;
    const text = isMap(choice) ? reasoningOf(choice['delta']) : undefined;
    if (text === undefined) return undefined;
    return typeof chunk['id'] === 'string' ? { text, messageId: `${chunk['id']}.reasoning` } : { text };
  }
  if (event['type'] === 'local.model_response' && event['streamed'] !== true) {
    const text = reasoningOf(event['message']);
    return text === undefined ? undefined : { text };
  }
  return undefined;
}

/**
 * The answer a repeated call got instead of being run (`local.duplicate_tool_call`: the duplicate
 * notice, as an error: the tool did not run), reported as the call's result so a call whose
 * arguments streamed is not left without one. Pure.
 */
export function localDuplicateResult(event: RawEvent): { readonly toolUseId: string; readonly content: string; readonly isError: boolean } | undefined {
  if (event['type'] !== 'local.duplicate_tool_call' || typeof event['toolUseId'] !== 'string' || event['toolUseId'] === '') return undefined;
  return { toolUseId: event['toolUseId'], content: DUPLICATE_TOOL_CONTENT, isError: true };
}

/** The `toolCallDeltas` of a `local.chunk` (named when it arrived, see `LocalStreamCalls`), else undefined. */
export function localToolCallDeltas(event: RawEvent): readonly LocalToolCallDelta[] | undefined {
  if (event['type'] !== 'local.chunk') return undefined;
  const deltas = event['toolCallDeltas'];
  return Array.isArray(deltas) ? (deltas as readonly LocalToolCallDelta[]) : undefined;
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
