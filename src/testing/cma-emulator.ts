import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { CmaFaultPlan, CmaPostFault, CmaScriptTurn, CmaWireEvent } from './cma-emulator/cma-script.js';
import { listenLoopback, parseJsonBody, readBodyBuffer, recordedHeaders } from './emulator-http.js';

export type { CmaFaultPlan, CmaGetFault, CmaPostFault, CmaScriptServerToolUse, CmaScriptToolUse, CmaScriptTurn, CmaWireEvent } from './cma-emulator/cma-script.js';

/**
 * A loopback Claude Managed Agents server for tests and demos (beta `managed-agents-2026-04-01`).
 *
 * Endpoints: agents and environments (create with 409 on a taken name, get, list, archive;
 * environments also delete), sessions (create, get, list, archive, delete), `POST
 * /v1/sessions/{id}/events`, `GET /v1/sessions/{id}/events` (cursor pages: `limit`, `page`,
 * `next_page`), and the SSE stream `GET /v1/sessions/{id}/events/stream` (an `event:` line on every
 * frame, heartbeat comments, optional `event_deltas` previews). Like the service it accepts
 * `x-api-key` or `Authorization: Bearer`, requires the beta header, ignores `?beta=true`, gives
 * every event an `id` and `processed_at`, echoes accepted user events into the stream, and answers
 * 400 to an empty `events` list or a result for an unknown tool use.
 *
 * The scripted agent plays `script` turn by turn (see `CmaScriptTurn`); `faults` injects drops,
 * stalls, duplicates, malformed frames, split batches, stale idles, late echoes and HTTP failures
 * (see `CmaFaultPlan`). Ids and timestamps are deterministic per emulator.
 */

/** Options of `startCmaEmulator`. */
export interface CmaEmulatorOptions {
  /** Turns consumed in order, one per turn any session starts. */
  readonly script?: readonly CmaScriptTurn[];
  /** What goes wrong, and when (see `CmaFaultPlan`). Default: nothing. */
  readonly faults?: CmaFaultPlan;
  /** When set, requests must carry this key (`x-api-key` or `Authorization: Bearer`), else 401. */
  readonly apiKey?: string;
  /** Default page size of list endpoints (a `limit` query wins, up to 1000). Default 100. */
  readonly pageSize?: number;
  /** Heartbeat comment interval on open streams, ms (0 = none). Default 15 000. */
  readonly heartbeatMs?: number;
  /** Listen address: loopback only. */
  readonly host?: '127.0.0.1';
}

/** One request the emulator received. Fields after `body` change as the response proceeds. */
export interface CmaRecordedRequest {
  /** 0-based over all requests. */
  readonly index: number;
  /** HTTP method, upper case. */
  readonly method: string;
  /** URL path without the query. */
  readonly path: string;
  /** Query parameters (a repeated one as an array). */
  readonly query: Readonly<Record<string, string | string[]>>;
  /** Lower-case names; credentials redacted to `[redacted]` (with the auth scheme kept). */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON body (undefined when empty or not JSON). */
  readonly body: unknown;
  /** Status sent (0 until the head is written; 0 forever for a dropped connection). */
  status: number;
  /** True once the response is closed (ended, dropped, or abandoned by the client). */
  closed: boolean;
  /** True when the connection closed before the response ended. */
  clientAborted: boolean;
}

/** A read-only view of one emulated session. */
export interface CmaEmulatorSession {
  /** `sesn_…` */
  readonly id: string;
  /** `running` while the scripted agent works (e.g. during `thinkMs`), else `idle` or `terminated`. */
  readonly status: 'idle' | 'running' | 'terminated';
  /** Every event, oldest first, as the list endpoint returns them. */
  readonly history: readonly CmaWireEvent[];
  /** User events accepted, in order, as stored (with ids). */
  readonly received: readonly CmaWireEvent[];
  /** Stream requests served for this session. */
  readonly attachments: number;
  /** Streams currently open. */
  readonly openStreams: number;
  /** `user.interrupt` events received. */
  readonly interrupts: number;
}

/** A running emulator. */
export interface CmaEmulator {
  /** `http://127.0.0.1:<port>` (the API origin; paths start with `/v1`). */
  readonly baseUrl: string;
  readonly requests: readonly CmaRecordedRequest[];
  /** Sessions by id. */
  readonly sessions: ReadonlyMap<string, CmaEmulatorSession>;
  /** Agents and environments by id (verbatim resource objects). */
  readonly agents: ReadonlyMap<string, CmaWireEvent>;
  readonly environments: ReadonlyMap<string, CmaWireEvent>;
  /**
   * Creates a session whose history already holds `events` (ids and timestamps added where
   * missing); custom tool uses named by its last `requires_action` idle and not answered are what
   * the agent waits for. Returns the session id.
   */
  seedSession(events: readonly CmaWireEvent[]): string;
  /** Resolves once `predicate` holds (checked now and after every change). Never rejects. */
  waitFor(predicate: () => boolean): Promise<void>;
  /** Resolves with the first recorded request matching `predicate` (now or later). */
  waitForRequest(predicate: (r: CmaRecordedRequest) => boolean): Promise<CmaRecordedRequest>;
  /** Stops the server and destroys every open connection (streams included). */
  close(): Promise<void>;
}

