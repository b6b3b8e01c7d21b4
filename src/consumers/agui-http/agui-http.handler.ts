import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BaseEvent } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import type { Subscription } from 'rxjs';
import { isAgentRxError, toAgentRxError } from '../../core/errors.js';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import type { Session } from '../../core/session/session.js';
import type { ConfirmTool, SessionOptions } from '../../core/session/session-options.js';
import { resolveAgUiHttpOptions, type AgUiHttpOptions, type AgUiHttpOptionsInput } from './agui-http.config.js';
import { parseRunAgentInput, type AgUiRunRequest } from './agui-http.input.js';
import { aguiPage } from './agui-http.page.js';

/** What the endpoint needs from agentrx: starting live sessions (an `AgentRx` instance fits). */
export interface AgUiSessionHost {
  /** Starts a live session (it stays open for `message()` after each run). */
  start(opts: SessionOptions): Session;
}

/** Options of {@link createAgUiHandler}: the endpoint options plus the agentrx instance. */
export interface AgUiHandlerOptions extends AgUiHttpOptionsInput {
  /** Starts the sessions: usually the `AgentRx` instance. The caller owns it (and stops it). */
  readonly rx: AgUiSessionHost;
  /**
   * Called synchronously when the handler starts a session for a new thread, before the session
   * emits anything (subscribe to `session.events$` here to observe it). It must not throw; a
   * throw is ignored. Observation only: the handler owns the session's lifetime.
   */
  readonly onSession?: (session: Session, threadId: string) => void;
  /**
   * Answers a host's requests to confirm a tool of its own (Claude Managed Agents `always_ask`)
   * for every session the endpoint starts. Without it, such a request ends the run with a
   * RUN_ERROR `unresolved_requires_action` naming the tool (the session is closed) instead of
   * leaving the stream waiting until the run timeout.
   */
  readonly confirmTool?: ConfirmTool;
}

/**
 * A plain `node:http` request handler serving the AG-UI endpoint, mountable as it is in
 * `http.createServer(handler)`, `app.use(handler)` / `app.use('/agui', handler)` (express,
 * fastify's middie) or from a Nest controller:
 *
 * - `POST /agent`: an AG-UI `RunAgentInput` → the run's AG-UI events, SSE (`text/event-stream`)
 *   or protobuf (`application/vnd.ag-ui.event+proto`, when `Accept` names that type; a wildcard
 *   Accept such as curl's gets SSE), encoded with `@ag-ui/encoder`. The first request of a `threadId` starts a live agentrx session with the
 *   last user message as prompt; a later request on that thread sends its last user message
 *   with `session.message()` and streams that next run. RUN_STARTED / RUN_FINISHED carry the
 *   client's `threadId` and `runId`. Exactly one terminal event (RUN_FINISHED or RUN_ERROR) ends
 *   every stream; if the session dies first, a RUN_ERROR with its error code is sent. When the
 *   client disconnects before the terminal, the session is cancelled (provider work aborted) and
 *   the thread forgotten. Errors before the stream: 400 (invalid input, listing every problem),
 *   401 (bearer token), 403 (origin not allowed), 409 (a run of that thread is still
 *   streaming), 413 (body too large), 415 (not JSON), 429 (too many runs, with `Retry-After`),
 *   503 (closing); each with a JSON body `{ error, message, problems? }`.
 * - `GET /`: the built-in chat page (option `page`). `GET /healthz`: `200 {"status":"ok"}`.
 * - `OPTIONS`: CORS preflight for the origins in `cors`.
 * - Anything else: `next()` when the host passed one (express), else 404.
 *
 * A body already parsed by the host (express `json()`, Nest) in `req.body` is used as it is.
 */
export interface AgUiHttpHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /** The validated options in effect. */
  readonly options: AgUiHttpOptions;
  /** Runs streaming now. */
  readonly activeRuns: number;
  /** Live threads (sessions), running or idle. */
  readonly threadCount: number;
  /**
   * Refuses new runs (503), cancels every session (open streams get a RUN_ERROR `cancelled`) and
   * resolves once all have closed. Idempotent. Does not stop the `rx` instance.
   */
  close(): Promise<void>;
}

/**
 * Creates the AG-UI endpoint handler (see {@link AgUiHttpHandler}). Validates the options first:
 * throws `invalid_config` listing every problem.
 */
