import type { Readable } from 'node:stream';
import { AgentRxError } from '../../../core/errors.js';
import type { SseMessage } from '../../../core/http/sse-frame-decoder.js';
import { readSse, type SseRead } from '../../../core/http/sse-reader.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../../../core/util/json-depth.js';
import { sharedScheduler } from '../../../core/util/time-slice-scheduler.js';
import type { ChatCompletionResult } from './chat-completion.js';
import type { ReadChatStreamOptions } from './chat-stream.js';
import { errorText, isMap, truncate, type WireMap } from './chat-wire.js';
import { newCallId } from './local-conversation.js';
import type { ModelApi } from './model-api.js';
import { streamStopError, textOf } from './model-api-parts.js';

/**
 * The Gemini API (`models/{model}:generateContent`, streamed as `:streamGenerateContent?alt=sse`)
 * under the Local loop. Turns are `user`/`model` contents of parts; a tool result is a
 * `functionResponse` part naming its function (found from the call it answers). The model's parts
 * (thoughts, thought signatures) go back with the next request verbatim. A function call without an
 * id gets one of the loop's (prefixed, and not sent back). The stream has no end event: it ends
 * with the body, after a chunk with a finish reason.
 */

/** Ids given to calls the model sent without one: never sent back to the API. */
const LOCAL_ID = 'gemini-local-';

const FINISH: Readonly<Record<string, string>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
};

/** The generateContent request of a chat-shaped call. */
export function geminiRequest(_model: string, tools: readonly WireMap[], messages: readonly WireMap[], fields: WireMap): WireMap {
  const system: string[] = [];
  const contents: { role: string; parts: WireMap[] }[] = [];
  const names = new Map<string, string>();
  const push = (role: string, parts: WireMap[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of messages) {
    const role = m['role'];
    if (role === 'system' || role === 'developer') system.push(textOf(m['content']));
    else if (role === 'user') push('user', textOf(m['content']) === '' ? [] : [{ text: textOf(m['content']) }]);
    else if (role === 'assistant') push('model', modelParts(m, names));
    else if (role === 'tool') {
      const id = String(m['tool_call_id'] ?? '');
      const response = { name: names.get(id) ?? '', response: { result: textOf(m['content']) }, ...(id.startsWith(LOCAL_ID) ? {} : { id }) };
      push('user', [{ functionResponse: response }]);
    }
  }
  const format = fields['response_format'];
  const schema = isMap(format) && isMap(format['json_schema']) ? format['json_schema']['schema'] : undefined;
  // Thoughts are shown as reasoning (and sent back with their signatures), so they are asked for.
  const config: WireMap = {
    thinkingConfig: { includeThoughts: true },
    ...(fields['temperature'] !== undefined ? { temperature: fields['temperature'] } : {}),
    ...(fields['top_p'] !== undefined ? { topP: fields['top_p'] } : {}),
    ...(fields['max_tokens'] !== undefined ? { maxOutputTokens: fields['max_tokens'] } : {}),
    ...(isMap(schema) ? { responseMimeType: 'application/json', responseJsonSchema: schema } : {}),
  };
  return {
    contents,
    ...(system.some((s) => s !== '') ? { systemInstruction: { parts: [{ text: system.filter((s) => s !== '').join('\n\n') }] } } : {}),
    ...(tools.length > 0 ? { tools: [{ functionDeclarations: tools.map(declaration) }] } : {}),
    generationConfig: config,
  };
}

/** A whole GenerateContentResponse as a chat completion. */
export function parseGeminiResponse(text: string, target: string): ChatCompletionResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AgentRxError('provider_error', `Malformed response from ${target}: not JSON: ${truncate(text, 200)}`, { transient: false });
  }
  const candidate = isMap(parsed) && Array.isArray(parsed['candidates']) ? (parsed['candidates'][0] as unknown) : undefined;
  if (!isMap(parsed) || !isMap(candidate) || jsonDepthExceeds(parsed, MAX_JSON_DEPTH + 6)) {
    throw new AgentRxError('provider_error', `Malformed response from ${target}: expected {candidates:[{content:{parts}}]}: ${truncate(text, 200)}`, {
      transient: false,
    });
  }
  const folded = new PartFold();
  folded.add(partsOf(candidate));
  const message = folded.message();
  return { message, finish_reason: finishOf(candidate['finishReason'], folded.calls.length > 0), usage: chatUsage(parsed['usageMetadata']), streamed: false };
}

