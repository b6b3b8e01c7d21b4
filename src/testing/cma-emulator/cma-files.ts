import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJsonBody } from '../emulator-http.js';
import { HttpError, header, sendJson, sendStatusFault } from './cma-http.js';
import { fileObject, filesOf, parseMultipart, resourceObject, type CmaFilesFaultPlan, type CmaFilesSlowFault, type CmaStoredFile } from './cma-files-store.js';
import { isMap, type CmaEmulatorState } from './cma-state.js';

/**
 * The Files API routes of the Claude Managed Agents emulator, and a session's `file` resources:
 *
 * - `POST /v1/files` (multipart, one `file` part; beta `files-api-2025-04-14`);
 * - `GET /v1/files[?scope_id=<session>]` (cursor pages like every list; a `scope_id` listing also
 *   needs the managed-agents beta), `GET /v1/files/{id}`, `GET /v1/files/{id}/content` (the raw
 *   bytes), `DELETE /v1/files/{id}`;
 * - `POST|GET /v1/sessions/{id}/resources`, `DELETE /v1/sessions/{id}/resources/{resource_id}`
 *   (`file` resources; beta `managed-agents-2026-04-01`).
 *
 * Files scoped to a session are its outputs (`CmaEmulator.writeOutput`); mounting a file into a
 * session does not scope it. The fault plan is `faults.files` (see `CmaFilesFaultPlan`).
 */

const FILES_BETA = 'files-api-2025-04-14';
const AGENTS_BETA = 'managed-agents-2026-04-01';

/**
 * Serves `req` when it is a files or session-resources request (and returns true); returns false
 * for any other path. Authenticates like the other routes; throws `HttpError` for error answers.
 */
export async function serveCmaFiles(
  state: CmaEmulatorState,
  apiKey: string | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  raw: Buffer,
): Promise<boolean> {
  const parts = url.pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  const files = parts[0] === 'v1' && parts[1] === 'files';
  const resources = parts[0] === 'v1' && parts[1] === 'sessions' && parts[2] !== undefined && parts[3] === 'resources';
  if (!files && !resources) return false;
  checkKey(req, apiKey);
  const method = req.method ?? 'GET';
  if (files) await filesRoute(state, req, res, url, raw, method, parts[2], parts[3]);
  else resourcesRoute(state, req, res, raw, method, parts[2]!, parts[4]);
  return true;
}

async function filesRoute(
  state: CmaEmulatorState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  raw: Buffer,
  method: string,
  id: string | undefined,
  sub: string | undefined,
): Promise<void> {
  const store = filesOf(state);
  const faults: CmaFilesFaultPlan = (state.faults as { files?: CmaFilesFaultPlan }).files ?? {};
  const scope = url.searchParams.get('scope_id');
  requireBetas(req, scope !== null && method === 'GET' && id === undefined ? [FILES_BETA, AGENTS_BETA] : [FILES_BETA]);
  if (id === undefined && method === 'POST') {
    const fault = faults.upload?.[store.counters.upload++];
    if (fault) return sendStatusFault(res, fault);
    const part = parseMultipart(header(req, 'content-type'), raw)?.find((p) => p.name === 'file');
    if (!part) throw new HttpError(400, 'invalid_request_error', 'file: a multipart/form-data body with a "file" part is required');
    const base = (part.filename ?? '').replace(/%22/g, '"').split(/[/\\]/).pop() ?? '';
    const f: CmaStoredFile = {
      id: state.newResourceId('file'),
      filename: base === '' ? 'unnamed' : base,
      mimeType: part.contentType ?? 'application/octet-stream',
      bytes: Buffer.from(part.data),
      createdAt: state.now(),
    };
    store.files.set(f.id, f);
    state.changed();
    return sendJson(res, 200, fileObject(f));
  }
  if (id === undefined && method === 'GET') {
    const fault = faults.list?.[store.counters.list++];
    if (fault?.kind === 'no_data') return sendJson(res, 200, { files: [], next_page: null });
    if (fault) return sendStatusFault(res, fault);
    const all = [...store.files.values()].filter((f) => scope === null || f.scope === scope);
    return sendJson(res, 200, page(url, all.map(fileObject)));
  }
  const f = id !== undefined ? store.files.get(id) : undefined;
  if (!f) throw new HttpError(404, 'not_found_error', `file ${id ?? ''} not found`);
  if (sub === undefined && method === 'GET') return sendJson(res, 200, fileObject(f));
  if (sub === undefined && method === 'DELETE') {
    store.files.delete(f.id);
    state.changed();
    return sendJson(res, 200, { id: f.id, type: 'file_deleted' });
  }
  if (sub === 'content' && method === 'GET') {
    const fault = faults.download?.[store.counters.download++];
    if (fault?.kind === 'status') return sendStatusFault(res, fault);
    return sendContent(res, f, fault);
  }
  throw new HttpError(404, 'not_found_error', `unknown route ${method} ${url.pathname}`);
}

