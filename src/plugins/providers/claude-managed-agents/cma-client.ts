import type { Readable } from 'node:stream';
import type { AxiosInstance, AxiosResponse } from 'axios';
import { AgentRxError, isAgentRxError } from '../../../core/errors.js';
import { clientOf, HttpClientFactoryImpl, streamRequest, type HttpClientFactory, type LazyHttpClient } from '../../../core/http/http-client-factory.js';
import { isTransientError, withRetry, type RetryAttemptInfo } from '../../../core/http/retry.js';
import type { Logger } from '../../../core/logger.js';
import type { RawEvent } from '../../../core/model.js';
import { statusError, transportError } from './cma-http-errors.js';
import { isMap, truncate, type WireMap } from './cma-wire.js';

/**
 * The Claude Managed Agents control plane over one injected, configured axios instance (the
 * instance carries `x-api-key`, `anthropic-version`, `anthropic-beta` and `content-type`; this
 * class never sees the key). Every method takes an AbortSignal and rejects with an AgentRxError:
 * `http_error` (with `details.status`, `details.errorType`) for a non-2xx answer or a transport
 * failure (`details.code`), `cancelled` when the signal fires, `provider_error` for a malformed
 * answer or a list walk that repeats a cursor.
 *
 * Retry policy (the reason: a POST that creates or sends must not be replayed blindly):
 * - GET, DELETE and archive calls are idempotent: retried on any transient failure (408, 429,
 *   5xx, reset, refused, timeout), `maxRetries` times, equal-jitter backoff, Retry-After honoured.
 * - Creating an agent or an environment is retried the same way: names are content-addressed, so
 *   a replay that already took effect answers 409 and the caller recovers the resource by name.
 * - Creating a session and sending events are retried only when the request certainly did not
 *   take effect: 408, 429, 503, 529, or a connection that was refused / never resolved. An
 *   ambiguous failure (another 5xx, a reset or timeout after the request went out) is not
 *   replayed; `sendEvents` with a `reconcile` callback then lists the history and re-sends only
 *   what the service does not have (tool results are recognizable by `custom_tool_use_id`).
 */
export class CmaClient {
  /**
   * @param http The configured axios instance (from `HttpClientFactory`), or one made at first use; the caller owns it.
   * @param opts Retry and paging settings.
   * @param logger Gets retry and reconcile notes (method, path, status; never headers).
   * @param httpClientFactory Sends the event stream (`HttpClientFactory.stream`) through `http`'s
   *   pipeline; default: the built-in factory's lean streaming transport.
   */
  constructor(
    private readonly http: AxiosInstance | LazyHttpClient,
    private readonly opts: CmaClientOptions,
    private readonly logger: Logger,
    private readonly httpClientFactory: HttpClientFactory = defaultStreamFactory,
  ) {}

  // ── agents and environments ────────────────────────────────────────────────────────────────

  /** `POST /v1/agents`. Retried on transient failures (a replay that took effect answers 409). */
  createAgent(body: WireMap, signal: AbortSignal): Promise<WireMap> {
    return this.json('POST', '/v1/agents', { body, signal, retry: 'transient' });
  }

  /** `GET /v1/agents/{id}`. */
  getAgent(id: string, signal: AbortSignal): Promise<WireMap> {
    return this.json('GET', `/v1/agents/${enc(id)}`, { signal, retry: 'transient' });
  }

  /** Every non-archived agent (`GET /v1/agents`, all pages); archived ones too with `includeArchived` (`include_archived=true`). */
  listAgents(signal: AbortSignal, opts: { readonly includeArchived?: boolean } = {}): Promise<WireMap[]> {
    return this.walk('/v1/agents', signal, opts.includeArchived === true ? { include_archived: 'true' } : {});
  }

  /** `POST /v1/agents/{id}/archive`. */
  archiveAgent(id: string, signal: AbortSignal): Promise<WireMap> {
    return this.json('POST', `/v1/agents/${enc(id)}/archive`, { body: {}, signal, retry: 'transient' });
  }