export function createAgUiHandler(options: AgUiHandlerOptions): AgUiHttpHandler {
  if (typeof options?.rx?.start !== 'function') throw new TypeError('createAgUiHandler: options.rx must be an AgentRx instance (anything with start(options))');
  const endpoint = new AgUiEndpoint(options.rx, resolveAgUiHttpOptions(options), options.onSession, options.confirmTool);
  const handler = ((req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => endpoint.handle(req, res, next)) as AgUiHttpHandler;
  Object.defineProperties(handler, {
    options: { value: endpoint.options, enumerable: true },
    activeRuns: { get: () => endpoint.activeRuns, enumerable: true },
    threadCount: { get: () => endpoint.threads.size, enumerable: true },
    close: { value: () => endpoint.close(), enumerable: true },
  });
  return handler;
}

/** One run being streamed to one response. */
interface Run {
  readonly runId: string;
  readonly res: ServerResponse;
  readonly encoder: EventEncoder;
  readonly binary: boolean;
  /** Session message id → the id the client sees (renamed when it repeats one of an earlier run). */
  readonly messageIds: Map<string, string>;
  started: boolean;
  done: boolean;
  /** SSE keep-alive comment timer (`heartbeatMs`), re-armed by every write. */
  heartbeat: NodeJS.Timeout | undefined;
}

/** One client thread: its live session and the run streaming now, if any. */
interface Thread {
  readonly id: string;
  readonly session: Session;
  readonly subscriptions: Subscription[];
  /** Message ids already shown to the client in this thread. */
  readonly shownMessageIds: Set<string>;
  run: Run | undefined;
  lastError: { code: string; message: string } | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  ended: boolean;
}

type Headers = Record<string, string>;

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;
const PROTO_TYPE = /application\/vnd\.ag-ui\.event\+proto/i;

class AgUiEndpoint {
  readonly threads = new Map<string, Thread>();
  activeRuns = 0;
  private closing: Promise<void> | undefined;
  private readonly tokenDigest: Buffer | undefined;

  constructor(
    private readonly rx: AgUiSessionHost,
    readonly options: AgUiHttpOptions,
    private readonly onSession: AgUiHandlerOptions['onSession'],
    private readonly confirmTool: ConfirmTool | undefined,
  ) {
    this.tokenDigest = options.token ? digest(options.token.reveal()) : undefined;
  }

  handle(req: IncomingMessage, res: ServerResponse, next: ((err?: unknown) => void) | undefined): void {
    try {
      this.route(req, res, next);
    } catch (e) {
      // A bug here must not take the host down; answer if we still can.
      if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: toAgentRxError(e).message });
      else res.destroy();
    }
  }

  private route(req: IncomingMessage, res: ServerResponse, next: ((err?: unknown) => void) | undefined): void {
    const path = this.localPath(req.url ?? '/');
    const method = req.method ?? 'GET';
    const notFound = (): void => (next ? next() : sendJson(res, 404, { error: 'not_found', message: `no route for ${method} ${path ?? req.url}` }));
    if (path === undefined) return notFound();
    const cors = this.cors(req);

    if (method === 'OPTIONS') return this.preflight(req, res, cors);
    if (path === '/agent') {
      if (method !== 'POST') return sendJson(res, 405, { error: 'method_not_allowed', message: 'use POST /agent' }, { allow: 'POST, OPTIONS', ...cors.headers });
      void this.agent(req, res, cors.headers, cors.allowed);
      return;
    }
    if (path === '/healthz') {
      if (method !== 'GET' && method !== 'HEAD') return sendJson(res, 405, { error: 'method_not_allowed', message: 'use GET /healthz' }, { allow: 'GET, HEAD' });
      return sendJson(res, 200, { status: 'ok' }, { 'cache-control': 'no-store', ...cors.headers }, method === 'HEAD');
    }
    if (path === '/' && this.options.page) {
      if (method !== 'GET' && method !== 'HEAD') return sendJson(res, 405, { error: 'method_not_allowed', message: 'use GET /' }, { allow: 'GET, HEAD' });
      const body = Buffer.from(aguiPage.html, 'utf8');
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': String(body.length),
        'content-security-policy': aguiPage.csp,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-cache',
      });
      res.end(method === 'HEAD' ? undefined : body);
      return;
    }
    notFound();
  }

  /** The path below `basePath`, or undefined when the request is outside it. */
  private localPath(url: string): string | undefined {
    let path: string;
    try {
      path = new URL(url, 'http://localhost').pathname;
    } catch {
      return undefined;
    }
    const base = this.options.basePath;
    if (base === '') return path;
    if (path === base) return '/';
    return path.startsWith(`${base}/`) ? path.slice(base.length) : undefined;
  }

  // ------------------------------------------------------------------ CORS and auth

  /** Whether the request's origin may call us, and the CORS headers to answer it with. */
  private cors(req: IncomingMessage): { allowed: boolean; crossOrigin: boolean; headers: Headers } {
    const origin = req.headers.origin;
    if (origin === undefined) return { allowed: true, crossOrigin: false, headers: {} };
    if (sameOrigin(origin, req)) return { allowed: true, crossOrigin: false, headers: {} };
    const list = this.options.cors;
    const allowed = list.includes('*') || list.includes(origin);
    return { allowed, crossOrigin: true, headers: allowed ? { 'access-control-allow-origin': origin, vary: 'Origin' } : { vary: 'Origin' } };
  }

  private preflight(req: IncomingMessage, res: ServerResponse, cors: ReturnType<AgUiEndpoint['cors']>): void {
    if (!cors.allowed) return sendJson(res, 403, { error: 'origin_not_allowed', message: `origin ${req.headers.origin} is not in the CORS allow-list` }, cors.headers);
    res.writeHead(204, {
      ...cors.headers,
      allow: 'GET, POST, OPTIONS',
      ...(cors.crossOrigin
        ? {
            'access-control-allow-methods': 'GET, POST, OPTIONS',
            'access-control-allow-headers': 'authorization, content-type, accept',
            'access-control-max-age': '600',
          }
        : {}),
      'content-length': '0',
    });
    res.end();
  }

  /** True when no token is configured, or the request carries it (compared in constant time). */
  private authorized(req: IncomingMessage): boolean {
    if (this.tokenDigest === undefined) return true;
    const match = BEARER.exec(req.headers.authorization ?? '');
    // Digests have equal lengths, so timingSafeEqual never throws and the length of the
    // token does not leak either.
    return timingSafeEqual(digest(match?.[1] ?? ''), this.tokenDigest) && match !== null;
  }

  // ------------------------------------------------------------------ POST /agent

  private async agent(req: IncomingMessage, res: ServerResponse, cors: Headers, originAllowed: boolean): Promise<void> {
    try {
      if (!originAllowed) {
        req.resume();
        return sendJson(res, 403, { error: 'origin_not_allowed', message: `origin ${req.headers.origin} is not in the CORS allow-list` }, { ...cors, connection: 'close' });
      }
      if (!this.authorized(req)) {
        req.resume();
        const given = req.headers.authorization !== undefined;
        return sendJson(res, 401, { error: 'unauthorized', message: given ? 'the bearer token is not valid' : 'send Authorization: Bearer <token>' }, { ...cors, 'www-authenticate': given ? 'Bearer realm="agentrx", error="invalid_token"' : 'Bearer realm="agentrx"', connection: 'close' });
      }
      const contentType = req.headers['content-type'];
      if (contentType !== undefined && !JSON_TYPE.test(contentType)) {
        req.resume();
        return sendJson(res, 415, { error: 'unsupported_media_type', message: `send Content-Type: application/json (a RunAgentInput); got ${contentType}` }, { ...cors, connection: 'close' });
      }
      const body = await this.readJson(req);
      if (body.kind === 'too_large') {
        return sendJson(res, 413, { error: 'payload_too_large', message: 'invalid request', problems: [`body: larger than ${this.options.maxBodyBytes} bytes`] }, { ...cors, connection: 'close' });
      }
      if (body.kind === 'invalid') return sendJson(res, 400, { error: 'invalid_request', message: 'invalid request', problems: [body.problem] }, cors);
      const parsed = parseRunAgentInput(body.value);
      if (!parsed.ok) return sendJson(res, 400, { error: 'invalid_request', message: 'invalid RunAgentInput', problems: parsed.problems }, cors);
      if (res.destroyed) return;
      this.startRun(req, res, parsed.request, cors);
    } catch (e) {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: toAgentRxError(e).message }, cors);
      else res.destroy();
    }
  }

  private readJson(req: IncomingMessage): Promise<{ kind: 'ok'; value: unknown } | { kind: 'too_large' } | { kind: 'invalid'; problem: string }> {
    const limit = this.options.maxBodyBytes;
    const parse = (text: string): { kind: 'ok'; value: unknown } | { kind: 'invalid'; problem: string } => {
      if (text.trim() === '') return { kind: 'invalid', problem: 'body: empty; send a RunAgentInput JSON object' };
      try {
        return { kind: 'ok', value: JSON.parse(text) as unknown };
      } catch (e) {
        return { kind: 'invalid', problem: `body: invalid JSON (${(e as Error).message})` };
      }
    };
    // A host body parser (express.json(), Nest) may have consumed the stream already.
    const preParsed = (req as IncomingMessage & { body?: unknown }).body;
    if (preParsed !== undefined && (req.readableEnded || req.complete)) {
      if (Buffer.isBuffer(preParsed) || typeof preParsed === 'string') {
        const text = preParsed.toString();
        return Promise.resolve(Buffer.byteLength(text) > limit ? { kind: 'too_large' } : parse(text));
      }
      return Promise.resolve({ kind: 'ok', value: preParsed });
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ kind: 'too_large' });
    return new Promise((resolve, reject) => {
      const parts: Buffer[] = [];
      let size = 0;
      let settled = false;
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        fn();
      };
      const onData = (chunk: Buffer): void => {
        size += chunk.length;
        if (size > limit) {
          req.off('data', onData);
          // Discard the rest; the 413 goes out with `Connection: close`.
          req.resume();
          settle(() => resolve({ kind: 'too_large' }));
          return;
        }
        parts.push(chunk);
      };
      req.on('data', onData);
      req.once('end', () => settle(() => resolve(parse(Buffer.concat(parts).toString('utf8')))));
      req.once('error', (e) => settle(() => reject(e)));
      req.once('close', () => settle(() => reject(new Error('the client closed the connection while sending the body'))));
    });
  }

  private startRun(req: IncomingMessage, res: ServerResponse, request: AgUiRunRequest, cors: Headers): void {
    if (this.closing) return sendJson(res, 503, { error: 'unavailable', message: 'the endpoint is shutting down' }, cors);
    const tooMany = (why: string): void =>
      sendJson(res, 429, { error: 'too_many_runs', message: why, retryAfterSeconds: this.options.retryAfterSeconds }, { ...cors, 'retry-after': String(this.options.retryAfterSeconds) });
    if (this.activeRuns >= this.options.maxConcurrentRuns) return tooMany(`${this.activeRuns} runs are streaming (limit ${this.options.maxConcurrentRuns}); retry later`);
    let thread = this.threads.get(request.threadId);
    if (thread?.run) {
      return sendJson(res, 409, { error: 'thread_busy', message: `thread ${request.threadId} is still streaming run ${thread.run.runId}; wait for its terminal event (or abort it) first` }, cors);
    }
    if (!thread && this.threads.size >= this.options.maxThreads && !this.evictIdleThread()) {
      return tooMany(`${this.threads.size} threads are running (limit ${this.options.maxThreads}); retry later`);
    }

    // Protobuf only for clients that name its media type: a bare `*/*` (curl) gets SSE.
    const accept = req.headers.accept;
    const encoder = new EventEncoder(accept !== undefined && PROTO_TYPE.test(accept) ? { accept } : {});
    const contentType = encoder.getContentType();
    const run: Run = { runId: request.runId, res, encoder, binary: contentType !== 'text/event-stream', messageIds: new Map(), started: false, done: false, heartbeat: undefined };
    this.activeRuns++;
    try {
      if (thread) {
        thread.run = run;
        try {
          thread.session.message(request.text);
        } catch (e) {
          // The session closed between its last run and this request: start a new one.
          if (!isAgentRxError(e, 'session_closed')) throw e;
          thread.run = undefined;
          this.forget(thread);
          thread = undefined;
        }
      }
      if (!thread) {
        thread = this.adopt(request.threadId, this.rx.start({ prompt: request.text, ...(this.confirmTool ? { confirmTool: this.confirmTool } : {}) }));
        thread.run = run;
      }
    } catch (e) {
      this.activeRuns--;
      if (thread) thread.run = undefined;
      const err = toAgentRxError(e);
      return sendJson(res, 503, { error: 'unavailable', message: `cannot start the run: ${err.message}`, code: err.code }, cors);
    }
    const current = thread;
    clearTimeout(current.idleTimer);
    // Most recently used last: eviction takes the first idle thread.
    this.threads.delete(current.id);
    this.threads.set(current.id, current);

    res.writeHead(200, {
      ...cors,
      'content-type': contentType,
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    });
    res.flushHeaders();
    this.armHeartbeat(run);
    // Not req 'close': on Node 20 that fires once the body has been read (STYLE pitfall 13).
    res.on('close', () => this.clientGone(current, run));
  }

  /** Starts following a new session for `threadId`. */
  private adopt(threadId: string, session: Session): Thread {
    const thread: Thread = { id: threadId, session, subscriptions: [], shownMessageIds: new Set(), run: undefined, lastError: undefined, idleTimer: undefined, ended: false };
    this.threads.set(threadId, thread);
    thread.subscriptions.push(
      session.events$.subscribe((env) => {
        const raw = env.raw as { type?: unknown; code?: unknown; message?: unknown };
        if (env.source === 'agentrx' && raw.type === 'agentrx.run_error') {
          thread.lastError = { code: typeof raw.code === 'string' ? raw.code : 'provider_error', message: typeof raw.message === 'string' ? raw.message : 'run failed' };
        }
        if (env.source === 'agentrx' && raw.type === 'agentrx.confirmation_required') this.cannotConfirm(thread, env.raw['toolUses']);
      }),
    );
    thread.subscriptions.push(
      session.agui$.subscribe({
        next: (ev) => this.forward(thread, ev),
        error: () => this.sessionEnded(thread),
        complete: () => this.sessionEnded(thread),
      }),
    );
    void session.closed.then(() => this.sessionEnded(thread));
    try {
      this.onSession?.(session, threadId);
    } catch {
      // Observation hooks must not break the endpoint.
    }
    return thread;
  }

  /**
   * The host waits for a tool confirmation that no `confirmTool` answers (the endpoint has no way
   * to ask its client): end the run with a RUN_ERROR that says what to configure, close the session.
   */
  private cannotConfirm(thread: Thread, toolUses: unknown): void {
    const names = (Array.isArray(toolUses) ? toolUses : []).map((u: { name?: unknown; id?: unknown }) => `'${String(u?.name)}' (${String(u?.id)})`).join(', ');
    const run = thread.run;
    if (run && !run.done) {
      const message = `the agent asks to confirm ${names || 'a tool'} before running it; this endpoint answers no confirmations (pass confirmTool to createAgUiHandler, or agentrx serve --confirm allow|deny)`;
      this.write(run, { type: 'RUN_ERROR', message, code: 'unresolved_requires_action', timestamp: Date.now() });
      this.endRun(thread, run);
    }
    this.forget(thread);
    thread.session.cancel();
  }

  /** Writes one session event to the thread's current run, with the client's ids. */
  private forward(thread: Thread, ev: AgUiEvent): void {
    const run = thread.run;
    if (!run || run.done) return;
    let out: AgUiEvent = ev;
    switch (ev.type) {
      case 'RUN_STARTED':
        if (run.started) return;
        run.started = true;
        out = { ...ev, threadId: thread.id, runId: run.runId };
        break;
      case 'RUN_FINISHED':
        out = { ...ev, threadId: thread.id, runId: run.runId };
        break;
      case 'TEXT_MESSAGE_START':
      case 'TEXT_MESSAGE_CONTENT':
      case 'TEXT_MESSAGE_END':
        out = { ...ev, messageId: this.clientMessageId(thread, run, ev.messageId) };
        break;
      default:
        break;
    }
    // AG-UI: a stream starts with RUN_STARTED (or is a lone RUN_ERROR).
    if (!run.started && out.type !== 'RUN_ERROR') return;
    this.write(run, out);
    if (out.type === 'RUN_FINISHED') this.endRun(thread, run);
    if (out.type === 'RUN_ERROR') {
      // A failed request ends a live session: the thread's next request starts a new one.
      this.endRun(thread, run);
      this.forget(thread);
    }
  }

  /**
   * The id the client sees for a session message id. Providers without message ids reuse
   * `msg-<turn>` in every run; the AG-UI client would append a repeated id's text to the earlier
   * message, so a repeat gets the run id appended.
   */
  private clientMessageId(thread: Thread, run: Run, id: string): string {
    let mapped = run.messageIds.get(id);
    if (mapped === undefined) {
      mapped = thread.shownMessageIds.has(id) ? `${id}@${run.runId}` : id;
      run.messageIds.set(id, mapped);
      thread.shownMessageIds.add(mapped);
    }
    return mapped;
  }

  private write(run: Run, ev: AgUiEvent): void {
    const res = run.res;
    if (res.writableEnded || res.destroyed) return;
    let chunk: string | Uint8Array;
    try {
      const event = ev as unknown as BaseEvent;
      chunk = run.binary ? run.encoder.encodeBinary(event) : run.encoder.encodeSSE(event);
    } catch {
      // An event that cannot be encoded would leave a broken stream: fail the transport instead.
      res.destroy();
      return;
    }
    res.write(chunk);
    this.armHeartbeat(run);
  }

  /** (Re)starts the keep-alive timer of an SSE run: a comment goes out after `heartbeatMs` of silence. */
  private armHeartbeat(run: Run): void {
    const ms = this.options.heartbeatMs;
    if (run.binary || ms <= 0 || run.done) return;
    if (run.heartbeat) {
      run.heartbeat.refresh();
      return;
    }
    run.heartbeat = setTimeout(() => {
      const res = run.res;
      if (run.done || res.writableEnded || res.destroyed) return;
      res.write(': keep-alive\n\n');
      run.heartbeat?.refresh();
    }, ms);
    run.heartbeat.unref();
  }

  /** The run reached its terminal event: end the response; the session stays for the next message. */
  private endRun(thread: Thread, run: Run): void {
    if (run.done) return;
    run.done = true;
    clearTimeout(run.heartbeat);
    this.activeRuns--;
    if (thread.run === run) thread.run = undefined;
    run.res.end();
    if (!thread.ended) this.armIdle(thread);
  }

  /** The response closed: if its run has not ended, the client left; cancel the session. */
  private clientGone(thread: Thread, run: Run): void {
    if (run.done) return;
    run.done = true;
    clearTimeout(run.heartbeat);
    this.activeRuns--;
    if (thread.run === run) thread.run = undefined;
    // Forget the thread now: its next request must start a new session, not wait on this one.
    this.forget(thread);
    thread.session.cancel();
  }

  /** The session completed, errored or closed: end an open run with a RUN_ERROR, forget the thread. */
  private sessionEnded(thread: Thread): void {
    if (thread.ended) return;
    thread.ended = true;
    clearTimeout(thread.idleTimer);
    const run = thread.run;
    if (run && !run.done) {
      const error = thread.lastError ?? { code: 'session_closed', message: 'the session ended before the run finished' };
      this.write(run, { type: 'RUN_ERROR', message: error.message, code: error.code, timestamp: Date.now() });
      this.endRun(thread, run);
    }
    this.forget(thread);
  }

  private forget(thread: Thread): void {
    if (this.threads.get(thread.id) === thread) this.threads.delete(thread.id);
    clearTimeout(thread.idleTimer);
    // Deferred: this may run inside one of these subscriptions' callbacks.
    queueMicrotask(() => thread.subscriptions.forEach((s) => s.unsubscribe()));
  }

  private armIdle(thread: Thread): void {
    clearTimeout(thread.idleTimer);
    thread.idleTimer = setTimeout(() => {
      if (!thread.run) {
        this.forget(thread);
        thread.session.close();
      }
    }, this.options.threadIdleMs);
    thread.idleTimer.unref();
  }

  /** Closes the least recently used idle thread; false when every thread is running. */
  private evictIdleThread(): boolean {
    for (const thread of this.threads.values()) {
      if (!thread.run) {
        this.forget(thread);
        thread.session.close();
        return true;
      }
    }
    return false;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const sessions = [...this.threads.values()].map((t) => t.session);
      for (const s of sessions) s.cancel();
      await Promise.all(sessions.map((s) => s.closed));
      for (const t of [...this.threads.values()]) this.sessionEnded(t);
    })();
    return this.closing;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** True when `origin` names the host the request was sent to (the built-in page calling home). */
function sameOrigin(origin: string, req: IncomingMessage): boolean {
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const forwarded = req.headers['x-forwarded-host'];
  const hosts = [req.headers.host, ...(typeof forwarded === 'string' ? forwarded.split(',').map((h) => h.trim()) : [])];
  return hosts.some((h) => h !== undefined && h.toLowerCase() === host.toLowerCase());
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Headers = {}, headOnly = false): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), 'cache-control': 'no-store' });
  res.end(headOnly ? undefined : text);
}
