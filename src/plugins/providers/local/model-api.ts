import type { Readable } from 'node:stream';
import type { ChatCompletionResult } from './chat-completion.js';
import { parseChatCompletion, readChatStream, type ReadChatStreamOptions } from './chat-stream.js';
import type { WireMap } from './chat-wire.js';

/**
 * One model API under the Local loop (`providers.local.api`). The loop keeps its conversation in
 * chat-completions shape (what it stores for a resume and reads tool calls from); an API
 * translates it to its own request, and its answers back: a whole answer as a chat completion, a
 * stream as `chat.completion.chunk`-shaped chunks handed on as they arrive (text, reasoning,
 * tool-call fragments, the finish reason, usage). What only the native API carries and must go
 * back with the next request (thinking signatures, encrypted reasoning, thought parts) rides on
 * the assistant message as a field of its own, which only that API reads.
 *
 * The transport — retries, timeouts, error wording, redaction — is the model client's, the same
 * for every API.
 */
export interface ModelApi {
  /** The request path under `baseUrl` (Gemini's names the model and the method). */
  path(model: string, stream: boolean): string;
  /** The request body; `fields` are the session's settings as chat fields (`temperature`, `top_p`, `max_tokens`, `response_format`). */
  body(model: string, tools: readonly WireMap[], messages: readonly WireMap[], fields: WireMap, stream: boolean): WireMap;
  /** Headers of one request: the key where this API takes it, versions, betas. */
  headers(apiKey: string | undefined, body: WireMap): Record<string, string>;
  /** A whole answer as a chat completion; throws `provider_error` for a shape it does not know. */
  parseWhole(text: string, target: string): ChatCompletionResult;
  /** Reads a streamed answer (see `readChatStream` for the rejections); `extra` goes on the folded assistant message. */
  readStream(body: Readable, opts: ReadChatStreamOptions): Promise<{ chunks: number; extra?: WireMap }>;
  /** What a 404 most likely means, as a sentence. */
  readonly notFoundHint: string;
  /** What a whole answer is called (in the message of a 2xx that is a web page). */
  readonly answerName: string;
}

/** OpenAI-compatible `POST /chat/completions`: the loop's own shape, sent as it is. */
export const openAiChatApi: ModelApi = {
  path: () => 'chat/completions',
  body: (model, tools, messages, fields, stream) => ({
    ...fields,
    model,
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  }),
  headers: (apiKey): Record<string, string> => (apiKey !== undefined ? { Authorization: `Bearer ${apiKey}` } : {}),
  parseWhole: parseChatCompletion,
  readStream: readChatStream,
  notFoundHint: 'Check that baseUrl ends with /v1 and that the model exists on the server (for Ollama: ollama pull <model>).',
  answerName: 'chat completion',
};