  /** `POST /v1/environments`. Retried on transient failures (a replay that took effect answers 409). */
  createEnvironment(body: WireMap, signal: AbortSignal): Promise<WireMap> {
    return this.json('POST', '/v1/environments', { body, signal, retry: 'transient' });
  }

  /** `GET /v1/environments/{id}`. */
  getEnvironment(id: string, signal: AbortSignal): Promise<WireMap> {
    return this.json('GET', `/v1/environments/${enc(id)}`, { signal, retry: 'transient' });
  }

  /** Every non-archived environment (`GET /v1/environments`, all pages); archived ones too with `includeArchived` (`include_archived=true`). */
  listEnvironments(signal: AbortSignal, opts: { readonly includeArchived?: boolean } = {}): Promise<WireMap[]> {
    return this.walk('/v1/environments', signal, opts.includeArchived === true ? { include_archived: 'true' } : {});
  }

  /** `POST /v1/environments/{id}/archive`. */
  archiveEnvironment(id: string, signal: AbortSignal): Promise<WireMap> {
    return this.json('POST', `/v1/environments/${enc(id)}/archive`, { body: {}, signal, retry: 'transient' });
  }

  // ── sessions ───────────────────────────────────────────────────────────────────────────────

  /** `POST /v1/sessions`. Retried only when it certainly did not take effect. */
  createSession(body: WireMap, signal: AbortSignal): Promise<WireMap> {
    return this.json('POST', '/v1/sessions', { body, signal, retry: 'unprocessed' });
  }

  /** `GET /v1/sessions/{id}`. */
  getSession(id: string, signal: AbortSignal): Promise<WireMap> {
    return this.json('GET', `/v1/sessions/${enc(id)}`, { signal, retry: 'transient' });
  }

  /** `POST /v1/sessions/{id}/archive`. */
  archiveSession(id: string, signal: AbortSignal): Promise<WireMap> {
    return this.json('POST', `/v1/sessions/${enc(id)}/archive`, { body: {}, signal, retry: 'transient' });
  }

  /** `DELETE /v1/sessions/{id}`. */
  deleteSession(id: string, signal: AbortSignal): Promise<WireMap> {
    return this.json('DELETE', `/v1/sessions/${enc(id)}`, { signal, retry: 'transient' });
  }

  // ── events ─────────────────────────────────────────────────────────────────────────────────

  /**
   * `POST /v1/sessions/{id}/events` with `{events}`. Rejects before sending when `events` is
   * empty (the service would answer 400). Retried only when it certainly did not take effect;
   * after an ambiguous failure, when `reconcile` is given, lists the history, asks `reconcile`
   * which events are still missing there and sends only those (nothing missing = success), at
   * most `maxRetries` times. Without `reconcile` an ambiguous failure is final.
   */
  async sendEvents(
    sessionId: string,
    events: readonly WireMap[],
    signal: AbortSignal,
    reconcile?: (history: readonly RawEvent[]) => readonly WireMap[],
  ): Promise<WireMap> {
    if (events.length === 0) throw new AgentRxError('provider_error', 'refusing to send an empty events list (the service rejects it)');
    const path = `/v1/sessions/${enc(sessionId)}/events`;
    try {
      return await this.json('POST', path, { body: { events }, signal, retry: 'unprocessed' });
    } catch (e) {
      if (!reconcile || signal.aborted || !isTransientError(e)) throw e;
      let last: unknown = e;
      for (let attempt = 1; attempt <= this.opts.maxRetries; attempt++) {
        this.logger.warn('claude-managed-agents: sending events had an ambiguous outcome; reconciling with the history', {
          path,
          attempt,
          error: (last as Error).message,
        });
        const missing = reconcile(await this.listAllEvents(sessionId, signal));
        if (missing.length === 0) return { data: [] };
        try {
          return await this.json('POST', path, { body: { events: missing }, signal, retry: 'unprocessed' });
        } catch (again) {
          if (signal.aborted || !isTransientError(again)) throw again;
          last = again;
        }
      }
      throw last;
    }
  }

