import type { Readable } from 'node:stream';
import { AgentRxError } from '../../../core/errors.js';
import type { SseMessage } from '../../../core/http/sse-frame-decoder.js';
import { readSse, type SseRead } from '../../../core/http/sse-reader.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../../../core/util/json-depth.js';
import { sharedScheduler } from '../../../core/util/time-slice-scheduler.js';
import type { ChatCompletionResult } from './chat-completion.js';
import type { ReadChatStreamOptions } from './chat-stream.js';
import { errorText, isMap, truncate, type WireMap } from './chat-wire.js';
import type { ModelApi } from './model-api.js';
import { streamStopError, textOf } from './model-api-parts.js';

/**
 * The OpenAI Responses API (`POST /v1/responses`) under the Local loop. The whole conversation is
 * sent each time (`store: false`), so reasoning items come back encrypted
 * (`include: ['reasoning.encrypted_content']`) and go with the next request verbatim; their
 * summaries stream as reasoning. Function calls and their outputs are input items; the answer's
 * events become chat chunks (see `ModelApi`).
 */

/** Responses request of a chat-shaped call. */
export function responsesRequest(model: string, tools: readonly WireMap[], messages: readonly WireMap[], fields: WireMap, stream: boolean): WireMap {
  const instructions: string[] = [];
  const input: WireMap[] = [];
  for (const m of messages) {
    const role = m['role'];
    if (role === 'system' || role === 'developer') instructions.push(textOf(m['content']));
    else if (role === 'user') input.push({ role: 'user', content: textOf(m['content']) });
    else if (role === 'tool') input.push({ type: 'function_call_output', call_id: String(m['tool_call_id'] ?? ''), output: textOf(m['content']) });
    else if (role === 'assistant') {
      if (Array.isArray(m['responses_reasoning'])) input.push(...(m['responses_reasoning'] as unknown[]).filter(isMap));
      const text = textOf(m['content']);
      if (text !== '') input.push({ role: 'assistant', content: text });
      for (const call of Array.isArray(m['tool_calls']) ? (m['tool_calls'] as unknown[]) : []) {
        if (!isMap(call) || !isMap(call['function'])) continue;
        const args = call['function']['arguments'];
        input.push({
          type: 'function_call',
          call_id: String(call['id'] ?? ''),
          name: String(call['function']['name'] ?? ''),
          arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
        });
      }
    }
  }
  const format = fields['response_format'];
  const schema = isMap(format) && isMap(format['json_schema']) ? format['json_schema']['schema'] : undefined;
  return {
    model,
    input,
    store: false,
    include: ['reasoning.encrypted_content'],
    ...(instructions.some((s) => s !== '') ? { instructions: instructions.filter((s) => s !== '').join('\n\n') } : {}),
    ...(tools.length > 0 ? { tools: tools.map(responsesTool) } : {}),
    ...(fields['temperature'] !== undefined ? { temperature: fields['temperature'] } : {}),
    ...(fields['top_p'] !== undefined ? { top_p: fields['top_p'] } : {}),
    ...(fields['max_tokens'] !== undefined ? { max_output_tokens: fields['max_tokens'] } : {}),
    ...(isMap(schema) ? { text: { format: { type: 'json_schema', name: 'output', schema, strict: false } } } : {}),
    ...(stream ? { stream: true } : {}),
  };
}

