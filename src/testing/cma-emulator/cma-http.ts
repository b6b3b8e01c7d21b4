import type { IncomingMessage, ServerResponse } from 'node:http';

/** HTTP answers of the Claude Managed Agents emulator, shaped like the service's. */

/** A failure answered as `{type:'error', error:{type, message}}` with `status`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** Answers an injected status fault (a default error body by status unless `body` is given). */
export function sendStatusFault(res: ServerResponse, f: { readonly status: number; readonly retryAfter?: number | string; readonly body?: unknown }): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (f.retryAfter !== undefined) headers['retry-after'] = String(f.retryAfter);
  const body = f.body ?? {
    type: 'error',
    error: {
      type: f.status === 429 ? 'rate_limit_error' : f.status === 529 ? 'overloaded_error' : f.status >= 500 ? 'api_error' : 'invalid_request_error',
      message: `emulated failure with status ${f.status}`,
    },
  };
  res.writeHead(f.status, headers);
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

/** Answers an error; a response whose head already went out is destroyed instead. */
export function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { type: 'error', error: { type, message } });
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'request-id': `req_emu_${Date.now().toString(36)}` });
  res.end(text);
}

/** A request header, repeated values joined with `,`. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** Query parameters, a repeated one as an array. */
export function queryOf(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    out[key] = all.length === 1 ? all[0]! : all;
  }
  return out;
}
