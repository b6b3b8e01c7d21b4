import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { AxiosInstance, AxiosRequestConfig, AxiosResponse } from 'axios';
import { Observable } from 'rxjs';
import { inject, injectable } from '../../../core/di/inversify.js';
import { AgentRxError, toAgentRxError } from '../../../core/errors.js';
import { HttpClientFactory, isSecretHeader } from '../../../core/http/http-client-factory.js';
import { isTransientError, isTransientStatus, withRetry, type RetryAttemptInfo } from '../../../core/http/retry.js';
import { Logger } from '../../../core/logger.js';
import { sharedScheduler } from '../../../core/util/time-slice-scheduler.js';
import type { AgentProvider, KickoffOptions, OpenOptions } from '../../../core/plugin/agent-provider.js';
import { emptyUsage, type RawEvent, type ToolResult, type ToolUse, type TurnResult, type Usage } from '../../../core/model.js';
import {
  ChunkAccumulator,
  errorText,
  isMap,
  parseChatCompletion,
  readBodyText,
  readChatStream,
  truncate,
  type ChatCompletionResult,
  type WireMap,
} from './chat-stream.js';
import { LocalProviderOptions } from './local.config.js';
import { DUPLICATE_TOOL_NOTICE, FINAL_TURN_DIRECTIVE, callKey, correctiveDirective } from './loop-guards.js';

/** Input of one `pollTurn`: messages to append (kickoff, follow-up) or tool results (resume). */
export type LocalInput =
  | { readonly kind: 'messages'; readonly messages: readonly WireMap[] }
  | { readonly kind: 'resume'; readonly toolUses: readonly ToolUse[]; readonly results: readonly ToolResult[] };

/** Raw events the `local` provider synthesizes (all under the `local.*` namespace). */
export type LocalRawEvent =
  /** One streamed `chat.completion.chunk`, verbatim, as it arrived. */
  | { readonly type: 'local.chunk'; readonly chunk: WireMap }
  /**
   * The model's answer for the poll (one per successful poll, last): `message` is the assistant
   * message with duplicate calls removed; `streamed` is true when folded from `local.chunk`s.
   */
  | { readonly type: 'local.model_response'; readonly message: WireMap; readonly finish_reason: unknown; readonly usage: unknown; readonly streamed: boolean }
  /** A loop-guard message appended to the history before the model call. */
  | { readonly type: 'local.directive'; readonly role: 'final_turn' | 'corrective'; readonly text: string }
  /** A repeated call, answered in history with a duplicate notice instead of being run. */
  | { readonly type: 'local.duplicate_tool_call'; readonly id: string; readonly name: string; readonly input: unknown };

/** Per-session state of the `local` provider. Opaque to the Session. */
export interface LocalConn {
  readonly sessionId: string;
  readonly resumed: boolean;
  readonly model: string;
  /** Spec tools in OpenAI function format. */
  readonly tools: readonly WireMap[];
  /** The session's signal: aborting it aborts every in-flight model call. */
  readonly signal: AbortSignal;
  /** The full conversation sent on every call (system, user, assistant, tool messages). */
  history: WireMap[];
  /** Model calls since the last user message. */
  polls: number;
  /** Dedupe keys of the calls made since the last user message. */
  seen: Set<string>;
  /** Consecutive error results per tool name since the last user message. */
  errorCounts: Map<string, number>;
  readonly inflight: Set<AbortController>;
  closed: boolean;
  /** Model calls per request; the call that reaches it carries the final-turn directive. */
  readonly maxTurns: number | undefined;
}

/** Staged changes of one poll; committed to the conn only when the model call succeeds. */
interface Staged {
  history: WireMap[];
  polls: number;
  seen: Set<string>;
  errorCounts: Map<string, number>;
  directives: LocalRawEvent[];
}

/**
 * The `local` provider: an in-process agent loop over any OpenAI-compatible
 * `/v1/chat/completions` endpoint (Ollama, vLLM, llama.cpp server, OpenAI, gateways). One model
 * call per turn; the client holds the whole history (`transcript`).
 *
 * Retries: a model call is repeated (whole request, backoff with full jitter, Retry-After
 * honoured) only after a transient failure (408/429/5xx, reset, refused, request timeout), and in
 * streaming mode only while no chunk of that attempt has been emitted: a stream that breaks after
 * its first chunk fails the turn with `stream_error`, so already-emitted text is never repeated.
 */
