import { AgentRxError } from '../../../core/errors.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds, jsonText, jsonTextMayExceed } from '../../../core/util/json-depth.js';
import { isMap, truncate, type WireMap } from './chat-wire.js';

/**
 * Deepest chunk (or whole completion) accepted: tool-call arguments
 * (`choices[].delta.tool_calls[].function.arguments`, 7 levels down) may nest `MAX_JSON_DEPTH`
 * levels more.
 */
export const MAX_CHUNK_DEPTH = MAX_JSON_DEPTH + 8;

/** What one model call produced, whether streamed or not. */
export interface ChatCompletionResult {
  /** The assistant message: `{role:'assistant', content, tool_calls?}` (OpenAI shape). */
  readonly message: WireMap;
  readonly finish_reason: unknown;
  readonly usage: unknown;
  /** True when folded from streamed chunks. */
  readonly streamed: boolean;
}

/**
 * Parses a non-streamed `chat.completion` body. Only `choices[0]` is used. Throws
 * `AgentRxError('provider_error')` when the shape is not `{choices:[{message, finish_reason}]}`,
 * when `choices` is empty (`noChoicesError`), or when the body nests deeper than a chunk may
 * (decoded tool-call arguments nested too deep are turned into JSON text first, as for chunks).
 */
export function parseChatCompletion(text: string, target: string): ChatCompletionResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AgentRxError('provider_error', `Malformed chat response from ${target}: not JSON: ${truncate(text, 200)}`, { transient: false });
  }
  if (isMap(parsed) && Array.isArray(parsed['choices']) && parsed['choices'].length === 0) throw noChoicesError(target);
  if (isMap(parsed) && jsonTextMayExceed(text, MAX_CHUNK_DEPTH) && jsonDepthExceeds(parsed, MAX_CHUNK_DEPTH)) {
    stringifyDecodedArguments(parsed);
    if (jsonDepthExceeds(parsed, MAX_CHUNK_DEPTH)) {
      throw new AgentRxError('provider_error', `Malformed chat response from ${target}: nested deeper than ${MAX_CHUNK_DEPTH} levels`, { transient: false });
    }
  }
  const choice = isMap(parsed) && Array.isArray(parsed['choices']) ? (parsed['choices'][0] as unknown) : undefined;
  if (!isMap(parsed) || !isMap(choice) || !isMap(choice['message'])) {
    throw new AgentRxError('provider_error', `Malformed chat response from ${target}: expected {choices:[{message, finish_reason}]}: ${truncate(text, 200)}`, {
      transient: false,
    });
  }
  return { message: choice['message'], finish_reason: choice['finish_reason'] ?? undefined, usage: parsed['usage'] ?? undefined, streamed: false };
}

/**
 * The failure of a completion that holds no choice at all (`choices: []`, streamed or not): the
 * server answered 200 but produced no answer. Code `provider_error`, `details.reason`
 * `no_choices`; not retried.
 */
export function noChoicesError(target: string, chunks?: number): AgentRxError {
  return new AgentRxError(
    'provider_error',
    `${target} returned a completion with no choices${chunks === undefined ? '' : ` (${chunks} chunks)`}: the server produced no answer. ` +
      "Check the server's log (a model that failed to load, or a filter that dropped the answer, can do this).",
    { reason: 'no_choices', ...(chunks === undefined ? {} : { chunks }), transient: false },
  );
}

/**
 * Replaces decoded (object or array) tool-call arguments of a chunk (`choices[].delta`) or a
 * completion (`choices[].message`) by their JSON text, in place.
 */
export function stringifyDecodedArguments(body: WireMap): void {
  const choices = Array.isArray(body['choices']) ? (body['choices'] as unknown[]) : [];
  for (const choice of choices) {
    const message = isMap(choice) ? (choice['delta'] ?? choice['message']) : undefined;
    const calls = isMap(message) && Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
    for (const call of calls) {
      const fn = isMap(call) ? call['function'] : undefined;
      if (isMap(fn) && typeof fn['arguments'] === 'object' && fn['arguments'] !== null) fn['arguments'] = jsonText(fn['arguments']);
    }
  }
}
