import type { ServerResponse } from 'node:http';

/** Response headers, lower-case names. */
export type HeaderMap = Record<string, string>;

/**
 * Answers with a JSON body (`no-store`), unless the response has already started or the socket
 * is gone. The endpoint's errors use `{ error, message, problems? }`. `headOnly` answers a HEAD
 * request: the same headers, no body.
 */
export function sendJson(res: ServerResponse, status: number, body: Readonly<Record<string, unknown>>, headers: HeaderMap = {}, headOnly = false): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
  });
  res.end(headOnly ? undefined : text);
}