@injectable()
export class LocalAgentProvider implements AgentProvider<LocalConn, LocalInput> {
  readonly id = 'local';
  readonly mode = 'request_response' as const;
  readonly supportsOutcomes = false;

  private readonly http: AxiosInstance;
  private readonly baseUrl: string;
  private readonly target: string;

  constructor(
    @inject(LocalProviderOptions) private readonly options: LocalProviderOptions,
    @inject(HttpClientFactory) httpClientFactory: HttpClientFactory,
    @inject(Logger) private readonly logger: Logger,
  ) {
    this.baseUrl = redactUrl(options.baseUrl.replace(/\/+$/, ''));
    this.target = `POST ${this.baseUrl}/chat/completions`;
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.apiKey !== undefined) headers['Authorization'] = `Bearer ${options.apiKey}`;
    this.http = httpClientFactory.create({ baseURL: options.baseUrl, headers, timeoutMs: options.requestTimeoutMs });
  }

  /** Builds the conn: fresh (system prompt from the spec) or re-seeded from `opts.history`. */
  async open(opts: OpenOptions): Promise<LocalConn> {
    if (opts.signal.aborted) throw new AgentRxError('cancelled', 'The session was cancelled before it opened');
    const seeded = (opts.history ?? []).filter(isMap).map((m) => ({ ...m }));
    const history: WireMap[] =
      seeded.length > 0 ? seeded : opts.spec.systemPrompt ? [{ role: 'system', content: opts.spec.systemPrompt }] : [];
    return {
      sessionId: opts.sessionId ?? `local-${randomUUID()}`,
      resumed: seeded.length > 0,
      model: opts.spec.model ?? this.options.model,
      tools: opts.spec.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description ?? '', parameters: t.inputSchema ?? { type: 'object' } },
      })),
      signal: opts.signal,
      history,
      polls: 0,
      seen: new Set(),
      errorCounts: new Map(),
      inflight: new Set(),
      closed: false,
      maxTurns: this.options.maxTurns ?? opts.maxTurns,
    };
  }

  sessionId(conn: LocalConn): string {
    return conn.sessionId;
  }

  resumed(conn: LocalConn): boolean {
    return conn.resumed;
  }

  kickoffInput(opts: KickoffOptions): LocalInput {
    return { kind: 'messages', messages: [{ role: 'user', content: opts.prompt ?? 'Begin.' }] };
  }

  userInput(text: string): LocalInput {
    return { kind: 'messages', messages: [{ role: 'user', content: text }] };
  }

  resumeInput(toolUses: readonly ToolUse[], results: readonly ToolResult[]): LocalInput {
    return { kind: 'resume', toolUses: [...toolUses], results: [...results] };
  }

  /**
   * Runs one turn. Cold: each subscription applies `input` to a staged copy of the conn state,
   * emits any `local.directive` events, calls the model (streaming: one `local.chunk` per chunk as
   * it arrives), then emits `local.duplicate_tool_call` events and one `local.model_response`, and
   * completes. The staged state is committed only on success, so a failed poll leaves the conn as
   * it was. Unsubscribing aborts the HTTP request; the session signal aborting errors with
   * `cancelled`.
   */
  pollTurn(conn: LocalConn, input: LocalInput): Observable<RawEvent> {
    return new Observable<RawEvent>((subscriber) => {
      if (conn.closed) {
        subscriber.error(new AgentRxError('session_closed', 'The local session is closed'));
        return undefined;
      }
      const controller = new AbortController();
      const onSessionAbort = (): void => controller.abort(conn.signal.reason);
      conn.signal.addEventListener('abort', onSessionAbort, { once: true });
      if (conn.signal.aborted) controller.abort(conn.signal.reason);
      conn.inflight.add(controller);
      let finished = false;
      const release = (): void => {
        conn.signal.removeEventListener('abort', onSessionAbort);
        conn.inflight.delete(controller);
      };

      let staged: Staged;
      try {
        staged = this.stage(conn, input);
      } catch (e) {
        release();
        subscriber.error(toAgentRxError(e, 'invalid_options'));
        return undefined;
      }
      for (const ev of staged.directives) subscriber.next(ev);

      this.callModel(conn, staged.history, controller.signal, (chunk) => subscriber.next({ type: 'local.chunk', chunk }))
        .then((result) => {
          if (subscriber.closed) return;
          const events = this.accept(conn, staged, result);
          finished = true;
          release();
          for (const ev of events) subscriber.next(ev);
          subscriber.complete();
        })
        .catch((e: unknown) => {
          finished = true;
          release();
          if (!subscriber.closed) subscriber.error(toAgentRxError(e));
        });

      return () => {
        release();
        if (!finished) controller.abort(new AgentRxError('cancelled', 'The turn was unsubscribed'));
      };
    });
  }

  /**
   * Folds a turn's events: the last `local.model_response` decides. Surviving tool calls →
   * `requires_action`; none left because every call was a duplicate → `requires_action` with
   * `continueWithoutTools`; else `stop` → `end_turn`, `tool_calls` → `requires_action`, anything
   * else → `terminated`; no response → `terminated` with an undefined stop reason.
   */
  normalize(events: readonly RawEvent[]): TurnResult {
    const response = [...events].reverse().find((e) => e['type'] === 'local.model_response');
    if (!response) {
      return { terminal: 'terminated', stopReason: undefined, text: '', customToolUses: [], serverToolUses: [], usage: emptyUsage(), events: [...events] };
    }
    const message = isMap(response['message']) ? response['message'] : {};
    const calls = Array.isArray(message['tool_calls']) ? message['tool_calls'].filter(isMap) : [];
    const hadDuplicates = events.some((e) => e['type'] === 'local.duplicate_tool_call');
    const stopReason = response['finish_reason'];
    const customToolUses = calls.map(toToolUse);
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
   * whole content of a `local.model_response` that was not streamed. A streamed response's text
   * is never reported twice.
   */
  textDelta(event: RawEvent): { readonly text: string; readonly messageId?: string } | undefined {
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

  /** Local events are synthesized per poll and never replayed: nothing to dedupe by id. */
  eventId(_event: RawEvent): string | undefined {
    return undefined;
  }

  /** A copy of the conversation history, verbatim wire messages. */
  transcript(conn: LocalConn): readonly RawEvent[] {
    return conn.history.map((m) => ({ ...m }));
  }

  /** Aborts in-flight model calls; later polls fail with `session_closed`. */
  close(conn: LocalConn): void {
    conn.closed = true;
    for (const c of conn.inflight) c.abort(new AgentRxError('session_closed', 'The local session was closed'));
    conn.inflight.clear();
  }

  // ── input application and loop guards (wire-protocols 3(c) guard order 1–4) ──────────────────

  private stage(conn: LocalConn, input: LocalInput): Staged {
    const s: Staged = {
      history: [...conn.history],
      polls: conn.polls,
      seen: new Set(conn.seen),
      errorCounts: new Map(conn.errorCounts),
      directives: [],
    };
    if (input.kind === 'messages') {
      // A user message starts a new request: fresh turn budget, duplicate memory and error counts.
      s.history.push(...input.messages.map((m) => ({ ...m })));
      s.polls = 0;
      s.seen.clear();
      s.errorCounts.clear();
    } else if (input.kind === 'resume') {
      this.applyResume(s, input.toolUses, input.results);
    } else {
      throw new AgentRxError('invalid_options', `Unknown local input kind: ${String((input as { kind?: unknown }).kind)}`);
    }
    const max = conn.maxTurns;
    if (max !== undefined && s.polls + 1 >= max) {
      s.history.push({ role: 'user', content: FINAL_TURN_DIRECTIVE });
      s.directives.push({ type: 'local.directive', role: 'final_turn', text: FINAL_TURN_DIRECTIVE });
    }
    s.polls += 1;
    return s;
  }

  private applyResume(s: Staged, toolUses: readonly ToolUse[], results: readonly ToolResult[]): void {
    const byId = new Map(results.map((r) => [r.toolUseId, r]));
    for (const use of toolUses) {
      const r = byId.get(use.id);
      const content = r
        ? r.isError
          ? JSON.stringify({ error: r.content, isError: true })
          : r.content
        : JSON.stringify({ error: 'No result was recorded for this tool call.', isError: true });
      s.history.push({ role: 'tool', tool_call_id: use.id, content });
    }
    for (const use of toolUses) {
      const r = byId.get(use.id);
      s.errorCounts.set(use.name, r && !r.isError ? 0 : (s.errorCounts.get(use.name) ?? 0) + 1);
    }
    const emitted = new Set<string>();
    for (const use of toolUses) {
      const r = byId.get(use.id);
      if (!r || !r.isError || (s.errorCounts.get(use.name) ?? 0) < 2) continue;
      const text = correctiveDirective(use.name, r.content);
      if (emitted.has(text)) continue;
      emitted.add(text);
      s.history.push({ role: 'user', content: text });
      s.directives.push({ type: 'local.directive', role: 'corrective', text });
    }
  }

  // ── accepting a response (guard order 6–7) ───────────────────────────────────────────────────

  private accept(conn: LocalConn, s: Staged, result: ChatCompletionResult): LocalRawEvent[] {
    const message = normalizeAssistantMessage(result.message);
    s.history.push(message);
    const duplicates: LocalRawEvent[] = [];
    let surviving: WireMap[] | undefined;
    if (Array.isArray(message['tool_calls'])) {
      surviving = [];
      for (const call of message['tool_calls'] as WireMap[]) {
        const fn = isMap(call['function']) ? call['function'] : {};
        const name = typeof fn['name'] === 'string' ? fn['name'] : '';
        const key = callKey(name, fn['arguments']);
        if (s.seen.has(key)) {
          const id = String(call['id']);
          s.history.push({ role: 'tool', tool_call_id: id, content: JSON.stringify({ duplicate: true, message: DUPLICATE_TOOL_NOTICE }) });
          duplicates.push({ type: 'local.duplicate_tool_call', id, name, input: toToolUse(call).input });
        } else {
          s.seen.add(key);
          surviving.push(call);
        }
      }
    }
    conn.history = s.history;
    conn.polls = s.polls;
    conn.seen = s.seen;
    conn.errorCounts = s.errorCounts;
    const eventMessage = surviving === undefined ? message : { ...message, tool_calls: surviving };
    return [
      ...duplicates,
      { type: 'local.model_response', message: eventMessage, finish_reason: result.finish_reason, usage: result.usage, streamed: result.streamed },
    ];
  }

  // ── the model call (guard order 5) ───────────────────────────────────────────────────────────

  private callModel(conn: LocalConn, messages: readonly WireMap[], signal: AbortSignal, onChunk: (chunk: WireMap) => void): Promise<ChatCompletionResult> {
    const body: WireMap = { model: conn.model, messages };
    if (conn.tools.length > 0) body['tools'] = conn.tools;
    if (this.options.stream) {
      body['stream'] = true;
      body['stream_options'] = { include_usage: true };
    }
    return withRetry(() => (this.options.stream ? this.streamOnce(body, signal, onChunk) : this.requestOnce(body, signal)), {
      maxRetries: this.options.maxRetries,
      baseMs: this.options.retryBaseMs,
      signal,
      onRetry: (info) => this.logRetry(info),
    });
  }

  private async requestOnce(body: WireMap, signal: AbortSignal): Promise<ChatCompletionResult> {
    let res: AxiosResponse<string>;
    try {
      res = await this.post<string>(body, signal, {
        responseType: 'text',
        transformResponse: [(d: unknown) => d],
        validateStatus: () => true,
      });
    } catch (e) {
      throw this.transportError(e, signal);
    }
    if (res.status < 200 || res.status > 299) throw this.httpError(res.status, String(res.data ?? ''), res.headers);
    return parseChatCompletion(String(res.data ?? ''), this.target);
  }

  private async streamOnce(body: WireMap, signal: AbortSignal, onChunk: (chunk: WireMap) => void): Promise<ChatCompletionResult> {
    let res: AxiosResponse<Readable>;
    try {
      res = await this.post<Readable>(body, signal, {
        responseType: 'stream',
        headers: { Accept: 'text/event-stream' },
        validateStatus: () => true,
      });
    } catch (e) {
      throw this.transportError(e, signal);
    }
    if (res.status < 200 || res.status > 299) throw this.httpError(res.status, await readBodyText(res.data, 65_536, this.options.idleTimeoutMs), res.headers);
    const contentType = String(res.headers['content-type'] ?? '');
    if (contentType.includes('application/json')) {
      // A server that ignored `stream: true` answered with a whole completion.
      return parseChatCompletion(await readBodyText(res.data, 16 * 1024 * 1024, this.options.idleTimeoutMs), this.target);
    }
    const acc = new ChunkAccumulator();
    try {
      await readChatStream(res.data, {
        idleTimeoutMs: this.options.idleTimeoutMs,
        target: this.target,
        signal,
        onChunk: (chunk) => {
          acc.add(chunk);
          onChunk(chunk);
        },
      });
    } catch (e) {
      throw this.redactError(toAgentRxError(e, 'stream_error'));
    }
    return acc.result(newCallId);
  }

  /**
   * POSTs `body` to `chat/completions` from a task of the shared scheduler: the request set-up
   * (config merge, body serialization, connect or socket reuse) is synchronous work that, for
   * many sessions calling the model at once, would otherwise run back to back in one loop turn.
   * A call whose signal aborted while it waited is rejected without being sent.
   */
  private post<T>(body: WireMap, signal: AbortSignal, config: AxiosRequestConfig): Promise<AxiosResponse<T>> {
    return new Promise<AxiosResponse<T>>((resolve, reject) => {
      sharedScheduler.schedule(() => {
        if (signal.aborted) {
          reject(new AgentRxError('cancelled', 'The model call was cancelled'));
          return;
        }
        this.http.post<T>('chat/completions', body, { ...config, signal }).then(resolve, reject);
      });
    });
  }

  private transportError(e: unknown, signal: AbortSignal): AgentRxError {
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
      return new AgentRxError('timeout', `No response from ${this.target} within ${this.options.requestTimeoutMs} ms`, {
        kind: 'request',
        code,
        url: this.baseUrl,
        transient: true,
      });
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return new AgentRxError('http_error', `Cannot resolve the host of the local model endpoint ${this.baseUrl} (${code})`, { code, url: this.baseUrl, transient });
    }
    return new AgentRxError('http_error', `The request ${this.target} failed: ${raw}`, { code, url: this.baseUrl, transient });
  }

  private httpError(status: number, bodyText: string, headers: AxiosResponse['headers']): AgentRxError {
    const detail = this.redact(truncate(errorText(bodyText).trim(), 300));
    let hint = '';
    if (status === 401 || status === 403) hint = ' Check the local provider apiKey: the endpoint rejected the credentials.';
    else if (status === 404) {
      hint = ` Check that baseUrl ends with /v1 and that the model exists on the server (for Ollama: ollama pull <model>).`;
    }
    const retryAfter = headers?.['retry-after'];
    return new AgentRxError('http_error', `${this.target} returned HTTP ${status}${detail ? `: ${detail}` : ''}.${hint}`, {
      status,
      url: this.baseUrl,
      transient: isTransientStatus(status),
      ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
    });
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

/** Ensures every tool call has an id and string arguments, so `tool` answers can reference it. */
function normalizeAssistantMessage(raw: WireMap): WireMap {
  const message: WireMap = { ...raw, role: 'assistant' };
  if (message['content'] === undefined) message['content'] = null;
  if (Array.isArray(raw['tool_calls'])) {
    const calls = raw['tool_calls'].filter(isMap).map((c) => {
      const fn = isMap(c['function']) ? c['function'] : {};
      const args = fn['arguments'];
      return {
        ...c,
        id: typeof c['id'] === 'string' && c['id'] !== '' ? c['id'] : newCallId(),
        type: 'function',
        function: { ...fn, name: typeof fn['name'] === 'string' ? fn['name'] : '', arguments: typeof args === 'string' ? args : args == null ? '' : JSON.stringify(args) },
      };
    });
    if (calls.length > 0) message['tool_calls'] = calls;
    else delete message['tool_calls'];
  }
  return message;
}

/** A wire tool call → ToolUse. Arguments that are not a JSON object set `inputError` (input `{}`). */
function toToolUse(call: WireMap): ToolUse {
  const fn = isMap(call['function']) ? call['function'] : {};
  const id = typeof call['id'] === 'string' ? call['id'] : '';
  const name = typeof fn['name'] === 'string' ? fn['name'] : '';
  const args = fn['arguments'];
  if (isMap(args)) return { id, name, input: args };
  if (args === undefined || args === null || (typeof args === 'string' && args.trim() === '')) return { id, name, input: {} };
  if (typeof args !== 'string') return { id, name, input: {}, inputError: `Tool arguments must be a JSON object, got ${typeof args}.` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { id, name, input: {}, inputError: `Tool arguments are not valid JSON (${why}): ${truncate(args, 200)}` };
  }
  if (isMap(parsed)) return { id, name, input: parsed };
  return { id, name, input: {}, inputError: `Tool arguments must be a JSON object, got ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed}.` };
}

function toUsage(usage: unknown): Usage {
  if (!isMap(usage)) return emptyUsage();
  const input = usage['prompt_tokens'];
  const output = usage['completion_tokens'];
  return { inputTokens: typeof input === 'number' ? input : 0, outputTokens: typeof output === 'number' ? output : 0 };
}

function newCallId(): string {
  return `call_local_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
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
