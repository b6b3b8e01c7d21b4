import type { Readable } from 'node:stream';
import type { AxiosRequestConfig, AxiosResponse } from 'axios';
import { AgentRxError, toAgentRxError } from '../../../core/errors.js';
import { isSecretHeader, LazyHttpClient, streamRequest, type HttpClientFactory } from '../../../core/http/http-client-factory.js';
import { isTransientError, isTransientStatus, withRetry, type RetryAttemptInfo } from '../../../core/http/retry.js';
import type { Logger } from '../../../core/logger.js';
import { sharedScheduler } from '../../../core/util/time-slice-scheduler.js';
import {
  ChunkAccumulator,
  errorText,
  type CallFragment,
  noChoicesError,
  readBodyText,
  truncate,
  type ChatCompletionResult,
  type WireMap,
} from './chat-stream.js';
import { modelApiOf } from './model-apis.js';
import type { ModelApi } from './model-api.js';
import { newCallId } from './local-conversation.js';
import type { LocalProviderOptions } from './local.config.js';

/** Receives each streamed chunk as it arrives, with the tool-call fragments it added. */
export type ChunkListener = (chunk: WireMap, fragments: readonly CallFragment[]) => void;

/**
 * The model call of the `local` provider (guard 5 of wire-protocols 3(c)): one
 * `POST /chat/completions` to the configured OpenAI-compatible endpoint, streamed or not, with
 * its retries, its error classification and the redaction of credentials from anything shown.
 *
 * Retries: a call is repeated (whole request, backoff with equal jitter, Retry-After honoured)
 * only after a transient failure (408/429/5xx, reset, refused, request timeout), and in streaming
 * mode only while no chunk of that attempt has been handed to `onChunk`: a stream that breaks
 * after its first chunk fails with `stream_error`, so already-emitted text is never repeated.
 * Holds no per-session state: one instance serves every session of the provider.
 */
export class LocalModelClient {
  /** Made at the first model call (axios loads then). */
  private readonly http: LazyHttpClient;
  /** The endpoint without credentials, as shown in messages. */
  private readonly baseUrl: string;
  /** The model API (`options.api`): its request and answer shapes. */
  private readonly api: ModelApi;

  constructor(
    private readonly options: LocalProviderOptions,
    private readonly httpClientFactory: HttpClientFactory,
    private readonly logger: Logger,
  ) {
    this.api = modelApiOf(options.api);
    this.baseUrl = redactUrl(options.baseUrl.replace(/\/+$/, ''));
    // The key goes where the API takes it, with each request (see `post`).
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    this.http = new LazyHttpClient(httpClientFactory, { baseURL: options.baseUrl, headers, timeoutMs: options.requestTimeoutMs });
  }

  /**
   * Calls the model with `messages` (and `tools` when there are any), retried as described on the
   * class; `fields` are more request fields (sampling, `response_format`). Streaming: `onChunk` receives each chunk as it arrives, with what its tool-call deltas
   * added to their calls (`ChunkAccumulator.add`). Resolves with the whole answer; rejects with an
   * AgentRxError (`cancelled` once `signal` aborted).
   */
  call(
    model: string,
    tools: readonly WireMap[],
    messages: readonly WireMap[],
    signal: AbortSignal,
    onChunk: ChunkListener,
    fields: WireMap = {},
  ): Promise<ChatCompletionResult> {
    const path = this.api.path(model, this.options.stream);
    const spec: CallSpec = { body: this.api.body(model, tools, messages, fields, this.options.stream), path, target: `POST ${this.baseUrl}/${path}` };
    return withRetry(() => (this.options.stream ? this.streamOnce(spec, signal, onChunk) : this.requestOnce(spec, signal)), {
      maxRetries: this.options.maxRetries,
      baseMs: this.options.retryBaseMs,
      signal,
      onRetry: (info) => this.logRetry(info),
    });
  }

  private async requestOnce(spec: CallSpec, signal: AbortSignal): Promise<ChatCompletionResult> {
    const { target } = spec;
    let res: AxiosResponse<string>;
    try {
      res = await this.post<string>(spec, signal, {
        responseType: 'text',
        transformResponse: [(d: unknown) => d],
        validateStatus: () => true,
      });
    } catch (e) {
      throw this.transportError(e, signal, target);
    }
    if (res.status < 200 || res.status > 299) throw this.httpError(res.status, String(res.data ?? ''), res.headers, target);
    const contentType = String(res.headers['content-type'] ?? '');
    if (isHtml(contentType)) throw this.notTheApi(res.status, contentType, target);
    return this.api.parseWhole(String(res.data ?? ''), target);
  }

