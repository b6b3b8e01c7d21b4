import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/logger.js';
import type { LiveSession } from '../../core/plugin/live-session.js';
import type { ConfirmTool } from '../../core/plugin/session-options.js';
import type { SessionStore } from '../../core/store/session-store.js';
import type { SessionPlacement } from '../../core/plugin/session-placement.js';
import { resolveAgUiHttpOptions, type AgUiHttpOptions, type AgUiHttpOptionsInput } from './agui-http.config.js';
import { sendJson } from './agui-http.reply.js';
import type { AgUiEndpoint } from './agui-http.endpoint.js';

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
  const make = (m: EndpointModule): AgUiEndpoint =>
    new m.AgUiEndpoint(placement, resolved, options.onSession, options.confirmTool, options.store ?? options.rx.sessionStore, options.logger);
  // The endpoint's code loads at the first handler made (`startAgUiServer` waits for it before it
  // listens); requests that arrive before it has loaded wait for it.
  let endpoint = endpointModule ? make(endpointModule) : undefined;
  const ready: Promise<AgUiEndpoint> = endpoint ? Promise.resolve(endpoint) : loadAgUiEndpoint().then((m) => (endpoint ??= make(m)));
  ready.catch(() => undefined);
  const handler = ((req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => {
    if (endpoint) return endpoint.handle(req, res, next);
    ready.then(
      // A client that left while the code loaded is not answered (its `close` has been and gone).
      (e) => (req.destroyed || res.destroyed ? undefined : e.handle(req, res, next)),
      (e: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: `the AG-UI endpoint failed to load: ${String(e)}` });
      },
    );
  }) as AgUiHttpHandler;
  Object.defineProperties(handler, {
    options: { value: resolved, enumerable: true },
    activeRuns: { get: () => endpoint?.threads.activeRuns ?? 0, enumerable: true },
    activeReconnects: { get: () => endpoint?.reconnects.active ?? 0, enumerable: true },
    threadCount: { get: () => endpoint?.threads.threadCount ?? 0, enumerable: true },
    close: { value: async () => (await ready).close(), enumerable: true },
  });
  return handler;
}

type EndpointModule = typeof import('./agui-http.endpoint.js');
let endpointModule: EndpointModule | undefined;
let loadingEndpoint: Promise<EndpointModule> | undefined;

/**
 * Loads the endpoint's code (routing, threads, the page, the AG-UI encoder) once per process: an
 * app that imports agentrx without serving AG-UI never loads it. A failed load is tried again.
 */
export function loadAgUiEndpoint(): Promise<EndpointModule> {
  if (endpointModule) return Promise.resolve(endpointModule);
  loadingEndpoint ??= import('./agui-http.endpoint.js').then(
    (m) => (endpointModule = m),
    (e: unknown) => {
      loadingEndpoint = undefined;
      throw e;
    },
  );
  return loadingEndpoint;
}
