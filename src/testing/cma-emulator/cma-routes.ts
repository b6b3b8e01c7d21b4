import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJsonBody, readBodyBuffer, recordedHeaders } from '../emulator-http.js';
import type { CmaScriptedAgent } from './cma-agent.js';
import { serveCmaFiles } from './cma-files.js';
import { HttpError, header, queryOf, sendError, sendJson, sendStatusFault } from './cma-http.js';
import type { CmaPostFault } from './cma-script.js';
import { isMap, type CmaEmulatorState, type CmaRecordedRequest, type Json, type Session } from './cma-state.js';
import type { CmaStreams } from './cma-streams.js';

/**
 * The HTTP surface of the Claude Managed Agents emulator: request recording, authentication and
 * the beta header, routing, the agent/environment/session resources, list pages, and the
 * request-indexed faults of the plan (create, send, list and stream failures, a cursor loop).
 * Session behaviour is the scripted agent's; SSE writing is the streams'.
 */

const BETA = 'managed-agents-2026-04-01';

/** Options of the routes (see `CmaEmulatorOptions`). */
export interface CmaRoutesOptions {
  /** When set, requests must carry this key, else 401. */
  readonly apiKey: string | undefined;
  /** Default page size of list endpoints. */
  readonly pageSize: number;
}

export class CmaRoutes {
  constructor(
    private readonly state: CmaEmulatorState,
    private readonly streams: CmaStreams,
    private readonly agent: CmaScriptedAgent,
    private readonly opts: CmaRoutesOptions,
  ) {}