const BETA = 'managed-agents-2026-04-01';
const USER_EVENT_TYPES = new Set(['user.message', 'user.interrupt', 'user.tool_confirmation', 'user.custom_tool_result', 'user.define_outcome', 'user.tool_result', 'system.message']);
const EPOCH = Date.UTC(2026, 3, 1);

interface Stream {
  readonly res: ServerResponse;
  readonly deltas: boolean;
  live: boolean;
  heartbeat: NodeJS.Timeout | undefined;
}

interface Session {
  readonly id: string;
  readonly agentId: string;
  readonly environmentId: string;
  readonly created: string;
  status: 'idle' | 'running' | 'terminated';
  archivedAt: string | null;
  readonly history: CmaWireEvent[];
  readonly received: CmaWireEvent[];
  readonly streams: Set<Stream>;
  attachments: number;
  /** Created by `seedSession`: its history predates any stream, so every attach is a re-attach. */
  seeded: boolean;
  interrupts: number;
  /** Custom tool use ids (and server tool uses awaiting confirmation) the agent waits for. */
  blocking: string[];
  /** Server tool uses awaiting a `user.tool_confirmation`, by id: the text of their result. */
  readonly asks: Map<string, string>;
  /** Every custom tool use id of the session (for the unknown-id check). */
  readonly toolUseIds: Set<string>;
  readonly answered: Set<string>;
  /** Tool-use ids whose arriving results first get a stale idle (fault). */
  readonly staleFor: Set<string>;
  /** Input batches waiting while the agent is busy. */
  readonly queue: (() => void)[];
  busy: boolean;
  think: NodeJS.Timeout | undefined;
  /** Result echoes held for late delivery (fault). */
  readonly lateEchoes: CmaWireEvent[];
}

type Json = Record<string, unknown>;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Starts the emulator on an ephemeral port of 127.0.0.1. Async: resolves once it listens; rejects
 * only if it cannot listen. The caller owns it and must `close()` it. Request handling never
 * throws to the caller: problems become HTTP error answers like the service's.
 */
