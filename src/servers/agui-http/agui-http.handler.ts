import type { IncomingMessage, ServerResponse } from 'node:http';
import { toAgentRxError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { LiveSession } from '../../core/plugin/live-session.js';
import type { ConfirmTool } from '../../core/plugin/session-options.js';
import type { SessionPlacement } from '../../core/plugin/session-placement.js';
import type { SessionStore } from '../../core/store/session-store.js';
import { AgUiAccess } from './agui-http.access.js';
import { resolveAgUiHttpOptions, type AgUiHttpOptions, type AgUiHttpOptionsInput } from './agui-http.config.js';
import { MAX_ID_LENGTH } from './agui-http.input.js';
import { aguiPage } from './agui-http.page.js';
import { AgUiReconnects } from './agui-http.reconnect.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';
import { readRunRequest } from './agui-http.request.js';
import { streamEndOf } from './agui-http.stream.js';
import { AgUiThreads } from './agui-http.threads.js';
import { wireVersionOf } from './agui-http.wire-version.js';

/** What the endpoint needs from agentrx: where sessions run, and the store their logs go to (an `AgentRx` instance fits). */
export interface AgUiSessionHost {
  /** Opens, finds and attaches to the endpoint's sessions (`AgentRx.placement`). */
  readonly placement: SessionPlacement;
  /** The store the placement's sessions write their logs to (reconnects locate logs in it). */
  readonly sessionStore?: SessionStore;
}

/** Options of {@link createAgUiHandler}: the endpoint options plus the agentrx instance. */
export interface AgUiHandlerOptions extends AgUiHttpOptionsInput {
  /** Where the sessions run: usually the `AgentRx` instance. The caller owns it (and stops it). */
  readonly rx: AgUiSessionHost;
  /**
   * Called when the handler has opened a session for a thread, before the session emits anything
   * (subscribe to `session.events$` here to observe it). It must not throw; a throw is ignored.
   * Observation only: the handler owns the session's lifetime.
   */
  readonly onSession?: (session: LiveSession, threadId: string) => void;
  /**
   * Gets one `info` line per request once its response has closed, `agui request` with fields
   * `{ method, path, status, durationMs, outcome, code?, error?, threadId?, runId? }`. `outcome`
   * says what the request really ended with:
   * - `completed`: the run's RUN_FINISHED (success), or any other answered request;
   * - `awaiting_tools`: RUN_FINISHED waiting on the client's frontend tools (`pendingToolCallIds`);
   * - `interrupt`: RUN_FINISHED with the interrupt outcome (tool confirmations the client answers);
   * - `run_error`: the stream ended with a RUN_ERROR; `code` is its code and `error` the full
   *   text behind it (the session's message, which the client is not sent: it may name the model
   *   server), so it is for the operator's log only;
   * - `client_closed`: the client left before the run's terminal event;
   * - `refused`: answered 4xx (or 503) before any stream; `failed`: answered 500.
   * Bind the project's `Logger` to pino or another structured logger to ship them. Default: none.
   */
  readonly logger?: Logger;
  /**
   * Answers a host's requests to confirm a tool of its own (Claude Managed Agents `always_ask`)
   * for every session the endpoint starts. Without it, such a request ends the run with a
   * RUN_ERROR `unresolved_requires_action` naming the tool (the session is cancelled) instead of
   * leaving the stream waiting until the run timeout. A placement whose sessions run elsewhere
   * (the worker pool) refuses it: `createAgUiHandler` then throws `invalid_options`.
   */
  readonly confirmTool?: ConfirmTool;
  /**
   * The store `rx`'s sessions write their logs to, where reconnects (`Last-Event-ID`) locate a
   * thread's log (read through `rx.placement.attach`). Default: `rx.sessionStore`. Servers sharing
   * one store serve reconnects to each other's threads; without a store, reconnects serve this
   * endpoint's own threads only.
   */
  readonly store?: SessionStore;
}

/**
 * A plain `node:http` request handler serving the AG-UI endpoint, mountable as it is in
 * `http.createServer(handler)`, `app.use(handler)` / `app.use('/agui', handler)` (express,
 * fastify's middie) or from a Nest controller:
 *
 * - `POST /agent`: an AG-UI `RunAgentInput` → the run's AG-UI events, SSE (`text/event-stream`)
 *   or protobuf (`application/vnd.ag-ui.event+proto`, when `Accept` names that type; a wildcard
 *   Accept such as curl's gets SSE), encoded with `@ag-ui/encoder`, each event in the shape of
 *   the AG-UI version the client announced in `protocolVersion` (1.0 or later, as `@ag-ui/client`
 *   1.x sends: the 1.0 events, e.g. RUN_FINISHED `pendingToolCallIds`; nothing, as 0.0.x clients
 *   such as CopilotKit 1.7x send: only what the 0.0.59 schemas accept). The client's `messages`
 *   are the conversation: the first request of a `threadId` this endpoint does not run continues
 *   the thread's stored session when the store has one (after an abort, an error, idle expiry or
 *   a restart: the host, or for Local the stored transcript, holds the conversation), else starts
 *   a live session whose history is the messages before the last user message (real messages
 *   for Local, a delimited block before the prompt for other hosts; a tool call no tool message
 *   answers is closed with a "no result" tool message first, as model APIs require). A later
 *   request on a running thread sends only its last user message with `session.message()` and
 *   streams that next run. `context` entries go with the message, as a delimited block.
 *   RUN_STARTED / RUN_FINISHED carry the client's `threadId` and `runId`. Exactly one terminal
 *   event (RUN_FINISHED or RUN_ERROR) ends every stream; if the session dies first, a RUN_ERROR
 *   with its error code is sent, its message in client terms ("the model server refused the
 *   request (HTTP 400)"; never the model server's URL or answer, which go to `logger`). When the
 *   client disconnects before the terminal, the session is cancelled (provider work aborted) and
 *   the thread forgotten: at once, or after `reconnectGraceMs` if no reconnected client follows
 *   the run by then. Errors before the stream: 400 (invalid input, listing every problem), 401
 *   (bearer token), 403 (origin or Host not allowed), 408 (the body stalled or took too long),
 *   409 (a run of that thread is still streaming), 413 (body too large), 415 (not declared as
 *   JSON), 429 (too many runs — in all or for this client — or threads, with `Retry-After`), 503
 *   (closing, or the session could not start); each with a JSON body `{ error, message, problems? }`.
 * - Every SSE frame of a run carries `id: <seq>`, the `seq` of the session-log envelope it was
 *   translated from; frames of one envelope are written together and only the last one carries
 *   the id. Protobuf streams carry no ids.
 * - Reconnect: `POST /agent` with a `Last-Event-ID` header (the same RunAgentInput; no message is
 *   sent to the session), or `GET /threads/:threadId/events` with `Last-Event-ID` or `?after=<id>`
 *   (and `?runId=` for the client's run id, `?protocolVersion=` for its AG-UI version, as in a
 *   RunAgentInput; none: the 0.0.x shape): every frame of the thread's session after that id,
 *   replayed from the session log, then the live ones until the run's terminal event; without an
 *   id, the thread's current run from its start. The thread may be one another server sharing the
 *   store served. 400 `invalid_last_event_id` (not a decimal id, or beyond the end of the thread's
 *   log) or `unknown_thread`. With `reconnectGraceMs`, a run whose client disconnected goes on
 *   that long for it to come back (else a disconnect cancels it).
 * - `GET /`: the built-in chat page (option `page`). `GET /healthz`: `200 {"status":"ok"}` plus one
 *   entry per dependency of the placement (`SessionPlacement.health`): in `runtime.mode:
 *   'distributed'` Redis is PINGed (1 s timeout): `200 {"status":"ok","redis":"ok"}`, or
 *   `503 {"status":"degraded","redis":"<why>"}` (the URL's credentials redacted).
 * - Sessions run where `rx.placement` runs them: in this process, or (`runtime.mode:
 *   'distributed'`) on the worker pool, streamed from Redis, where a thread's follow-up run goes
 *   to its live session with `message()` on this endpoint or any other sharing the Redis (`find`).
 *   An aborted client cancels its session (or, with `reconnectGraceMs`, later). Idle threads and
 *   eviction release a session (`LiveSession.release`: one of this process closes, one elsewhere
 *   is only no longer read, its worker closes it after its own idle time); `close()` leaves them
 *   (`LiveSession.leave`).
 * - `OPTIONS`: CORS preflight for the origins in `cors`.
 * - Anything else: `next()` when the host passed one (express), else 404.
 *
 * A body already parsed by the host (express `json()`, Nest) in `req.body` is used as it is.
 */
export interface AgUiHttpHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /** The validated options in effect. */
  readonly options: AgUiHttpOptions;
  /** Runs streaming now (a run whose client left counts until it ends or is cancelled). */
  readonly activeRuns: number;
  /** Reconnected readers streaming now. */
  readonly activeReconnects: number;
  /** Live threads (sessions), running or idle. */
  readonly threadCount: number;
  /**
   * Refuses new runs and reconnects (503), leaves every session (a session of this process is
   * cancelled: open streams, reconnected ones included, get a RUN_ERROR `cancelled`; one that runs
   * elsewhere goes on, and its open stream is told to continue on another endpoint) and resolves
   * once all were left. Idempotent. Does not stop the `rx` instance nor close its placement.
   */
  close(): Promise<void>;
}