/** Reads a streamed generateContent body (chunks until the body ends after a finish reason), as chat chunks. */
export function readGeminiStream(body: Readable, opts: ReadChatStreamOptions): Promise<{ chunks: number; extra: WireMap }> {
  return new Promise((resolve, reject) => {
    const fold = new PartFold();
    let chunks = 0;
    let finished = false;
    const emit = (chunk: WireMap): void => {
      chunks++;
      opts.onChunk(chunk);
    };
    const onMessage = (ev: SseMessage, read: SseRead): void => {
      const data = ev.data.trim();
      if (data === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        read.fail(
          new AgentRxError(
            'stream_error',
            `The model stream from ${opts.target} sent a malformed chunk (not JSON) after ${chunks} chunks: ${truncate(data, 120)}`,
            { chunks, transient: false },
          ),
        );
        return;
      }
      if (!isMap(parsed) || jsonDepthExceeds(parsed, MAX_JSON_DEPTH + 6)) {
        read.fail(
          new AgentRxError(
            'stream_error',
            `The model stream from ${opts.target} sent a chunk that is not a JSON object of a sane depth after ${chunks} chunks`,
            { chunks, transient: false },
          ),
        );
        return;
      }
      if (parsed['error'] !== undefined) {
        const status = isMap(parsed['error']) ? String(parsed['error']['status'] ?? '') : '';
        const transient = chunks === 0 && ['UNAVAILABLE', 'INTERNAL', 'RESOURCE_EXHAUSTED'].includes(status);
        read.fail(
          new AgentRxError(
            'stream_error',
            `The model stream from ${opts.target} reported an error after ${chunks} chunks: ${status}: ${truncate(errorText(parsed), 300)}`,
            { chunks, transient },
          ),
        );
        return;
      }
      const id = String(parsed['responseId'] ?? '');
      const candidate = Array.isArray(parsed['candidates']) ? (parsed['candidates'][0] as unknown) : undefined;
      if (isMap(candidate)) {
        for (const delta of fold.add(partsOf(candidate))) emit({ id, object: 'chat.completion.chunk', choices: [{ index: 0, delta }] });
        if (typeof candidate['finishReason'] === 'string') {
          finished = true;
          emit({
            id,
            object: 'chat.completion.chunk',
            choices: [{ index: 0, delta: {}, finish_reason: finishOf(candidate['finishReason'], fold.calls.length > 0) }],
          });
        }
      }
      if (isMap(parsed['usageMetadata']) && finished) emit({ id, object: 'chat.completion.chunk', choices: [], usage: chatUsage(parsed['usageMetadata']) });
    };
    readSse(body, {
      idleTimeoutMs: opts.idleTimeoutMs,
      ...(opts.maxFrameBytes !== undefined ? { maxFrameBytes: opts.maxFrameBytes } : {}),
      signal: opts.signal,
      scheduler: opts.scheduler ?? sharedScheduler,
      onMessage,
      onStop: (stop) => streamStopError(stop, opts, chunks, 'a finish reason', finished),
      onDone: (error) => (error ? reject(error) : resolve({ chunks, extra: fold.extra() })),
    });
  });
}

/** Folds the model's parts: what each adds as chat deltas, the calls, and the parts verbatim. */
class PartFold {
  readonly parts: WireMap[] = [];
  readonly calls: WireMap[] = [];
  private readonly texts: string[] = [];
  private readonly thoughts: string[] = [];

  /** Adds parts; returns the chat deltas they mean, in order. */
  add(parts: readonly WireMap[]): WireMap[] {
    const deltas: WireMap[] = [];
    for (const part of parts) {
      this.parts.push(part);
      if (typeof part['text'] === 'string' && part['thought'] === true) {
        this.thoughts.push(part['text']);
        deltas.push({ reasoning_content: part['text'] });
      } else if (typeof part['text'] === 'string') {
        this.texts.push(part['text']);
        if (part['text'] !== '') deltas.push({ content: part['text'] });
      } else if (isMap(part['functionCall'])) {
        const fc = part['functionCall'];
        const id = typeof fc['id'] === 'string' && fc['id'] !== '' ? fc['id'] : `${LOCAL_ID}${newCallId()}`;
        const call = { id, type: 'function', function: { name: String(fc['name'] ?? ''), arguments: JSON.stringify(fc['args'] ?? {}) } };
        deltas.push({ tool_calls: [{ index: this.calls.length, ...call }] });
        this.calls.push(call);
      }
    }
    return deltas;
  }