function resourcesRoute(
  state: CmaEmulatorState,
  req: IncomingMessage,
  res: ServerResponse,
  raw: Buffer,
  method: string,
  sessionId: string,
  resourceId: string | undefined,
): void {
  requireBetas(req, [AGENTS_BETA]);
  if (!state.sessions.has(sessionId)) throw new HttpError(404, 'not_found_error', `session ${sessionId} not found`);
  const store = filesOf(state);
  const list = store.resources.get(sessionId) ?? [];
  store.resources.set(sessionId, list);
  if (resourceId === undefined && method === 'POST') {
    const body = parseJsonBody(raw);
    if (!isMap(body)) throw new HttpError(400, 'invalid_request_error', 'the request body must be a JSON object');
    if (body['type'] !== 'file') throw new HttpError(400, 'invalid_request_error', 'type: only "file" resources are emulated');
    const fileId = body['file_id'];
    if (typeof fileId !== 'string' || !store.files.has(fileId)) throw new HttpError(404, 'not_found_error', `file ${String(fileId)} not found`);
    const mount = body['mount_path'];
    const mountPath = typeof mount === 'string' && mount !== '' ? mount : `/mnt/session/uploads/${fileId}`;
    if (!mountPath.startsWith('/')) throw new HttpError(400, 'invalid_request_error', 'mount_path: must be an absolute path');
    const r = { id: state.newResourceId('sesrsc'), fileId, mountPath, createdAt: state.now() };
    list.push(r);
    state.changed();
    return sendJson(res, 200, resourceObject(r));
  }
  if (resourceId === undefined && method === 'GET') return sendJson(res, 200, { data: list.map(resourceObject), next_page: null });
  const at = list.findIndex((r) => r.id === resourceId);
  if (at < 0) throw new HttpError(404, 'not_found_error', `resource ${resourceId ?? ''} not found`);
  if (method === 'GET') return sendJson(res, 200, resourceObject(list[at]!));
  if (method === 'DELETE') {
    list.splice(at, 1);
    state.changed();
    return sendJson(res, 200, { id: resourceId, type: 'session_resource_deleted' });
  }
  throw new HttpError(404, 'not_found_error', `unknown route ${method} resources`);
}

/** Writes a file's bytes, honouring a slow fault (timers end with the connection). */
function sendContent(res: ServerResponse, f: CmaStoredFile, slow: CmaFilesSlowFault | undefined): void {
  const timers = new Set<NodeJS.Timeout>();
  res.on('close', () => timers.forEach(clearTimeout));
  const later = (ms: number | undefined, fn: () => void): void => {
    if (!ms) return fn();
    const t = setTimeout(() => {
      timers.delete(t);
      if (!res.destroyed) fn();
    }, ms);
    t.unref();
    timers.add(t);
  };
  later(slow?.headerDelayMs, () => {
    res.writeHead(200, { 'content-type': f.mimeType, 'content-length': f.bytes.length });
    const cut = slow?.stallAfterBytes !== undefined ? Math.min(slow.stallAfterBytes, f.bytes.length) : f.bytes.length;
    res.write(f.bytes.subarray(0, cut));
    later(slow?.stallMs, () => res.end(f.bytes.subarray(cut)));
  });
}

/** One cursor page (`limit`, `page=page_<offset>`, `next_page`). */
function page(url: URL, items: readonly Record<string, unknown>[]): Record<string, unknown> {
  const limit = Number(url.searchParams.get('limit') ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new HttpError(400, 'invalid_request_error', 'limit: must be an integer from 1 to 1000');
  const cursor = url.searchParams.get('page');
  const offset = cursor ? Number(/^page_(\d+)$/.exec(cursor)?.[1] ?? NaN) : 0;
  if (!Number.isInteger(offset)) throw new HttpError(400, 'invalid_request_error', `page: invalid cursor "${cursor}"`);
  const data = items.slice(offset, offset + limit);
  const next = offset + limit < items.length ? `page_${offset + limit}` : null;
  return { data, next_page: next, has_more: next !== null, first_id: data[0]?.['id'] ?? null, last_id: data.at(-1)?.['id'] ?? null };
}

function checkKey(req: IncomingMessage, apiKey: string | undefined): void {
  const auth = header(req, 'authorization');
  const given = header(req, 'x-api-key') ?? (auth?.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : undefined);
  if (given === undefined || given === '') throw new HttpError(401, 'authentication_error', 'x-api-key header is required');
  if (apiKey !== undefined && given !== apiKey) throw new HttpError(401, 'authentication_error', 'invalid x-api-key');
}

function requireBetas(req: IncomingMessage, betas: readonly string[]): void {
  const sent = (header(req, 'anthropic-beta') ?? '').split(',').map((b) => b.trim());
  const missing = betas.filter((b) => !sent.includes(b));
  if (missing.length > 0)
    throw new HttpError(400, 'invalid_request_error', `this endpoint is in beta: send the anthropic-beta header with ${missing.join(',')}`);
}