/**
 * Creates the AG-UI endpoint handler (see {@link AgUiHttpHandler}). Validates the options first:
 * throws `invalid_config` listing every problem.
 */
export function createAgUiHandler(options: AgUiHandlerOptions): AgUiHttpHandler {
  const placement = options?.rx?.placement;
  if (typeof placement?.open !== 'function')
    throw new TypeError('createAgUiHandler: options.rx must be an AgentRx instance (anything with a session placement)');
  const resolved = resolveAgUiHttpOptions(options);
  // Every session gets the same confirmTool: a placement that cannot take it refuses it now, not at each run.
  if (options.confirmTool) placement.checkOptions({ confirmTool: options.confirmTool });
  const endpoint = new AgUiEndpoint(placement, resolved, options.onSession, options.confirmTool, options.store ?? options.rx.sessionStore, options.logger);
  const handler = ((req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => endpoint.handle(req, res, next)) as AgUiHttpHandler;
  Object.defineProperties(handler, {
    options: { value: endpoint.options, enumerable: true },
    activeRuns: { get: () => endpoint.threads.activeRuns, enumerable: true },
    activeReconnects: { get: () => endpoint.reconnects.active, enumerable: true },
    threadCount: { get: () => endpoint.threads.threadCount, enumerable: true },
    close: { value: () => endpoint.close(), enumerable: true },
  });
  return handler;
}

/**
 * Routes requests below `basePath`: admission (CORS, token) and the body (`readRunRequest`) for
 * `POST /agent`, then the run goes to the threads; the page and `/healthz` are answered here.
 */
class AgUiEndpoint {
  readonly threads: AgUiThreads;
  readonly reconnects: AgUiReconnects;
  private readonly access: AgUiAccess;
  private readonly store: SessionStore | undefined;

  constructor(
    private readonly placement: SessionPlacement,
    readonly options: AgUiHttpOptions,
    onSession: AgUiHandlerOptions['onSession'],
    confirmTool: ConfirmTool | undefined,
    store: SessionStore | undefined,
    private readonly logger: Logger | undefined,
  ) {
    this.store = store;
    this.access = new AgUiAccess(options);
    this.threads = new AgUiThreads(placement, options, { onSession, confirmTool });
    this.reconnects = new AgUiReconnects(store, placement, this.threads, options);
  }

  handle(req: IncomingMessage, res: ServerResponse, next: ((err?: unknown) => void) | undefined): void {
    if (this.logger) {
      const started = performance.now();
      res.once('close', () => this.logRequest(req, res, started));
    }
    try {
      this.route(req, res, next);
    } catch (e) {
      // A bug here must not take the host down; answer if we still can.
      if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: toAgentRxError(e).message });
      else res.destroy();
    }
  }

  /** The request's one log line (its thread and run ids when its body named them). */
  private logRequest(req: IncomingMessage, res: ServerResponse, started: number): void {
    const ids = runIds.get(req);
    const status = res.statusCode;
    // A stream's terminal event says how its run ended, even when the client left right after it.
    const end = streamEndOf(res);
    const outcome = end?.outcome ?? (!res.writableEnded ? 'client_closed' : status === 500 ? 'failed' : status >= 400 ? 'refused' : 'completed');
    this.logger?.info('agui request', {
      method: req.method ?? 'GET',
      path: this.localPath(req.url ?? '/') ?? '(outside basePath)',
      status,
      durationMs: Math.round(performance.now() - started),
      outcome,
      ...(end?.outcome === 'run_error' ? { ...(end.code !== undefined ? { code: end.code } : {}), error: end.detail } : {}),
      ...(ids ? { threadId: ids.threadId, runId: ids.runId } : {}),
    });
  }

  private route(req: IncomingMessage, res: ServerResponse, next: ((err?: unknown) => void) | undefined): void {
    const path = this.localPath(req.url ?? '/');
    const method = req.method ?? 'GET';
    const notFound = (): void => (next ? next() : sendJson(res, 404, { error: 'not_found', message: `no route for ${method} ${path ?? req.url}` }));
    if (path === undefined) return notFound();
    // Load balancers probe health by address: every other route checks the Host (DNS rebinding).
    if (path !== '/healthz' && !this.access.checkHost(req, res)) return;
    const cors = this.access.cors(req);

    if (method === 'OPTIONS') return this.access.preflight(req, res, cors);
    if (path === '/agent') {
      if (method !== 'POST')
        return sendJson(res, 405, { error: 'method_not_allowed', message: 'use POST /agent' }, { allow: 'POST, OPTIONS', ...cors.headers });
      if (!this.access.admit(req, res, cors)) return;
      void this.agent(req, res, cors.headers);
      return;
    }
    const events = THREAD_EVENTS.exec(path);
    if (events) {
      if (method !== 'GET')
        return sendJson(res, 405, { error: 'method_not_allowed', message: 'use GET /threads/:threadId/events' }, { allow: 'GET, OPTIONS', ...cors.headers });
      if (!this.access.admit(req, res, cors)) return;
      void this.reconnect(req, res, events[1]!, cors.headers);
      return;
    }
    if (path === '/healthz') {
      if (method !== 'GET' && method !== 'HEAD')
        return sendJson(res, 405, { error: 'method_not_allowed', message: 'use GET /healthz' }, { allow: 'GET, HEAD' });
      const headers = { 'cache-control': 'no-store', ...cors.headers };
      // The endpoint is only as healthy as what its placement depends on (the Redis its runs stream from).
      void this.placement.health().then(
        (h) => sendJson(res, h.healthy ? 200 : 503, { status: h.healthy ? 'ok' : 'degraded', ...h.checks }, headers, method === 'HEAD'),
        (e: unknown) => sendJson(res, 503, { status: 'degraded', error: toAgentRxError(e).message }, headers, method === 'HEAD'),
      );
      return;
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

  /** `POST /agent` from an admitted client: reads the RunAgentInput, then starts the run. */
  private async agent(req: IncomingMessage, res: ServerResponse, cors: HeaderMap): Promise<void> {
    try {
      const request = await readRunRequest(req, res, cors, this.options);
      if (request === undefined || res.destroyed) return;
      runIds.set(req, { threadId: request.threadId, runId: request.runId });
      const lastEventId = lastEventIdOf(req);
      if (lastEventId !== undefined) {
        const reconnect = { threadId: request.threadId, runId: request.runId, lastEventId, wireVersion: request.wireVersion };
        return await this.reconnects.follow(req, res, reconnect, cors);
      }
      // A thread this endpoint does not run (after an abort, an error, idle expiry, eviction or a
      // restart) continues its stored session when the store has one: the host, or the stored
      // transcript, holds the conversation. Otherwise the client's history starts a new one.
      // A run just aborted by its client, or a session being closed, is waited for (bounded).
      await this.threads.settled(request.threadId);
      if (res.destroyed) return;
      const resume = this.threads.local(request.threadId) ? undefined : await storedSessionOf(this.store, request.threadId);
      if (res.destroyed) return;
      await this.threads.startRun(req, res, request, cors, this.access.clientKey(req), resume);
    } catch (e) {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: toAgentRxError(e).message }, cors);
      else res.destroy();
    }
  }

  /** `GET /threads/:threadId/events` from an admitted client. */
  private async reconnect(req: IncomingMessage, res: ServerResponse, encodedThreadId: string, cors: HeaderMap): Promise<void> {
    try {
      const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
      let threadId: string;
      try {
        threadId = decodeURIComponent(encodedThreadId);
      } catch {
        threadId = '';
      }
      const runId = query.get('runId') ?? undefined;
      const problems = [
        ...(threadId === '' || threadId.length > MAX_ID_LENGTH
          ? [`threadId: must be a non-empty, URL-encoded string of at most ${MAX_ID_LENGTH} characters`]
          : []),
        ...(runId !== undefined && (runId === '' || runId.length > MAX_ID_LENGTH)
          ? [`runId: must be a non-empty string of at most ${MAX_ID_LENGTH} characters`]
          : []),
      ];
      if (problems.length > 0) return sendJson(res, 400, { error: 'invalid_request', message: 'invalid reconnect', problems }, cors);
      const lastEventId = lastEventIdOf(req) ?? query.get('after') ?? undefined;
      // A GET carries no RunAgentInput: the client announces its AG-UI version in the query, if at all.
      const wireVersion = wireVersionOf(query.get('protocolVersion') ?? undefined);
      await this.reconnects.follow(req, res, { threadId, runId, lastEventId, wireVersion }, cors);
    } catch (e) {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: toAgentRxError(e).message }, cors);
      else res.destroy();
    }
  }

  close(): Promise<void> {
    const closing = this.threads.close();
    this.reconnects.close();
    return closing;
  }
}

/** The `Last-Event-ID` header (repeated ones joined, so they fail as not a decimal id). */
function lastEventIdOf(req: IncomingMessage): string | undefined {
  const value = req.headers['last-event-id'];
  return Array.isArray(value) ? value.join(',') : value;
}

/** `/threads/:threadId/events` (the thread id URL-encoded). */
const THREAD_EVENTS = /^\/threads\/([^/]+)\/events$/;

/**
 * The id of the stored session of `threadId` (keyed by the thread id, or the newest record naming
 * it), or undefined when the store has none. A session that cannot be resumed (its record is
 * unreadable) is reported when the run opens it, not here.
 */
async function storedSessionOf(store: SessionStore | undefined, threadId: string): Promise<string | undefined> {
  if (!store) return undefined;
  const own = await store.load(threadId).catch(() => undefined);
  if (own) return own.sessionId;
  // An index lookup where the store has one: listing reads every stored record (transcripts included).
  if (store.findByThread) return store.findByThread(threadId);
  return (await store.list()).find((r) => r.threadId === threadId)?.sessionId;
}

/** The thread and run a `POST /agent` named, for its log line. */
const runIds = new WeakMap<IncomingMessage, { readonly threadId: string; readonly runId: string }>();
