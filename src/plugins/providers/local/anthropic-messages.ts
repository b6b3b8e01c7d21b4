import type { Readable } from 'node:stream';
import { AgentRxError } from '../../../core/errors.js';
import type { SseMessage } from '../../../core/http/sse-frame-decoder.js';
import { readSse, type SseRead } from '../../../core/http/sse-reader.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../../../core/util/json-depth.js';
import { sharedScheduler } from '../../../core/util/time-slice-scheduler.js';
import type { ChatCompletionResult } from './chat-completion.js';
import { errorText, isMap, truncate, type WireMap } from './chat-wire.js';
import type { ReadChatStreamOptions } from './chat-stream.js';
import type { ModelApi } from './model-api.js';
import { streamStopError, textOf } from './model-api-parts.js';

/**
 * The Anthropic Messages API (`POST /v1/messages`) under the Local loop. The loop keeps its
 * conversation in chat-completions shape; this file translates it to a Messages request (system
 * prompt on top, tool results as `tool_result` blocks of a user message, thinking blocks sent back
 * verbatim with their signatures), and the answer back: a whole `message`, or the stream's events
 * as `chat.completion.chunk`-shaped chunks (text, `reasoning_content` from thinking, tool-call
 * fragments from `input_json_delta`, the finish reason, usage), so the rest of the loop — live
 * deltas, tool-call fragments, the fold of a turn — is the same for every API.
 */

/** The `anthropic-version` header sent with every request. */
export const ANTHROPIC_VERSION = '2023-06-01';
/** `max_tokens` when the session sets no `maxOutputTokens` (the Messages API requires one). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** `POST <baseUrl>/messages` (baseUrl `https://api.anthropic.com/v1`). */
export const anthropicMessagesApi: ModelApi = {
  path: () => 'messages',
  body: anthropicRequest,
  headers: anthropicHeaders,
  parseWhole: parseAnthropicMessage,
  readStream: readAnthropicStream,
  notFoundHint: 'Check that baseUrl ends with /v1 (https://api.anthropic.com/v1) and that the model exists.',
  answerName: 'message',
};

const STOP_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  refusal: 'content_filter',
};

/** The Messages request of a chat-shaped call: `fields` are the chat fields of the session's settings. */
export function anthropicRequest(model: string, tools: readonly WireMap[], messages: readonly WireMap[], fields: WireMap, stream: boolean): WireMap {
  const system: string[] = [];
  const out: { role: string; content: WireMap[] }[] = [];
  const push = (role: string, blocks: WireMap[]): void => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    const role = m['role'];
    if (role === 'system' || role === 'developer') system.push(textOf(m['content']));
    else if (role === 'user') push('user', textBlocks(m['content']));
    else if (role === 'tool') push('user', [{ type: 'tool_result', tool_use_id: String(m['tool_call_id'] ?? ''), content: textOf(m['content']) }]);
    else if (role === 'assistant') push('assistant', assistantBlocks(m));
  }
  const format = fields['response_format'];
  const schema = isMap(format) && isMap(format['json_schema']) ? format['json_schema']['schema'] : undefined;
  return {
    model,
    max_tokens: typeof fields['max_tokens'] === 'number' ? fields['max_tokens'] : ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages: out,
    ...(system.some((s) => s !== '') ? { system: system.filter((s) => s !== '').join('\n\n') } : {}),
    ...(tools.length > 0 ? { tools: tools.map(anthropicTool) } : {}),
    ...(fields['temperature'] !== undefined ? { temperature: fields['temperature'] } : {}),
    ...(fields['top_p'] !== undefined ? { top_p: fields['top_p'] } : {}),
    ...(isMap(schema) ? { output_format: { type: 'json_schema', schema } } : {}),
    ...(stream ? { stream: true } : {}),
  };
}

/** The headers of a Messages call: the key as `x-api-key`, the API version, and the structured-output beta when the body asks for it. */
export function anthropicHeaders(apiKey: string | undefined, body: WireMap): Record<string, string> {
  return {
    'anthropic-version': ANTHROPIC_VERSION,
    ...(apiKey !== undefined ? { 'x-api-key': apiKey } : {}),
    ...(body['output_format'] !== undefined ? { 'anthropic-beta': 'structured-outputs-2025-11-13' } : {}),
  };
}