  private async streamOnce(spec: CallSpec, signal: AbortSignal, onChunk: ChunkListener): Promise<ChatCompletionResult> {
    const { target } = spec;
    let res: AxiosResponse<Readable>;
    try {
      res = await this.post<Readable>(spec, signal, {
        responseType: 'stream',
        headers: { Accept: 'text/event-stream' },
        validateStatus: () => true,
      });
    } catch (e) {
      throw this.transportError(e, signal, target);
    }
    if (res.status < 200 || res.status > 299)
      throw this.httpError(res.status, await readBodyText(res.data, 65_536, this.options.idleTimeoutMs), res.headers, target);
    const contentType = String(res.headers['content-type'] ?? '');
    if (isHtml(contentType)) {
      res.data.destroy();
      throw this.notTheApi(res.status, contentType, target);
    }
    if (contentType.includes('application/json')) {
      // A server that ignored `stream: true` answered with a whole completion.
      return this.api.parseWhole(await readBodyText(res.data, 16 * 1024 * 1024, this.options.idleTimeoutMs), target);
    }
    const acc = new ChunkAccumulator();
    let chunks = 0;
    let extra: WireMap = {};
    try {
      const read = {
        idleTimeoutMs: this.options.idleTimeoutMs,
        target,
        signal,
        maxFrameBytes: this.options.maxFrameBytes,
        onChunk: (chunk: WireMap) => onChunk(chunk, acc.add(chunk)),
      };
      ({ chunks, extra = {} } = await this.api.readStream(res.data, read));
    } catch (e) {
      throw this.redactError(this.withContentType(toAgentRxError(e, 'stream_error'), contentType));
    }
    if (!acc.hasChoices) throw noChoicesError(target, chunks);
    const result = acc.result(newCallId);
    // What the chunks do not carry (Messages: the thinking blocks, sent back with the next request).
    return Object.keys(extra).length > 0 ? { ...result, message: { ...result.message, ...extra } } : result;
  }

  /**
   * POSTs `body` to `chat/completions` from a task of the shared scheduler: the request set-up
   * (config merge, body serialization, connect or socket reuse) is synchronous work that, for
   * many sessions calling the model at once, would otherwise run back to back in one loop turn.
   * A call whose signal aborted while it waited is rejected without being sent. A streamed call
   * goes through `HttpClientFactory.stream` (the instance's interceptors, then a lean transport).
   */
  private async post<T>(spec: CallSpec, signal: AbortSignal, config: AxiosRequestConfig): Promise<AxiosResponse<T>> {
    const http = await this.http.get();
    return new Promise<AxiosResponse<T>>((resolve, reject) => {
      sharedScheduler.schedule(() => {
        if (signal.aborted) {
          reject(new AgentRxError('cancelled', 'The model call was cancelled'));
          return;
        }
        const headers = { ...(config.headers as Record<string, string> | undefined), ...this.api.headers(this.options.apiKey, spec.body) };
        const request = { ...config, headers, method: 'POST', url: spec.path, data: spec.body, signal } as const;
        const sent = config.responseType === 'stream' ? streamRequest(this.httpClientFactory, http, request) : http.request<T>(request);
        (sent as Promise<AxiosResponse<T>>).then(resolve, reject);
      });
    });
  }