export async function startCmaEmulator(opts: CmaEmulatorOptions = {}): Promise<CmaEmulator> {
  const faults: CmaFaultPlan = opts.faults ?? {};
  const script = [...(opts.script ?? [])];
  const pageSize = opts.pageSize ?? 100;
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const requests: CmaRecordedRequest[] = [];
  const sessions = new Map<string, Session>();
  const views = new Map<string, CmaEmulatorSession>();
  const agents = new Map<string, Json>();
  const environments = new Map<string, Json>();
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  const changed = (): void => void changes.emit('change');
  const counters = { event: 0, resource: 0, clock: 0, frame: 0, turn: 0, sends: 0, streams: 0, lists: 0, creates: { sessions: 0, agents: 0, environments: 0 } };
  const usedDrops = new Set<number>();
  let stallUsed = false;
  let malformedUsed = false;
  let closing = false;

  const now = (): string => new Date(EPOCH + ++counters.clock * 1000).toISOString();
  const newEventId = (): string => `sevt_${String(++counters.event).padStart(6, '0')}`;
  const newResourceId = (prefix: string): string => `${prefix}_${String(++counters.resource).padStart(6, '0')}`;

  // ── streams ────────────────────────────────────────────────────────────────────────────────

  const writeRaw = (stream: Stream, text: string, then?: () => void): void => {
    if (stream.res.writableEnded || stream.res.destroyed) return;
    stream.res.write(text, () => then?.());
  };

  /**
   * Writes `text` and applies the frame fault decided for it: the stream stops being live at once
   * (later events of the same tick go to history only); `error` destroys the connection once the
   * frame was handed to the socket, `close` ends the body cleanly, `stall` just stops writing.
   */
  const writeWithFault = (stream: Stream, text: string, fault: 'error' | 'close' | 'stall' | undefined): void => {
    if (fault) {
      stream.live = false;
      clearInterval(stream.heartbeat);
    }
    writeRaw(stream, text, fault === 'error' ? () => stream.res.destroy() : undefined);
    if (fault === 'close') stream.res.end();
    if (fault) changed();
  };

  /** The fault (if any) due after event frame `n`; each fires once. */
  const frameFault = (n: number): 'error' | 'close' | 'stall' | undefined => {
    const drops = faults.drops ?? [];
    for (let i = 0; i < drops.length; i++) {
      if (drops[i]!.after === n && !usedDrops.has(i)) {
        usedDrops.add(i);
        return drops[i]!.kind;
      }
    }
    if (faults.stallAfter === n && !stallUsed) {
      stallUsed = true;
      return 'stall';
    }
    return undefined;
  };

  /** Writes one event frame on one stream, applying the frame-indexed faults. */
  const writeEvent = (stream: Stream, event: CmaWireEvent, counted = true): void => {
    if (!stream.live) return;
    if (!counted) {
      writeRaw(stream, frame(event));
      return;
    }
    const n = ++counters.frame;
    if (faults.malformedFrameBefore === n && !malformedUsed) {
      malformedUsed = true;
      writeRaw(stream, 'event: message\ndata: {"type": "agent.message", this is not json\n\n');
    }
    writeWithFault(stream, frame(event), frameFault(n));
  };

  /** Appends to history (unless `streamOnly`) and writes to every live stream of the session. */
  const broadcast = (s: Session, event: CmaWireEvent, o: { streamOnly?: boolean; preview?: boolean } = {}): void => {
    if (!o.streamOnly && !o.preview) s.history.push(event);
    for (const stream of [...s.streams]) {
      if (o.preview) {
        if (stream.deltas) writeEvent(stream, event, false);
      } else writeEvent(stream, event);
    }
    changed();
  };

  const stamp = (event: CmaWireEvent): CmaWireEvent => ({ ...event, id: typeof event['id'] === 'string' ? event['id'] : newEventId(), processed_at: typeof event['processed_at'] === 'string' ? event['processed_at'] : now() });

  // ── the scripted agent ─────────────────────────────────────────────────────────────────────

  const emitClosing = (s: Session, event: CmaWireEvent): void => {
    broadcast(s, event);
    if (s.lateEchoes.length > 0) for (const echo of s.lateEchoes.splice(0)) broadcast(s, echo, { streamOnly: true });
  };

  const idle = (stopReason: Json): CmaWireEvent => stamp({ type: 'session.status_idle', stop_reason: stopReason, stop_details: null });

  const runTurn = (s: Session): void => {
    if (s.status === 'terminated') return;
    if (s.busy) {
      s.queue.push(() => runTurn(s));
      return;
    }
    const index = counters.turn++;
    const turn = script[index];
    s.status = 'running';
    broadcast(s, stamp({ type: 'session.status_running' }));
    if (!turn) {
      s.status = 'idle';
      emitClosing(s, stamp({ type: 'session.error', error: { type: 'unknown_error', message: `cma emulator: script exhausted after ${script.length} turn(s)`, retry_status: { type: 'terminal' } } }));
      return;
    }
    const rest = (): void => {
      s.busy = false;
      s.think = undefined;
      playTurn(s, turn, index);
      const next = s.queue.shift();
      if (next) next();
    };
    if (turn.thinkMs !== undefined && turn.thinkMs > 0) {
      s.busy = true;
      s.think = setTimeout(rest, turn.thinkMs);
      return;
    }
    rest();
  };

  const playTurn = (s: Session, turn: CmaScriptTurn, index: number): void => {
    const start = stamp({ type: 'span.model_request_start' });
    broadcast(s, start);
    const texts = turn.text === undefined ? [] : typeof turn.text === 'string' ? [turn.text] : turn.text;
    for (const text of texts) {
      const id = newEventId();
      if (turn.previews) {
        broadcast(s, { type: 'event_start', event: { type: 'agent.message', id } }, { preview: true });
        for (const piece of splitText(text)) {
          broadcast(s, { type: 'event_delta', event_id: id, delta: { type: 'content_delta', index: 0, content: { type: 'text', text: piece } } }, { preview: true });
        }
      }
      broadcast(s, stamp({ type: 'agent.message', id, content: [{ type: 'text', text }] }));
    }
    const askIds: string[] = [];
    for (const t of turn.serverToolUses ?? []) {
      const kind = t.mcpServer !== undefined ? { type: 'agent.mcp_tool_use', mcp_server_name: t.mcpServer } : { type: 'agent.tool_use' };
      const use = stamp({ ...kind, id: t.id ?? newEventId(), name: t.name, input: t.input ?? {}, evaluated_permission: t.ask ? 'ask' : 'allow' });
      broadcast(s, use);
      if (t.ask) {
        askIds.push(use['id'] as string);
        s.asks.set(use['id'] as string, t.result ?? 'ok');
      } else broadcast(s, stamp({ type: 'agent.tool_result', tool_use_id: use['id'], content: [{ type: 'text', text: t.result ?? 'ok' }], is_error: false }));
    }
    const toolIds: string[] = [];
    for (const t of turn.toolUses ?? []) {
      const use = stamp({ type: 'agent.custom_tool_use', id: t.id ?? newEventId(), name: t.name, input: t.input ?? {} });
      toolIds.push(use['id'] as string);
      s.toolUseIds.add(use['id'] as string);
      broadcast(s, use);
    }
    const usage = turn.usage ?? { input_tokens: 10, output_tokens: 5 };
    broadcast(s, stamp({ type: 'span.model_request_end', model_request_start_id: start['id'], is_error: false, model_usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }));
    for (const extra of turn.extra ?? []) broadcast(s, stamp(extra));
    let verdict: string | undefined;
    if (turn.outcome) {
      const outcomeId = `outc_${String(index).padStart(4, '0')}`;
      turn.outcome.verdicts.forEach((v, iteration) => {
        const begin = stamp({ type: 'span.outcome_evaluation_start', outcome_id: outcomeId, iteration });
        broadcast(s, begin);
        broadcast(s, stamp({ type: 'span.outcome_evaluation_end', outcome_id: outcomeId, iteration, outcome_evaluation_start_id: begin['id'], result: v, explanation: `verdict ${v}`, usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }));
        verdict = v;
      });
    }
    if (toolIds.length > 0 || askIds.length > 0) {
      s.blocking = [...toolIds, ...askIds];
      if ((faults.staleIdleTurns ?? []).includes(index)) for (const id of toolIds) s.staleFor.add(id);
      const named = (faults.splitBatchTurns ?? []).includes(index) && toolIds.length > 0 ? toolIds.slice(0, 1) : s.blocking;
      s.status = 'idle';
      emitClosing(s, idle({ type: 'requires_action', event_ids: named }));
      return;
    }
    s.status = 'idle';
    const end = turn.end;
    if (end && 'terminated' in end) {
      s.status = 'terminated';
      emitClosing(s, stamp({ type: 'session.status_terminated' }));
    } else if (end && 'error' in end) {
      emitClosing(s, stamp({ type: 'session.error', error: end.error }));
    } else if (end && 'stopReason' in end) {
      emitClosing(s, idle(end.stopReason));
    } else if (verdict !== undefined && turn.outcome?.idle !== 'end_turn') {
      emitClosing(s, idle({ type: verdict }));
    } else {
      emitClosing(s, idle({ type: 'end_turn' }));
    }
  };

  /** Effects of an accepted batch of user events (already stored and echoed). */
  const handleInputs = (s: Session, accepted: readonly CmaWireEvent[]): void => {
    let startsTurn = false;
    let results = false;
    for (const ev of accepted) {
      const type = ev['type'];
      if (type === 'user.interrupt') {
        s.interrupts++;
        if (s.busy && s.think) {
          clearTimeout(s.think);
          s.busy = false;
          s.think = undefined;
          s.queue.length = 0;
          s.status = 'idle';
          emitClosing(s, idle({ type: 'end_turn' }));
        }
      } else if (type === 'user.message' || type === 'user.define_outcome') startsTurn = true;
      else if (type === 'user.custom_tool_result') results = true;
      else if (type === 'user.tool_confirmation') {
        const id = String(ev['tool_use_id']);
        const text = s.asks.get(id);
        if (text === undefined || s.answered.has(id)) continue;
        s.answered.add(id);
        results = true;
        const denied = ev['result'] !== 'allow';
        const content = denied ? `denied${typeof ev['deny_message'] === 'string' ? `: ${ev['deny_message']}` : ''}` : text;
        broadcast(s, stamp({ type: 'agent.tool_result', tool_use_id: id, content: [{ type: 'text', text: content }], is_error: denied }));
      }
    }
    if (results && s.blocking.length > 0) {
      const remaining = s.blocking.filter((id) => !s.answered.has(id));
      if (remaining.length < s.blocking.length) {
        s.blocking = remaining;
        if (remaining.length === 0) startsTurn = true;
        else emitClosing(s, idle({ type: 'requires_action', event_ids: remaining }));
      }
    }
    if (startsTurn) runTurn(s);
  };

  /** Stores and echoes accepted user events (a stale idle first when a fault asks for one). */
  const accept = (s: Session, events: readonly Json[]): CmaWireEvent[] => {
    const stale = events.filter((e) => e['type'] === 'user.custom_tool_result' && s.staleFor.has(String(e['custom_tool_use_id']))).map((e) => String(e['custom_tool_use_id']));
    if (stale.length > 0) {
      for (const id of stale) s.staleFor.delete(id);
      broadcast(s, idle({ type: 'requires_action', event_ids: stale }));
    }
    const accepted: CmaWireEvent[] = [];
    for (const e of events) {
      const type = e['type'];
      const extra = type === 'user.define_outcome' ? { outcome_id: `outc_${String(counters.turn).padStart(4, '0')}`, max_iterations: e['max_iterations'] ?? null } : {};
      const stored: CmaWireEvent = { ...e, ...extra, id: newEventId(), processed_at: now() };
      accepted.push(stored);
      s.received.push(stored);
      if (type === 'user.custom_tool_result') {
        s.answered.add(String(e['custom_tool_use_id']));
        if (faults.lateEcho) {
          s.history.push(stored);
          s.lateEchoes.push(stored);
          changed();
          continue;
        }
      }
      broadcast(s, stored);
    }
    return accepted;
  };

  // ── HTTP ───────────────────────────────────────────────────────────────────────────────────

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (e instanceof HttpError) sendError(res, e.status, e.type, e.message);
      else if (!res.headersSent) sendError(res, 500, 'api_error', e instanceof Error ? e.message : String(e));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBodyBuffer(req);
    const body = parseJsonBody(raw);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const record: CmaRecordedRequest = {
      index: requests.length,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: queryOf(url),
      headers: recordedHeaders(req),
      body,
      status: 0,
      closed: false,
      clientAborted: false,
    };
    requests.push(record);
    res.on('close', () => {
      record.closed = true;
      record.clientAborted = !res.writableEnded;
      changed();
    });
    const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
    (res as { writeHead: unknown }).writeHead = (...a: unknown[]) => {
      record.status = Number(a[0]);
      return writeHead(...a);
    };
    changed();

    checkAuth(req);
    if (raw.length > 0 && body === undefined) throw new HttpError(400, 'invalid_request_error', 'the request body is not valid JSON');
    const parts = url.pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
    if (parts[0] !== 'v1') throw new HttpError(404, 'not_found_error', `unknown path ${url.pathname}`);
    const [, collection, id, sub, leaf] = parts;
    const method = req.method ?? 'GET';
    const json = (isMap(body) ? body : {}) as Json;

    if (collection === 'agents' || collection === 'environments') {
      const store = collection === 'agents' ? agents : environments;
      const kind = collection === 'agents' ? 'agent' : 'environment';
      if (id === undefined && method === 'POST') return createResource(res, collection, store, kind, json);
      if (id === undefined && method === 'GET') return sendJson(res, 200, listPage(url, [...store.values()].filter((r) => url.searchParams.get('include_archived') === 'true' || r['archived_at'] === null)));
      const resource = id !== undefined ? store.get(id) : undefined;
      if (!resource) throw new HttpError(404, 'not_found_error', `${kind} ${id ?? ''} not found`);
      if (sub === undefined && method === 'GET') return sendJson(res, 200, resource);
      if (sub === 'archive' && method === 'POST') {
        if (resource['archived_at'] === null) resource['archived_at'] = now();
        changed();
        return sendJson(res, 200, resource);
      }
      if (sub === undefined && method === 'DELETE' && collection === 'environments') {
        store.delete(id!);
        changed();
        return sendJson(res, 200, { id, type: 'environment_deleted' });
      }
      throw new HttpError(404, 'not_found_error', `unknown route ${method} ${url.pathname}`);
    }

    if (collection !== 'sessions') throw new HttpError(404, 'not_found_error', `unknown path ${url.pathname}`);
    if (id === undefined && method === 'POST') return createSession(res, json);
    if (id === undefined && method === 'GET') return sendJson(res, 200, listPage(url, [...sessions.values()].map(sessionObject)));
    const s = id !== undefined ? sessions.get(id) : undefined;
    if (!s) throw new HttpError(404, 'not_found_error', `session ${id ?? ''} not found`);
    if (sub === undefined && method === 'GET') return sendJson(res, 200, sessionObject(s));
    if (sub === undefined && method === 'DELETE') {
      sessions.delete(s.id);
      views.delete(s.id);
      broadcast(s, stamp({ type: 'session.deleted' }));
      for (const stream of [...s.streams]) writeWithFault(stream, '', 'close');
      return sendJson(res, 200, { id: s.id, type: 'session_deleted' });
    }
    if (sub === 'archive' && method === 'POST') {
      s.archivedAt ??= now();
      changed();
      return sendJson(res, 200, sessionObject(s));
    }
    if (sub === 'events' && leaf === undefined && method === 'POST') return sendEvents(res, s, json);
    if (sub === 'events' && leaf === undefined && method === 'GET') return listEvents(res, url, s);
    if (sub === 'events' && leaf === 'stream' && method === 'GET') return openStream(req, res, url, s);
    throw new HttpError(404, 'not_found_error', `unknown route ${method} ${url.pathname}`);
  }

  function checkAuth(req: IncomingMessage): void {
    const key = header(req, 'x-api-key');
    const auth = header(req, 'authorization');
    const bearer = auth?.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : undefined;
    const given = key ?? bearer;
    if (given === undefined || given === '') throw new HttpError(401, 'authentication_error', 'x-api-key header is required');
    if (opts.apiKey !== undefined && given !== opts.apiKey) throw new HttpError(401, 'authentication_error', 'invalid x-api-key');
    const beta = header(req, 'anthropic-beta') ?? '';
    if (!beta.split(',').map((b) => b.trim()).includes(BETA)) {
      throw new HttpError(400, 'invalid_request_error', `this endpoint is in beta: send the anthropic-beta header with ${BETA}`);
    }
  }

  function postFault(plan: Readonly<Record<number, CmaPostFault>> | undefined, index: number, res: ServerResponse): 'handled' | 'drop' | undefined {
    const f = plan?.[index];
    if (!f) return undefined;
    if (f.kind === 'drop_after_accept') return 'drop';
    sendStatusFault(res, f);
    return 'handled';
  }

  function createResource(res: ServerResponse, collection: 'agents' | 'environments', store: Map<string, Json>, kind: string, body: Json): void {
    const fault = postFault(faults.createFaults?.[collection], counters.creates[collection]++, res);
    if (fault === 'handled') return;
    if (typeof body['name'] !== 'string' || body['name'] === '') throw new HttpError(400, 'invalid_request_error', 'name: field required');
    if (kind === 'agent' && typeof body['model'] !== 'string' && !isMap(body['model'])) throw new HttpError(400, 'invalid_request_error', 'model: field required');
    if ([...store.values()].some((r) => r['name'] === body['name'] && r['archived_at'] === null)) {
      throw new HttpError(409, 'invalid_request_error', `an ${kind} named "${String(body['name'])}" already exists`);
    }
    const created = now();
    const resource: Json =
      kind === 'agent'
        ? {
            id: newResourceId('agent'),
            type: 'agent',
            name: body['name'],
            description: body['description'] ?? null,
            model: typeof body['model'] === 'string' ? { id: body['model'] } : body['model'],
            system: body['system'] ?? null,
            tools: body['tools'] ?? [],
            mcp_servers: [],
            skills: [],
            multiagent: null,
            metadata: body['metadata'] ?? {},
            execution_identity: { type: 'service_account' },
            version: 1,
            archived_at: null,
            created_at: created,
            updated_at: created,
          }
        : {
            id: newResourceId('env'),
            type: 'environment',
            name: body['name'],
            description: body['description'] ?? null,
            config: body['config'] ?? { type: 'cloud', networking: { type: 'unrestricted' } },
            metadata: body['metadata'] ?? {},
            archived_at: null,
            created_at: created,
            updated_at: created,
          };
    store.set(resource['id'] as string, resource);
    changed();
    if (fault === 'drop') {
      res.destroy();
      return;
    }
    sendJson(res, 200, resource);
  }

  function createSession(res: ServerResponse, body: Json): void {
    const fault = postFault(faults.createFaults?.sessions, counters.creates.sessions++, res);
    if (fault === 'handled') return;
    const agentRef = body['agent'];
    const agentId = typeof agentRef === 'string' ? agentRef : isMap(agentRef) && typeof agentRef['id'] === 'string' ? agentRef['id'] : undefined;
    if (agentId === undefined) throw new HttpError(400, 'invalid_request_error', 'agent: field required');
    const agent = agents.get(agentId);
    if (!agent || agent['archived_at'] !== null) throw new HttpError(404, 'not_found_error', `agent ${agentId} not found`);
    const envId = body['environment_id'];
    if (typeof envId !== 'string') throw new HttpError(400, 'invalid_request_error', 'environment_id: field required');
    const env = environments.get(envId);
    if (!env || env['archived_at'] !== null) throw new HttpError(404, 'not_found_error', `environment ${envId} not found`);
    const s = newSession(agentId, envId);
    const initial = body['initial_events'];
    if (Array.isArray(initial) && initial.length > 0) {
      const events = validateEvents(s, initial);
      handleInputs(s, accept(s, events));
    }
    if (fault === 'drop') {
      res.destroy();
      return;
    }
    sendJson(res, 200, sessionObject(s));
  }

  function newSession(agentId: string, environmentId: string): Session {
    const s: Session = {
      id: newResourceId('sesn'),
      agentId,
      environmentId,
      created: now(),
      status: 'idle',
      archivedAt: null,
      history: [],
      received: [],
      streams: new Set(),
      attachments: 0,
      seeded: false,
      interrupts: 0,
      blocking: [],
      asks: new Map(),
      toolUseIds: new Set(),
      answered: new Set(),
      staleFor: new Set(),
      queue: [],
      busy: false,
      think: undefined,
      lateEchoes: [],
    };
    sessions.set(s.id, s);
    views.set(s.id, viewOf(s));
    changed();
    return s;
  }

  function validateEvents(s: Session, events: unknown): Json[] {
    if (!Array.isArray(events) || events.length === 0) throw new HttpError(400, 'invalid_request_error', 'events: value must contain at least 1 item');
    events.forEach((e: unknown, i) => {
      if (!isMap(e) || typeof e['type'] !== 'string') throw new HttpError(400, 'invalid_request_error', `events.${i}.type: field required`);
      if (!USER_EVENT_TYPES.has(e['type'])) throw new HttpError(400, 'invalid_request_error', `events.${i}.type: "${e['type']}" is not a user event type`);
      if (e['type'] === 'user.custom_tool_result') {
        const useId = e['custom_tool_use_id'];
        if (typeof useId !== 'string' || !s.toolUseIds.has(useId)) {
          throw new HttpError(400, 'invalid_request_error', `events.${i}.custom_tool_use_id: no custom tool use with id "${String(useId)}" in this session`);
        }
      }
      if (e['type'] === 'user.tool_confirmation') {
        if (typeof e['tool_use_id'] !== 'string' || !s.asks.has(e['tool_use_id'])) {
          throw new HttpError(400, 'invalid_request_error', `events.${i}.tool_use_id: no tool use awaiting confirmation with id "${String(e['tool_use_id'])}" in this session`);
        }
        if (e['result'] !== 'allow' && e['result'] !== 'deny') throw new HttpError(400, 'invalid_request_error', `events.${i}.result: must be "allow" or "deny"`);
        if (e['deny_message'] !== undefined && e['deny_message'] !== null && e['result'] !== 'deny') throw new HttpError(400, 'invalid_request_error', `events.${i}.deny_message: only allowed when result is "deny"`);
      }
      if (e['type'] === 'user.message' && (!Array.isArray(e['content']) || e['content'].length === 0)) {
        throw new HttpError(400, 'invalid_request_error', `events.${i}.content: value must contain at least 1 item`);
      }
      if (e['type'] === 'user.define_outcome' && (typeof e['description'] !== 'string' || !isMap(e['rubric']))) {
        throw new HttpError(400, 'invalid_request_error', `events.${i}: user.define_outcome needs description and rubric`);
      }
    });
    return events as Json[];
  }

  function sendEvents(res: ServerResponse, s: Session, body: Json): void {
    const index = counters.sends++;
    const fault = postFault(faults.sendFaults, index, res);
    if (fault === 'handled') return;
    const events = validateEvents(s, body['events']);
    if (s.status === 'terminated') throw new HttpError(400, 'invalid_request_error', `session ${s.id} is terminated`);
    const accepted = accept(s, events);
    handleInputs(s, accepted);
    if (fault === 'drop') {
      res.destroy();
      return;
    }
    sendJson(res, 200, { data: accepted });
  }

  function listEvents(res: ServerResponse, url: URL, s: Session): void {
    const fault = faults.listFaults?.[counters.lists++];
    if (fault) {
      sendStatusFault(res, fault);
      return;
    }
    const order = url.searchParams.get('order') === 'desc' ? 'desc' : 'asc';
    const events = order === 'desc' ? [...s.history].reverse() : s.history;
    sendJson(res, 200, listPage(url, events));
  }

  function listPage(url: URL, items: readonly Json[]): Json {
    const limitParam = url.searchParams.get('limit');
    const limit = limitParam === null ? pageSize : Number(limitParam);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new HttpError(400, 'invalid_request_error', 'limit: must be an integer from 1 to 1000');
    const page = url.searchParams.get('page');
    let offset = 0;
    if (page !== null && page !== '') {
      const m = /^page_(\d+)$/.exec(page);
      if (!m) throw new HttpError(400, 'invalid_request_error', `page: invalid cursor "${page}"`);
      offset = Number(m[1]);
    }
    const data = items.slice(offset, offset + limit);
    const nextOffset = offset + limit;
    let next: string | null = nextOffset < items.length ? `page_${nextOffset}` : null;
    // The loop fault: after the first page the same cursor comes back forever.
    if (faults.repeatCursor && page !== null) next = page;
    else if (faults.repeatCursor) next = `page_${limit}`;
    return { data, next_page: next, first_id: data[0]?.['id'] ?? null, last_id: data.at(-1)?.['id'] ?? null };
  }

  function openStream(req: IncomingMessage, res: ServerResponse, url: URL, s: Session): void {
    const fault = faults.streamFaults?.[counters.streams++];
    if (fault) {
      sendStatusFault(res, fault);
      return;
    }
    const deltas = url.searchParams.getAll('event_deltas').flatMap((v) => v.split(',')).includes('agent.message');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    req.socket.setNoDelay(true);
    s.attachments++;
    const stream: Stream = { res, deltas, live: true, heartbeat: undefined };
    s.streams.add(stream);
    if (heartbeatMs > 0) {
      stream.heartbeat = setInterval(() => {
        if (stream.live) writeRaw(stream, ': heartbeat\n\n');
      }, heartbeatMs);
      stream.heartbeat.unref();
    }
    res.on('close', () => {
      stream.live = false;
      clearInterval(stream.heartbeat);
      s.streams.delete(stream);
      changed();
    });
    const dup = faults.duplicateOnReattach ?? 0;
    if ((s.attachments > 1 || s.seeded) && dup > 0) for (const ev of s.history.slice(-dup)) writeEvent(stream, ev, false);
    // Frame-0 faults: the stream opened (headers and a comment reach the client), then fails.
    writeWithFault(stream, ': connected\n\n', counters.frame === 0 ? frameFault(0) : undefined);
    changed();
  }

  function sessionObject(s: Session): Json {
    const agent = agents.get(s.agentId);
    return {
      id: s.id,
      type: 'session',
      status: s.status,
      agent: agent
        ? { id: agent['id'], type: 'agent', name: agent['name'], description: agent['description'], model: agent['model'], system: agent['system'], tools: agent['tools'], mcp_servers: [], skills: [], multiagent: null, execution_identity: { type: 'service_account' }, version: agent['version'] }
        : { id: s.agentId, type: 'agent' },
      environment_id: s.environmentId,
      archived_at: s.archivedAt,
      budget: null,
      created_at: s.created,
      updated_at: s.created,
      metadata: {},
      outcome_evaluations: [],
      resources: [],
      stats: {},
      title: null,
      usage: {},
      vault_ids: [],
    };
  }

  const port = await listenLoopback(server, opts.host);

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    sessions: views,
    agents,
    environments,
    seedSession(events) {
      const agentId = newResourceId('agent');
      const environmentId = newResourceId('env');
      const s = newSession(agentId, environmentId);
      s.seeded = true;
      for (const e of events) {
        const ev = stamp(e);
        s.history.push(ev);
        if (ev['type'] === 'agent.custom_tool_use') s.toolUseIds.add(ev['id'] as string);
        if (ev['type'] === 'user.custom_tool_result') s.answered.add(String(ev['custom_tool_use_id']));
        if ((ev['type'] === 'agent.tool_use' || ev['type'] === 'agent.mcp_tool_use') && ev['evaluated_permission'] === 'ask') s.asks.set(ev['id'] as string, 'ok');
        if (ev['type'] === 'user.tool_confirmation') s.answered.add(String(ev['tool_use_id']));
      }
      const lastIdle = [...s.history].reverse().find((e) => e['type'] === 'session.status_idle');
      const reason = isMap(lastIdle?.['stop_reason']) ? lastIdle['stop_reason'] : undefined;
      if (reason?.['type'] === 'requires_action' && Array.isArray(reason['event_ids'])) {
        s.blocking = reason['event_ids'].map(String).filter((id) => !s.answered.has(id));
      }
      changed();
      return s.id;
    },
    waitFor: (predicate) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (predicate()) {
            changes.off('change', check);
            resolve();
          }
        };
        changes.on('change', check);
        check();
      }),
    waitForRequest: (predicate) =>
      new Promise<CmaRecordedRequest>((resolve) => {
        const check = (): void => {
          const r = requests.find(predicate);
          if (r) {
            changes.off('change', check);
            resolve(r);
          }
        };
        changes.on('change', check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (closing) {
          resolve();
          return;
        }
        closing = true;
        for (const s of sessions.values()) {
          clearTimeout(s.think);
          for (const stream of s.streams) clearInterval(stream.heartbeat);
        }
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A live read-only view of one session. */
function viewOf(s: Session): CmaEmulatorSession {
  return {
    id: s.id,
    get status() {
      return s.status;
    },
    history: s.history,
    received: s.received,
    get attachments() {
      return s.attachments;
    },
    get openStreams() {
      return s.streams.size;
    },
    get interrupts() {
      return s.interrupts;
    },
  };
}

// ── helpers ──────────────────────────────────────────────────────────────────────────────────

/** One SSE frame with an `event:` line (the official SDK skips frames without one). */
function frame(event: CmaWireEvent): string {
  const type = typeof event['type'] === 'string' ? event['type'] : 'message';
  return `event: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
}

function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g);
  if (!words || words.join('') !== text) return text === '' ? [] : [text];
  return words;
}

function sendStatusFault(res: ServerResponse, f: { readonly status: number; readonly retryAfter?: number | string; readonly body?: unknown }): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (f.retryAfter !== undefined) headers['retry-after'] = String(f.retryAfter);
  const body = f.body ?? { type: 'error', error: { type: f.status === 429 ? 'rate_limit_error' : f.status === 529 ? 'overloaded_error' : f.status >= 500 ? 'api_error' : 'invalid_request_error', message: `emulated failure with status ${f.status}` } };
  res.writeHead(f.status, headers);
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { type: 'error', error: { type, message } });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'request-id': `req_emu_${Date.now().toString(36)}` });
  res.end(text);
}


function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

function queryOf(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    out[key] = all.length === 1 ? all[0]! : all;
  }
  return out;
}


function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