/** A whole (non-streamed) Messages answer as a chat completion. Throws `provider_error` for another shape. */
export function parseAnthropicMessage(text: string, target: string): ChatCompletionResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AgentRxError('provider_error', `Malformed Messages response from ${target}: not JSON: ${truncate(text, 200)}`, { transient: false });
  }
  if (!isMap(parsed) || !Array.isArray(parsed['content']) || jsonDepthExceeds(parsed, MAX_JSON_DEPTH + 4)) {
    throw new AgentRxError('provider_error', `Malformed Messages response from ${target}: expected a message with content blocks: ${truncate(text, 200)}`, {
      transient: false,
    });
  }
  const texts: string[] = [];
  const calls: WireMap[] = [];
  const thinking: WireMap[] = [];
  for (const block of parsed['content'] as unknown[]) {
    if (!isMap(block)) continue;
    if (block['type'] === 'text' && typeof block['text'] === 'string') texts.push(block['text']);
    else if (block['type'] === 'tool_use')
      calls.push({
        id: String(block['id'] ?? ''),
        type: 'function',
        function: { name: String(block['name'] ?? ''), arguments: JSON.stringify(block['input'] ?? {}) },
      });
    else if (block['type'] === 'thinking' || block['type'] === 'redacted_thinking') thinking.push(block);
  }
  const message: WireMap = { role: 'assistant', content: texts.length > 0 ? texts.join('') : calls.length > 0 ? null : '', ...thinkingFields(thinking) };
  if (calls.length > 0) message['tool_calls'] = calls;
  return { message, finish_reason: finishReason(parsed['stop_reason']), usage: chatUsage(parsed['usage']), streamed: false };
}

/**
 * Reads a Messages event stream until `message_stop`, handing each event's meaning to
 * `opts.onChunk` as chat chunks. Rejects like `readChatStream` (`timeout`, `stream_error` with
 * `details.chunks`, transient only before the first chunk; an `error` event names its type).
 * Resolves with the fields the folded assistant message needs beyond the chunks (the thinking
 * blocks and their text).
 */
export function readAnthropicStream(body: Readable, opts: ReadChatStreamOptions): Promise<{ chunks: number; extra: WireMap }> {
  return new Promise((resolve, reject) => {
    const state = new AnthropicStreamState(opts);
    readSse(body, {
      idleTimeoutMs: opts.idleTimeoutMs,
      ...(opts.maxFrameBytes !== undefined ? { maxFrameBytes: opts.maxFrameBytes } : {}),
      signal: opts.signal,
      scheduler: opts.scheduler ?? sharedScheduler,
      onMessage: (message, read) => state.onMessage(message, read),
      onStop: (stop) => streamStopError(stop, opts, state.chunks, 'message_stop'),
      onDone: (error) => (error ? reject(error) : resolve({ chunks: state.chunks, extra: thinkingFields(state.thinking) })),
    });
  });
}

/** What a Messages stream has delivered so far, and the chat chunks its events become. */
class AnthropicStreamState {
  chunks = 0;
  readonly thinking: WireMap[] = [];
  private id = '';
  private inputTokens: WireMap = {};
  /** Content block index → its tool call's index and whether any input JSON arrived. */
  private readonly tools = new Map<number, { index: number; sawInput: boolean }>();
  private readonly thoughts = new Map<number, WireMap>();

  constructor(private readonly opts: ReadChatStreamOptions) {}

  onMessage(ev: SseMessage, read: SseRead): void {
    const data = ev.data.trim();
    if (data === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      read.fail(this.failure(`sent a malformed event (not JSON) after ${this.chunks} chunks: ${truncate(data, 120)}`, false));
      return;
    }
    if (!isMap(parsed) || jsonDepthExceeds(parsed, MAX_JSON_DEPTH + 4)) {
      read.fail(this.failure(`sent an event that is not a JSON object of a sane depth after ${this.chunks} chunks`, false));
      return;
    }
    const type = parsed['type'] ?? ev.event;
    if (type === 'error') {
      const kind = isMap(parsed['error']) ? String(parsed['error']['type'] ?? 'error') : 'error';
      const transient = this.chunks === 0 && ['overloaded_error', 'api_error', 'rate_limit_error'].includes(kind);
      read.fail(this.failure(`reported an error after ${this.chunks} chunks: ${kind}: ${truncate(errorText(parsed), 300)}`, transient));
      return;
    }
    if (type === 'message_stop') {
      read.succeed();
      return;
    }
    for (const delta of this.deltasOf(type, parsed)) this.emit(delta);
  }