  private transportError(e: unknown, signal: AbortSignal, target: string): AgentRxError {
    if (signal.aborted) return new AgentRxError('cancelled', 'The model call was cancelled');
    if (e instanceof AgentRxError) return e;
    const o = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; message?: unknown };
    const code = typeof o.code === 'string' ? o.code : undefined;
    const transient = isTransientError(e);
    const raw = typeof o.message === 'string' ? this.redact(o.message) : String(e);
    if (code === 'ECONNREFUSED') {
      return new AgentRxError(
        'http_error',
        `Cannot connect to the local model endpoint ${this.baseUrl} (connection refused): is the server running, and is baseUrl right?`,
        { code, url: this.baseUrl, transient },
      );
    }
    if (code === 'ETIMEDOUT' || code === 'ECONNABORTED') {
      return new AgentRxError('timeout', `No response from ${target} within ${this.options.requestTimeoutMs} ms`, {
        kind: 'request',
        code,
        url: this.baseUrl,
        transient: true,
      });
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return new AgentRxError('http_error', `Cannot resolve the host of the local model endpoint ${this.baseUrl} (${code})`, {
        code,
        url: this.baseUrl,
        transient,
      });
    }
    return new AgentRxError('http_error', `The request ${target} failed: ${raw}`, { code, url: this.baseUrl, transient });
  }

  private httpError(status: number, bodyText: string, headers: AxiosResponse['headers'], target: string): AgentRxError {
    const detail = this.redact(truncate(errorText(bodyText).trim(), 300));
    let hint = '';
    if (status === 401 || status === 403) hint = ' Check the local provider apiKey: the endpoint rejected the credentials.';
    else if (status === 404) hint = ` ${this.api.notFoundHint}`;
    const retryAfter = headers?.['retry-after'];
    return new AgentRxError('http_error', `${target} returned HTTP ${status}${detail ? `: ${detail}` : ''}.${hint}`, {
      status,
      url: this.baseUrl,
      transient: isTransientStatus(status),
      ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
    });
  }

  /**
   * A 2xx answer that is a web page, not the API (a proxy, a UI, a login page): `baseUrl` most
   * likely lacks `/v1` or points at the wrong port. Not retried; the body is not quoted.
   */
  private notTheApi(status: number, contentType: string, target: string): AgentRxError {
    return new AgentRxError(
      'http_error',
      `${target} answered HTTP ${status} with content-type '${this.shown(contentType)}', not a ${this.api.answerName} (JSON) or an event stream: is baseUrl pointing at the API, including /v1?`,
      { status, contentType: this.shown(contentType), url: this.baseUrl, transient: false },
    );
  }

  /**
   * A stream that failed before its first chunk while its content type was not
   * `text/event-stream`: the body was something else, so say what it was, and do not retry.
   */
  private withContentType(e: AgentRxError, contentType: string): AgentRxError {
    if (e.code !== 'stream_error' || e.details?.['chunks'] !== 0 || contentType.includes('text/event-stream')) return e;
    return new AgentRxError(
      'stream_error',
      `${e.message}; the response's content-type was '${this.shown(contentType) || '(none)'}', not text/event-stream: is baseUrl pointing at the API, including /v1?`,
      { ...e.details, contentType: this.shown(contentType), transient: false },
    );
  }

  /** A response header value as shown in a message: short, without credentials. */
  private shown(value: string): string {
    return this.redact(truncate(value, 100));
  }

  private logRetry(info: RetryAttemptInfo): void {
    const reason = info.error instanceof Error ? this.redact(info.error.message) : String(info.error);
    this.logger.warn(`local: transient model-call failure, retry ${info.retry}/${info.maxRetries} in ${info.delayMs} ms`, {
      retry: info.retry,
      maxRetries: info.maxRetries,
      delayMs: info.delayMs,
      fromRetryAfter: info.fromRetryAfter,
      reason,
    });
  }

  /** Removes the API key and credential-like header values from any text that might have echoed them. */
  private redact(text: string): string {
    let out = text;
    const secretHeaders = Object.entries(this.options.headers ?? {})
      .filter(([name]) => isSecretHeader(name) || /key|token|secret|auth|password/i.test(name))
      .map(([, value]) => value);
    const secrets = [this.options.apiKey, ...secretHeaders].filter((s): s is string => typeof s === 'string' && s.length >= 4);
    for (const s of secrets) out = out.split(s).join('[redacted]');
    return out;
  }

  private redactError(e: AgentRxError): AgentRxError {
    const message = this.redact(e.message);
    return message === e.message ? e : new AgentRxError(e.code, message, e.details);
  }
}

/** One model call's request: its body, its path under baseUrl, and `POST <url>` as messages show it. */
interface CallSpec {
  readonly body: WireMap;
  readonly path: string;
  readonly target: string;
}

function isHtml(contentType: string): boolean {
  return /^\s*(text\/html|application\/xhtml\+xml)\b/i.test(contentType);
}

/** Drops user:password from a URL before it appears in a message. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = '';
      u.password = '';
      return u.toString().replace(/\/+$/, '');
    }
    return url;
  } catch {
    return url;
  }
}
