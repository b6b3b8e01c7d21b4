/** The AG-UI endpoint's routing and runs: loaded by `createAgUiHandler` at its first use (see agui-http.handler.ts). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toAgentRxError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { ConfirmTool } from '../../core/plugin/session-options.js';
import type { SessionPlacement } from '../../core/plugin/session-placement.js';
import type { SessionStore } from '../../core/store/session-store.js';
import { AgUiAccess } from './agui-http.access.js';
import type { AgUiHttpOptions } from './agui-http.config.js';
import type { AgUiHandlerOptions } from './agui-http.handler.js';
import { MAX_ID_LENGTH } from './agui-http.input.js';
import { aguiPage } from './agui-http.page.js';
import { AgUiReconnects } from './agui-http.reconnect.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';
import { readRunRequest } from './agui-http.request.js';
import { streamEndOf } from './agui-http.stream.js';
import { AgUiThreads } from './agui-http.threads.js';
import { wireVersionOf } from './agui-http.wire-version.js';

/**
 * Routes requests below `basePath`: admission (CORS, token) and the body (`readRunRequest`) for
 * `POST /agent`, then the run goes to the threads; the page and `/healthz` are answered here.
 */
export class AgUiEndpoint {
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