/** A whole `response` as a chat completion. */
export function parseResponse(text: string, target: string): ChatCompletionResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AgentRxError('provider_error', `Malformed response from ${target}: not JSON: ${truncate(text, 200)}`, { transient: false });
  }
  if (!isMap(parsed) || !Array.isArray(parsed['output']) || jsonDepthExceeds(parsed, MAX_JSON_DEPTH + 6)) {
    throw new AgentRxError('provider_error', `Malformed response from ${target}: expected a response with output items: ${truncate(text, 200)}`, {
      transient: false,
    });
  }
  if (parsed['status'] === 'failed') {
    // Nothing was shown yet: a failure on the server's side is worth another call.
    const code = isMap(parsed['error']) ? String(parsed['error']['code'] ?? '') : '';
    throw new AgentRxError('provider_error', `${target} answered a failed response (${code || 'no code'}): ${truncate(errorText(parsed), 300)}`, {
      code,
      transient: ['server_error', 'rate_limit_exceeded'].includes(code),
    });
  }
  const texts: string[] = [];
  const calls: WireMap[] = [];
  const reasoning: WireMap[] = [];
  for (const item of parsed['output'] as unknown[]) {
    if (!isMap(item)) continue;
    if (item['type'] === 'message' && Array.isArray(item['content']))
      for (const part of item['content'] as unknown[])
        if (isMap(part) && part['type'] === 'output_text' && typeof part['text'] === 'string') texts.push(part['text']);
    if (item['type'] === 'function_call')
      calls.push({
        id: String(item['call_id'] ?? ''),
        type: 'function',
        function: { name: String(item['name'] ?? ''), arguments: String(item['arguments'] ?? '') },
      });
    if (item['type'] === 'reasoning') reasoning.push(item);
  }
  const message: WireMap = { role: 'assistant', content: texts.length > 0 ? texts.join('') : calls.length > 0 ? null : '', ...reasoningFields(reasoning) };
  if (calls.length > 0) message['tool_calls'] = calls;
  return { message, finish_reason: finishOf(parsed, calls.length > 0), usage: chatUsage(parsed['usage']), streamed: false };
}

/** Reads a Responses event stream until `response.completed` (or `incomplete`), as chat chunks. */
export function readResponsesStream(body: Readable, opts: ReadChatStreamOptions): Promise<{ chunks: number; extra: WireMap }> {
  return new Promise((resolve, reject) => {
    const state = new ResponsesStreamState(opts);
    readSse(body, {
      idleTimeoutMs: opts.idleTimeoutMs,
      ...(opts.maxFrameBytes !== undefined ? { maxFrameBytes: opts.maxFrameBytes } : {}),
      signal: opts.signal,
      scheduler: opts.scheduler ?? sharedScheduler,
      onMessage: (message, read) => state.onMessage(message, read),
      onStop: (stop) => streamStopError(stop, opts, state.chunks, 'response.completed'),
      onDone: (error) => (error ? reject(error) : resolve({ chunks: state.chunks, extra: reasoningFields(state.reasoning) })),
    });
  });
}

class ResponsesStreamState {
  chunks = 0;
  readonly reasoning: WireMap[] = [];
  private id = '';
  /** Output index → its function call's index and whether argument text arrived. */
  private readonly calls = new Map<number, { index: number; sawArgs: boolean }>();

  constructor(private readonly opts: ReadChatStreamOptions) {}