  /** One page of `GET /v1/sessions/{id}/events?limit=&page=`: `{data, next_page}`. */
  async listEventsPage(sessionId: string, page: string | undefined, signal: AbortSignal): Promise<{ data: RawEvent[]; nextPage: string | undefined }> {
    const body = await this.json('GET', `/v1/sessions/${enc(sessionId)}/events`, {
      query: { limit: this.opts.listPageSize, ...(page !== undefined ? { page } : {}) },
      signal,
      retry: 'transient',
    });
    return pageOf(body, `/v1/sessions/${sessionId}/events`);
  }

  /**
   * The whole event history of a session, oldest first, walking `next_page` cursors until the
   * cursor is absent or empty. A cursor that was already used anywhere in the walk ends it with a
   * `provider_error` (never a loop).
   */
  async listAllEvents(sessionId: string, signal: AbortSignal): Promise<RawEvent[]> {
    const out: RawEvent[] = [];
    const used = new Set<string>();
    let page: string | undefined;
    for (;;) {
      const res = await this.listEventsPage(sessionId, page, signal);
      out.push(...res.data);
      if (res.nextPage === undefined) return out;
      if (used.has(res.nextPage)) {
        throw new AgentRxError(
          'provider_error',
          `listing the events of session ${sessionId} returned the cursor "${truncate(res.nextPage, 60)}" a second time after ${used.size + 1} pages; stopping instead of looping`,
          {
            sessionId,
            pages: used.size + 1,
          },
        );
      }
      used.add(res.nextPage);
      page = res.nextPage;
    }
  }

  /**
   * Opens the event stream (`GET <streamPath>` with `accept: text/event-stream`, optional
   * `event_deltas=agent.message`). Resolves with the body of a 2xx answer; rejects with
   * `http_error` otherwise. Not retried (the Session's reconnect loop owns that). Aborting
   * `signal` aborts the request and the body.
   */
  async openEventStream(sessionId: string, opts: { readonly signal: AbortSignal; readonly eventDeltas: boolean }): Promise<Readable> {
    const path = this.streamPathOf(sessionId);
    let res: AxiosResponse<Readable>;
    try {
      res = await streamRequest(this.httpClientFactory, await clientOf(this.http), {
        method: 'GET',
        url: path,
        params: opts.eventDeltas ? { event_deltas: 'agent.message' } : undefined,
        headers: { accept: 'text/event-stream' },
        validateStatus: () => true,
        signal: opts.signal,
        // Heartbeat-free stalls are the idle timer's business, not axios's.
        timeout: this.opts.requestTimeoutMs,
      });
    } catch (e) {
      throw transportError('GET', path, e, opts.signal);
    }
    if (res.status >= 200 && res.status < 300) return res.data;
    const text = await readText(res.data);
    throw statusError('GET', path, res.status, text, res.headers);
  }

  /** The stream path of a session (for messages). */
  streamPathOf(sessionId: string): string {
    return this.opts.streamPath.replace('{id}', enc(sessionId));
  }

  // ── plumbing ───────────────────────────────────────────────────────────────────────────────

  private async walk(path: string, signal: AbortSignal, extra: Record<string, string> = {}): Promise<WireMap[]> {
    const out: WireMap[] = [];
    const used = new Set<string>();
    let page: string | undefined;
    for (;;) {
      const body = await this.json('GET', path, {
        query: { ...extra, limit: this.opts.listPageSize, ...(page !== undefined ? { page } : {}) },
        signal,
        retry: 'transient',
      });
      const res = pageOf(body, path);
      out.push(...res.data.filter(isMap));
      if (res.nextPage === undefined) return out;
      if (used.has(res.nextPage))
        throw new AgentRxError('provider_error', `listing ${path} repeated a cursor after ${used.size + 1} pages; stopping instead of looping`, { path });
      used.add(res.nextPage);
      page = res.nextPage;
    }
  }