  /**
   * Serves one request. Never throws to the server: an `HttpError` becomes its error answer,
   * anything else a 500 (or a destroyed connection once the head went out).
   */
  serve(req: IncomingMessage, res: ServerResponse): void {
    void this.handle(req, res).catch((e: unknown) => {
      if (e instanceof HttpError) sendError(res, e.status, e.type, e.message);
      else if (!res.headersSent) sendError(res, 500, 'api_error', e instanceof Error ? e.message : String(e));
      else res.destroy();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const state = this.state;
    const raw = await readBodyBuffer(req);
    const body = parseJsonBody(raw);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const record: CmaRecordedRequest = {
      index: state.requests.length,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: queryOf(url),
      headers: recordedHeaders(req),
      body,
      status: 0,
      closed: false,
      clientAborted: false,
    };
    state.requests.push(record);
    res.on('close', () => {
      record.closed = true;
      record.clientAborted = !res.writableEnded;
      state.changed();
    });
    const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
    (res as { writeHead: unknown }).writeHead = (...a: unknown[]) => {
      record.status = Number(a[0]);
      return writeHead(...a);
    };
    state.changed();

    if (await serveCmaFiles(this.state, this.opts.apiKey, req, res, url, raw)) return;
    this.checkAuth(req);
    if (raw.length > 0 && body === undefined) throw new HttpError(400, 'invalid_request_error', 'the request body is not valid JSON');
    const parts = url.pathname
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
    if (parts[0] !== 'v1') throw new HttpError(404, 'not_found_error', `unknown path ${url.pathname}`);
    const [, collection, id, sub, leaf] = parts;
    const method = req.method ?? 'GET';
    const json = (isMap(body) ? body : {}) as Json;

    if (collection === 'agents' || collection === 'environments') {
      const store = collection === 'agents' ? state.agents : state.environments;
      const kind = collection === 'agents' ? 'agent' : 'environment';
      if (id === undefined && method === 'POST') return this.createResource(res, collection, store, kind, json);
      if (id === undefined && method === 'GET')
        return sendJson(
          res,
          200,
          this.listPage(
            url,
            [...store.values()].filter((r) => url.searchParams.get('include_archived') === 'true' || r['archived_at'] === null),
          ),
        );
      const resource = id !== undefined ? store.get(id) : undefined;
      if (!resource) throw new HttpError(404, 'not_found_error', `${kind} ${id ?? ''} not found`);
      if (sub === undefined && method === 'GET') return sendJson(res, 200, resource);
      if (sub === 'archive' && method === 'POST') {
        const fault = state.faults.archiveFaults?.[collection]?.[state.counters.archives[collection]++];
        if (fault) {
          sendStatusFault(res, fault);
          return;
        }
        if (resource['archived_at'] === null) resource['archived_at'] = state.now();
        state.changed();
        return sendJson(res, 200, resource);
      }
      if (sub === undefined && method === 'DELETE' && collection === 'environments') {
        store.delete(id!);
        state.changed();
        return sendJson(res, 200, { id, type: 'environment_deleted' });
      }
      throw new HttpError(404, 'not_found_error', `unknown route ${method} ${url.pathname}`);
    }

    if (collection !== 'sessions') throw new HttpError(404, 'not_found_error', `unknown path ${url.pathname}`);
    if (id === undefined && method === 'POST') return this.createSession(res, json);
    if (id === undefined && method === 'GET')
      return sendJson(
        res,
        200,
        this.listPage(
          url,
          [...state.sessions.values()].map((s) => this.sessionObject(s)),
        ),
      );
    const s = id !== undefined ? state.sessions.get(id) : undefined;
    if (!s) throw new HttpError(404, 'not_found_error', `session ${id ?? ''} not found`);
    if (sub === undefined && method === 'GET') return sendJson(res, 200, this.sessionObject(s));
    if (sub === undefined && method === 'DELETE') {
      state.deleteSession(s);
      this.streams.broadcast(s, state.stamp({ type: 'session.deleted' }));
      this.streams.endAll(s);
      return sendJson(res, 200, { id: s.id, type: 'session_deleted' });
    }
    if (sub === 'archive' && method === 'POST') {
      s.archivedAt ??= state.now();
      state.changed();
      return sendJson(res, 200, this.sessionObject(s));
    }
    if (sub === 'events' && leaf === undefined && method === 'POST') return this.sendEvents(res, s, json);
    if (sub === 'events' && leaf === undefined && method === 'GET') return this.listEvents(res, url, s);
    if (sub === 'events' && leaf === 'stream' && method === 'GET') return this.openStream(req, res, url, s);
    throw new HttpError(404, 'not_found_error', `unknown route ${method} ${url.pathname}`);
  }

  private checkAuth(req: IncomingMessage): void {
    const key = header(req, 'x-api-key');
    const auth = header(req, 'authorization');
    const bearer = auth?.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : undefined;
    const given = key ?? bearer;
    if (given === undefined || given === '') throw new HttpError(401, 'authentication_error', 'x-api-key header is required');
    if (this.opts.apiKey !== undefined && given !== this.opts.apiKey) throw new HttpError(401, 'authentication_error', 'invalid x-api-key');
    const beta = header(req, 'anthropic-beta') ?? '';
    if (
      !beta
        .split(',')
        .map((b) => b.trim())
        .includes(BETA)
    ) {
      throw new HttpError(400, 'invalid_request_error', `this endpoint is in beta: send the anthropic-beta header with ${BETA}`);
    }
  }

  /** Applies the POST fault planned for `index`: `handled` (answered already), `drop` (process, then drop), or none. */
  private postFault(plan: Readonly<Record<number, CmaPostFault>> | undefined, index: number, res: ServerResponse): 'handled' | 'drop' | undefined {
    const f = plan?.[index];
    if (!f) return undefined;
    if (f.kind === 'drop_after_accept') return 'drop';
    sendStatusFault(res, f);
    return 'handled';
  }

  private createResource(res: ServerResponse, collection: 'agents' | 'environments', store: Map<string, Json>, kind: string, body: Json): void {
    const state = this.state;
    const fault = this.postFault(state.faults.createFaults?.[collection], state.counters.creates[collection]++, res);
    if (fault === 'handled') return;
    if (typeof body['name'] !== 'string' || body['name'] === '') throw new HttpError(400, 'invalid_request_error', 'name: field required');
    if (kind === 'agent' && typeof body['model'] !== 'string' && !isMap(body['model']))
      throw new HttpError(400, 'invalid_request_error', 'model: field required');
    if ([...store.values()].some((r) => r['name'] === body['name'] && r['archived_at'] === null)) {
      throw new HttpError(409, 'invalid_request_error', `an ${kind} named "${String(body['name'])}" already exists`);
    }
    const created = state.now();
    const resource: Json =
      kind === 'agent'
        ? {
            id: state.newResourceId('agent'),
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
            id: state.newResourceId('env'),
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
    state.changed();
    if (fault === 'drop') {
      res.destroy();
      return;
    }
    sendJson(res, 200, resource);
  }

  private createSession(res: ServerResponse, body: Json): void {
    const state = this.state;
    const fault = this.postFault(state.faults.createFaults?.sessions, state.counters.creates.sessions++, res);
    if (fault === 'handled') return;
    const agentRef = body['agent'];
    const agentId = typeof agentRef === 'string' ? agentRef : isMap(agentRef) && typeof agentRef['id'] === 'string' ? agentRef['id'] : undefined;
    if (agentId === undefined) throw new HttpError(400, 'invalid_request_error', 'agent: field required');
    const agent = state.agents.get(agentId);
    if (!agent || agent['archived_at'] !== null) throw new HttpError(404, 'not_found_error', `agent ${agentId} not found`);
    const envId = body['environment_id'];
    if (typeof envId !== 'string') throw new HttpError(400, 'invalid_request_error', 'environment_id: field required');
    const env = state.environments.get(envId);
    if (!env || env['archived_at'] !== null) throw new HttpError(404, 'not_found_error', `environment ${envId} not found`);
    const s = state.newSession(agentId, envId);
    const initial = body['initial_events'];
    if (Array.isArray(initial) && initial.length > 0) {
      const events = this.agent.validate(s, initial);
      this.agent.handleInputs(s, this.agent.accept(s, events));
    }
    if (fault === 'drop') {
      res.destroy();
      return;
    }
    sendJson(res, 200, this.sessionObject(s));
  }

  private sendEvents(res: ServerResponse, s: Session, body: Json): void {
    const index = this.state.counters.sends++;
    const fault = this.postFault(this.state.faults.sendFaults, index, res);
    if (fault === 'handled') return;
    const events = this.agent.validate(s, body['events']);
    if (s.status === 'terminated') throw new HttpError(400, 'invalid_request_error', `session ${s.id} is terminated`);
    const accepted = this.agent.accept(s, events);
    this.agent.handleInputs(s, accepted);
    if (fault === 'drop') {
      res.destroy();
      return;
    }
    sendJson(res, 200, { data: accepted });
  }

  private listEvents(res: ServerResponse, url: URL, s: Session): void {
    const fault = this.state.faults.listFaults?.[this.state.counters.lists++];
    if (fault) {
      sendStatusFault(res, fault);
      return;
    }
    const order = url.searchParams.get('order') === 'desc' ? 'desc' : 'asc';
    const events = order === 'desc' ? [...s.history].reverse() : s.history;
    sendJson(res, 200, this.listPage(url, events));
  }

  /** One cursor page of `items` (`limit`, `page=page_<offset>`, `next_page`), with the cursor-loop fault. */
  private listPage(url: URL, items: readonly Json[]): Json {
    const limitParam = url.searchParams.get('limit');
    const limit = limitParam === null ? this.opts.pageSize : Number(limitParam);
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
    if (this.state.faults.repeatCursor && page !== null) next = page;
    else if (this.state.faults.repeatCursor) next = `page_${limit}`;
    return { data, next_page: next, first_id: data[0]?.['id'] ?? null, last_id: data.at(-1)?.['id'] ?? null };
  }

  private openStream(req: IncomingMessage, res: ServerResponse, url: URL, s: Session): void {
    const fault = this.state.faults.streamFaults?.[this.state.counters.streams++];
    if (fault) {
      sendStatusFault(res, fault);
      return;
    }
    this.streams.attach(req, res, url, s);
  }

  private sessionObject(s: Session): Json {
    const agent = this.state.agents.get(s.agentId);
    return {
      id: s.id,
      type: 'session',
      status: s.status,
      agent: agent
        ? {
            id: agent['id'],
            type: 'agent',
            name: agent['name'],
            description: agent['description'],
            model: agent['model'],
            system: agent['system'],
            tools: agent['tools'],
            mcp_servers: [],
            skills: [],
            multiagent: null,
            execution_identity: { type: 'service_account' },
            version: agent['version'],
          }
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
}