  onMessage(ev: SseMessage, read: SseRead): void {
    const data = ev.data.trim();
    if (data === '' || data === '[DONE]') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      read.fail(this.failure(`sent a malformed event (not JSON) after ${this.chunks} chunks: ${truncate(data, 120)}`, false));
      return;
    }
    if (!isMap(parsed) || jsonDepthExceeds(parsed, MAX_JSON_DEPTH + 6)) {
      read.fail(this.failure(`sent an event that is not a JSON object of a sane depth after ${this.chunks} chunks`, false));
      return;
    }
    const type = parsed['type'] ?? ev.event;
    if (type === 'error' || type === 'response.failed') {
      const code = String((isMap(parsed['response']) && isMap(parsed['response']['error']) ? parsed['response']['error']['code'] : parsed['code']) ?? 'error');
      const detail = isMap(parsed['response']) ? errorText(parsed['response']) : errorText(parsed);
      const transient = this.chunks === 0 && ['server_error', 'rate_limit_exceeded'].includes(code);
      read.fail(this.failure(`reported an error after ${this.chunks} chunks: ${code}: ${truncate(detail, 300)}`, transient));
      return;
    }
    if (type === 'response.completed' || type === 'response.incomplete') {
      const response = isMap(parsed['response']) ? parsed['response'] : {};
      this.emit({ delta: {}, finish_reason: finishOf(response, this.calls.size > 0) ?? 'stop' });
      this.emit({ usage: chatUsage(response['usage']) });
      read.succeed();
      return;
    }
    for (const part of this.partsOf(type, parsed)) this.emit(part);
  }

  private partsOf(type: unknown, ev: WireMap): WireMap[] {
    const at = typeof ev['output_index'] === 'number' ? ev['output_index'] : -1;
    const item = isMap(ev['item']) ? ev['item'] : {};
    switch (type) {
      case 'response.created':
        this.id = isMap(ev['response']) ? String(ev['response']['id'] ?? '') : '';
        return [];
      case 'response.output_item.added':
        if (item['type'] !== 'function_call') return [];
        this.calls.set(at, { index: this.calls.size, sawArgs: false });
        return [
          {
            delta: {
              tool_calls: [{ index: this.calls.get(at)!.index, id: item['call_id'], type: 'function', function: { name: item['name'], arguments: '' } }],
            },
          },
        ];
      case 'response.output_text.delta':
        return typeof ev['delta'] === 'string' ? [{ delta: { content: ev['delta'] } }] : [];
      case 'response.reasoning_summary_text.delta':
        return typeof ev['delta'] === 'string' ? [{ delta: { reasoning_content: ev['delta'] } }] : [];
      case 'response.function_call_arguments.delta': {
        const call = this.calls.get(at);
        if (!call || typeof ev['delta'] !== 'string' || ev['delta'] === '') return [];
        call.sawArgs = true;
        return [{ delta: { tool_calls: [{ index: call.index, function: { arguments: ev['delta'] } }] } }];
      }
      case 'response.output_item.done': {
        if (item['type'] === 'reasoning') this.reasoning.push(item);
        const call = this.calls.get(at);
        if (item['type'] !== 'function_call' || !call || call.sawArgs) return [];
        // Arguments given only whole, on the item.
        call.sawArgs = true;
        return [{ delta: { tool_calls: [{ index: call.index, function: { arguments: String(item['arguments'] ?? '{}') || '{}' } }] } }];
      }
      default:
        return [];
    }
  }

  private emit(part: WireMap): void {
    this.chunks++;
    const base = { id: this.id, object: 'chat.completion.chunk' };
    this.opts.onChunk(part['usage'] !== undefined ? { ...base, choices: [], usage: part['usage'] } : { ...base, choices: [{ index: 0, ...part }] });
  }

  private failure(what: string, transient: boolean): AgentRxError {
    return new AgentRxError('stream_error', `The model stream from ${this.opts.target} ${what}`, { chunks: this.chunks, transient });
  }
}

/** `POST <baseUrl>/responses` (baseUrl `https://api.openai.com/v1`). */
export const openAiResponsesApi: ModelApi = {
  path: () => 'responses',
  body: responsesRequest,
  headers: (apiKey): Record<string, string> => (apiKey !== undefined ? { Authorization: `Bearer ${apiKey}` } : {}),
  parseWhole: parseResponse,
  readStream: readResponsesStream,
  notFoundHint: 'Check that baseUrl ends with /v1 (https://api.openai.com/v1) and that the model exists.',
  answerName: 'response',
};

function responsesTool(t: WireMap): WireMap {
  const fn = isMap(t['function']) ? t['function'] : {};
  return {
    type: 'function',
    name: fn['name'],
    description: fn['description'] ?? '',
    parameters: isMap(fn['parameters']) ? fn['parameters'] : { type: 'object' },
    strict: false,
  };
}

/** Reasoning items: their summary text as `reasoning_content`, the items verbatim for the next request. */
function reasoningFields(items: readonly WireMap[]): WireMap {
  if (items.length === 0) return {};
  const text = items
    .flatMap((i) => (Array.isArray(i['summary']) ? (i['summary'] as unknown[]) : []))
    .map((s) => (isMap(s) && typeof s['text'] === 'string' ? s['text'] : ''))
    .join('');
  const verbatim = items.map(({ status: _status, ...rest }) => rest);
  return { ...(text !== '' ? { reasoning_content: text } : {}), responses_reasoning: verbatim };
}

function finishOf(response: WireMap, calls: boolean): string | undefined {
  if (response['status'] === 'incomplete') return 'length';
  return calls ? 'tool_calls' : 'stop';
}

/** Responses usage in chat form (`input_tokens` already includes cached ones). */
function chatUsage(usage: unknown): WireMap | undefined {
  if (!isMap(usage)) return undefined;
  const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const cached = isMap(usage['input_tokens_details']) ? n(usage['input_tokens_details']['cached_tokens']) : 0;
  return { prompt_tokens: n(usage['input_tokens']), completion_tokens: n(usage['output_tokens']), prompt_tokens_details: { cached_tokens: cached } };
}