  /** The chat-chunk parts an event means (none for `ping`, block stops of text, and unknown events). */
  private deltasOf(type: unknown, ev: WireMap): WireMap[] {
    const index = typeof ev['index'] === 'number' ? ev['index'] : -1;
    switch (type) {
      case 'message_start': {
        const message = isMap(ev['message']) ? ev['message'] : {};
        this.id = String(message['id'] ?? '');
        this.inputTokens = isMap(message['usage']) ? message['usage'] : {};
        return [];
      }
      case 'content_block_start': {
        const block = isMap(ev['content_block']) ? ev['content_block'] : {};
        if (block['type'] === 'tool_use') {
          const call = { index: this.tools.size, sawInput: false };
          this.tools.set(index, call);
          return [{ delta: { tool_calls: [{ index: call.index, id: block['id'], type: 'function', function: { name: block['name'], arguments: '' } }] } }];
        }
        if (block['type'] === 'thinking' || block['type'] === 'redacted_thinking') {
          const copy = { ...block };
          this.thoughts.set(index, copy);
          this.thinking.push(copy);
        }
        return [];
      }
      case 'content_block_delta': {
        const d = isMap(ev['delta']) ? ev['delta'] : {};
        if (d['type'] === 'text_delta' && typeof d['text'] === 'string') return [{ delta: { content: d['text'] } }];
        if (d['type'] === 'thinking_delta' && typeof d['thinking'] === 'string') {
          const block = this.thoughts.get(index);
          if (block) block['thinking'] = String(block['thinking'] ?? '') + d['thinking'];
          return [{ delta: { reasoning_content: d['thinking'] } }];
        }
        if (d['type'] === 'signature_delta' && typeof d['signature'] === 'string') {
          const block = this.thoughts.get(index);
          if (block) block['signature'] = String(block['signature'] ?? '') + d['signature'];
          return [];
        }
        const call = this.tools.get(index);
        if (d['type'] === 'input_json_delta' && call && typeof d['partial_json'] === 'string' && d['partial_json'] !== '') {
          call.sawInput = true;
          return [{ delta: { tool_calls: [{ index: call.index, function: { arguments: d['partial_json'] } }] } }];
        }
        return [];
      }
      case 'content_block_stop': {
        // A tool use without input sends no JSON at all: its arguments are an empty object.
        const call = this.tools.get(index);
        if (call && !call.sawInput) {
          call.sawInput = true;
          return [{ delta: { tool_calls: [{ index: call.index, function: { arguments: '{}' } }] } }];
        }
        return [];
      }
      case 'message_delta': {
        const d = isMap(ev['delta']) ? ev['delta'] : {};
        const usage = isMap(ev['usage']) ? { ...this.inputTokens, ...ev['usage'] } : this.inputTokens;
        return [{ delta: {}, finish_reason: finishReason(d['stop_reason']) ?? 'stop' }, { usage: chatUsage(usage) }];
      }
      default:
        return [];
    }
  }

  private emit(part: WireMap): void {
    this.chunks++;
    const chunk: WireMap =
      part['usage'] !== undefined
        ? { id: this.id, object: 'chat.completion.chunk', choices: [], usage: part['usage'] }
        : { id: this.id, object: 'chat.completion.chunk', choices: [{ index: 0, ...part }] };
    this.opts.onChunk(chunk);
  }

  private failure(what: string, transient: boolean): AgentRxError {
    return new AgentRxError('stream_error', `The model stream from ${this.opts.target} ${what}`, { chunks: this.chunks, transient });
  }
}

/** A tool in Messages form (from the chat `function` form). */
function anthropicTool(t: WireMap): WireMap {
  const fn = isMap(t['function']) ? t['function'] : {};
  return { name: fn['name'], description: fn['description'] ?? '', input_schema: isMap(fn['parameters']) ? fn['parameters'] : { type: 'object' } };
}

/** An assistant chat message as Messages blocks: thinking first (verbatim), then text, then tool uses. */
function assistantBlocks(m: WireMap): WireMap[] {
  const blocks: WireMap[] = Array.isArray(m['anthropic_thinking']) ? (m['anthropic_thinking'] as unknown[]).filter(isMap) : [];
  const text = textOf(m['content']);
  if (text !== '') blocks.push({ type: 'text', text });
  for (const call of Array.isArray(m['tool_calls']) ? (m['tool_calls'] as unknown[]) : []) {
    if (!isMap(call) || !isMap(call['function'])) continue;
    blocks.push({
      type: 'tool_use',
      id: String(call['id'] ?? ''),
      name: String(call['function']['name'] ?? ''),
      input: inputOf(call['function']['arguments']),
    });
  }
  return blocks;
}

/** Tool-call arguments as the object a `tool_use` block needs (text that is not a JSON object: an empty one). */
function inputOf(args: unknown): WireMap {
  if (isMap(args)) return args;
  try {
    const parsed: unknown = typeof args === 'string' && args !== '' ? JSON.parse(args) : {};
    return isMap(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function textBlocks(content: unknown): WireMap[] {
  const text = textOf(content);
  return text === '' ? [] : [{ type: 'text', text }];
}

/** The assistant message's thinking: its text as `reasoning_content`, its blocks verbatim for the next request. */
function thinkingFields(blocks: readonly WireMap[]): WireMap {
  if (blocks.length === 0) return {};
  const text = blocks.map((b) => (typeof b['thinking'] === 'string' ? b['thinking'] : '')).join('');
  return { ...(text !== '' ? { reasoning_content: text } : {}), anthropic_thinking: blocks.map((b) => ({ ...b })) };
}

function finishReason(stop: unknown): string | undefined {
  return typeof stop === 'string' ? (STOP_REASONS[stop] ?? stop) : undefined;
}

/** Messages usage in chat form: prompt tokens include cache reads and writes (also given on their own). */
function chatUsage(usage: unknown): WireMap | undefined {
  if (!isMap(usage)) return undefined;
  const n = (k: string): number => (typeof usage[k] === 'number' ? usage[k] : 0);
  const cacheRead = n('cache_read_input_tokens');
  const cacheWrite = n('cache_creation_input_tokens');
  return {
    prompt_tokens: n('input_tokens') + cacheRead + cacheWrite,
    completion_tokens: n('output_tokens'),
    prompt_tokens_details: { cached_tokens: cacheRead },
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
  };
}
