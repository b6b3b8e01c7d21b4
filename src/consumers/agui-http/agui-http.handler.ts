import type { IncomingMessage, ServerResponse } from 'node:http';
import { toAgentRxError } from '../../core/errors.js';
import type { Session } from '../../core/session/session.js';
import type { ConfirmTool } from '../../core/session/session-options.js';
import { AgUiAccess } from './agui-http.access.js';
import { resolveAgUiHttpOptions, type AgUiHttpOptions, type AgUiHttpOptionsInput } from './agui-http.config.js';
import { aguiPage } from './agui-http.page.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';
import { readRunRequest } from './agui-http.request.js';
import { AgUiThreads, type AgUiSessionHost } from './agui-http.threads.js';

export type { AgUiSessionHost } from './agui-http.threads.js';

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
   * RUN_ERROR `unresolved_requires_action` naming the tool (the session is cancelled) instead of
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
 *   Accept such as curl's gets SSE), encoded with `@ag-ui/encoder`. The first request of a
 *   `threadId` starts a live agentrx session with the last user message as prompt; a later
 *   request on that thread sends its last user message with `session.message()` and streams that
 *   next run. RUN_STARTED / RUN_FINISHED carry the client's `threadId` and `runId`. Exactly one
 *   terminal event (RUN_FINISHED or RUN_ERROR) ends every stream; if the session dies first, a
 *   RUN_ERROR with its error code is sent. When the client disconnects before the terminal, the
 *   session is cancelled (provider work aborted) and the thread forgotten. Errors before the
 *   stream: 400 (invalid input, listing every problem), 401 (bearer token), 403 (origin not
 *   allowed), 409 (a run of that thread is still streaming), 413 (body too large), 415 (not
 *   JSON), 429 (too many runs or threads, with `Retry-After`), 503 (closing, or the session could
 *   not start); each with a JSON body `{ error, message, problems? }`.
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
    activeRuns: { get: () => endpoint.threads.activeRuns, enumerable: true },
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
  private readonly access: AgUiAccess;

  constructor(
    rx: AgUiSessionHost,
    readonly options: AgUiHttpOptions,
    onSession: AgUiHandlerOptions['onSession'],
    confirmTool: ConfirmTool | undefined,
  ) {
    this.access = new AgUiAccess(options);
    this.threads = new AgUiThreads(rx, options, { onSession, confirmTool });
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
    const cors = this.access.cors(req);

    if (method === 'OPTIONS') return this.access.preflight(req, res, cors);
    if (path === '/agent') {
      if (method !== 'POST') return sendJson(res, 405, { error: 'method_not_allowed', message: 'use POST /agent' }, { allow: 'POST, OPTIONS', ...cors.headers });
      if (!this.access.admit(req, res, cors)) return;
      void this.agent(req, res, cors.headers);
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

  /** `POST /agent` from an admitted client: reads the RunAgentInput, then starts the run. */
  private async agent(req: IncomingMessage, res: ServerResponse, cors: HeaderMap): Promise<void> {
    try {
      const request = await readRunRequest(req, res, cors, this.options.maxBodyBytes);
      if (request === undefined || res.destroyed) return;
      this.threads.startRun(req, res, request, cors);
    } catch (e) {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: toAgentRxError(e).message }, cors);
      else res.destroy();
    }
  }

  close(): Promise<void> {
    return this.threads.close();
  }
}