  /** The parts to send back, and the thoughts' text. */
  extra(): WireMap {
    return { ...(this.thoughts.length > 0 ? { reasoning_content: this.thoughts.join('') } : {}), gemini_parts: this.parts.map((p) => ({ ...p })) };
  }

  message(): WireMap {
    const text = this.texts.join('');
    const message: WireMap = { role: 'assistant', content: text !== '' ? text : this.calls.length > 0 ? null : '', ...this.extra() };
    if (this.calls.length > 0) message['tool_calls'] = this.calls;
    return message;
  }
}

/** `POST <baseUrl>/models/<model>:generateContent` (baseUrl `https://generativelanguage.googleapis.com/v1beta`). */
export const geminiApi: ModelApi = {
  path: (model, stream) => `models/${encodeURIComponent(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  body: geminiRequest,
  headers: (apiKey): Record<string, string> => (apiKey !== undefined ? { 'x-goog-api-key': apiKey } : {}),
  parseWhole: parseGeminiResponse,
  readStream: readGeminiStream,
  notFoundHint: 'Check that baseUrl ends with /v1beta (https://generativelanguage.googleapis.com/v1beta) and that the model exists.',
  answerName: 'GenerateContentResponse',
};

/**
 * An assistant chat message as model parts: the parts it came with when it came from this API
 * (thoughts and signatures kept), else its text and calls. Records each call's function name by id.
 */
function modelParts(m: WireMap, names: Map<string, string>): WireMap[] {
  const calls = Array.isArray(m['tool_calls']) ? (m['tool_calls'] as unknown[]).filter(isMap) : [];
  for (const c of calls) if (isMap(c['function'])) names.set(String(c['id'] ?? ''), String(c['function']['name'] ?? ''));
  if (Array.isArray(m['gemini_parts'])) return (m['gemini_parts'] as unknown[]).filter(isMap).map((p) => ({ ...p }));
  const text = textOf(m['content']);
  const parts: WireMap[] = text !== '' ? [{ text }] : [];
  for (const c of calls) {
    const fn = isMap(c['function']) ? c['function'] : {};
    const id = String(c['id'] ?? '');
    parts.push({ functionCall: { name: fn['name'], args: argsOf(fn['arguments']), ...(id.startsWith(LOCAL_ID) || id === '' ? {} : { id }) } });
  }
  return parts;
}

function argsOf(args: unknown): WireMap {
  if (isMap(args)) return args;
  try {
    const parsed: unknown = typeof args === 'string' && args !== '' ? JSON.parse(args) : {};
    return isMap(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function partsOf(candidate: WireMap): WireMap[] {
  const content = candidate['content'];
  return isMap(content) && Array.isArray(content['parts']) ? (content['parts'] as unknown[]).filter(isMap) : [];
}

function declaration(t: WireMap): WireMap {
  const fn = isMap(t['function']) ? t['function'] : {};
  return { name: fn['name'], description: fn['description'] ?? '', parametersJsonSchema: isMap(fn['parameters']) ? fn['parameters'] : { type: 'object' } };
}

function finishOf(reason: unknown, calls: boolean): string | undefined {
  if (typeof reason !== 'string') return undefined;
  if (reason === 'STOP' && calls) return 'tool_calls';
  return FINISH[reason] ?? reason.toLowerCase();
}

/** usageMetadata in chat form: prompt tokens include cached ones; thoughts count as output. */
function chatUsage(usage: unknown): WireMap | undefined {
  if (!isMap(usage)) return undefined;
  const n = (k: string): number => (typeof usage[k] === 'number' ? usage[k] : 0);
  return {
    prompt_tokens: n('promptTokenCount'),
    completion_tokens: n('candidatesTokenCount') + n('thoughtsTokenCount'),
    prompt_tokens_details: { cached_tokens: n('cachedContentTokenCount') },
  };
}