  private async json(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    o: { body?: unknown; query?: Record<string, string | number>; signal: AbortSignal; retry: 'transient' | 'unprocessed' },
  ): Promise<WireMap> {
    const attempt = async (): Promise<WireMap> => {
      let res: AxiosResponse<string>;
      try {
        res = await (
          await clientOf(this.http)
        ).request<string>({
          method,
          url: path,
          params: o.query,
          data: o.body === undefined ? undefined : JSON.stringify(o.body),
          responseType: 'text',
          transformResponse: (x: unknown) => x,
          validateStatus: () => true,
          signal: o.signal,
        });
      } catch (e) {
        throw transportError(method, path, e, o.signal);
      }
      return jsonMapOf(method, path, res, 'provider_error');
    };
    return withRetry(attempt, {
      maxRetries: this.opts.maxRetries,
      baseMs: this.opts.retryBaseMs,
      signal: o.signal,
      isRetryable: o.retry === 'transient' ? isTransientError : isUnprocessed,
      onRetry: (info: RetryAttemptInfo) =>
        this.logger.debug('claude-managed-agents: retrying a control-plane call', {
          method,
          path,
          retry: info.retry,
          maxRetries: info.maxRetries,
          delayMs: info.delayMs,
          error: (info.error as Error).message,
        }),
    });
  }
}

/** Settings of a `CmaClient`. */
export interface CmaClientOptions {
  /** Retries of a retryable call (and reconcile rounds of an ambiguous send). */
  readonly maxRetries: number;
  /** Backoff base, ms (equal jitter, doubling; a Retry-After header wins). */
  readonly retryBaseMs: number;
  /** `limit` of each list page. */
  readonly listPageSize: number;
  /** Stream path with an `{id}` placeholder. */
  readonly streamPath: string;
  /** Wait for the stream's response headers, ms. */
  readonly requestTimeoutMs: number;
}

/** Streams through the built-in factory when the caller passed none (it holds no state). */
const defaultStreamFactory = new HttpClientFactoryImpl();

const UNPROCESSED_STATUSES = new Set([408, 429, 503, 529]);
const UNSENT_CODES = new Set(['ECONNREFUSED', 'EAI_AGAIN', 'ENOTFOUND']);

/**
 * True when a failed request certainly did not take effect, so even a non-idempotent POST may be
 * repeated: 408, 429, 503, 529, or a connection that was refused or whose host never resolved.
 */
export function isUnprocessed(error: unknown): boolean {
  if (!isAgentRxError(error)) return false;
  const status = error.details?.['status'];
  if (typeof status === 'number') return UNPROCESSED_STATUSES.has(status);
  const code = error.details?.['code'];
  return typeof code === 'string' && UNSENT_CODES.has(code);
}

function pageOf(body: WireMap, what: string): { data: RawEvent[]; nextPage: string | undefined } {
  const data = body['data'];
  if (!Array.isArray(data)) throw new AgentRxError('provider_error', `listing ${what} answered without a "data" array`);
  const next = body['next_page'];
  return { data: data.filter(isMap), nextPage: typeof next === 'string' && next.trim() !== '' ? next : undefined };
}

function readText(body: Readable, max = 16_384): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    body.setEncoding('utf8');
    body.on('data', (s: string) => {
      if (text.length < max) text += s;
    });
    body.on('end', () => resolve(text));
    body.on('error', () => resolve(text));
    body.on('close', () => resolve(text));
  });
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

/**
 * The JSON object a control-plane answer holds (`{}` for an empty body): a non-2xx status is the
 * `statusError`, a body that is not a JSON object an AgentRxError of `code` naming the call.
 */
export function jsonMapOf(method: string, path: string, res: AxiosResponse<string>, code: 'provider_error' | 'unexpected_response'): WireMap {
  if (res.status < 200 || res.status >= 300) throw statusError(method, path, res.status, res.data, res.headers);
  if (res.data === '' || res.data === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(res.data);
    if (isMap(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw new AgentRxError(code, `${method} ${path} answered ${res.status} with a body that is not a JSON object: ${truncate(String(res.data), 200)}`, {
    status: res.status,
  });
}
