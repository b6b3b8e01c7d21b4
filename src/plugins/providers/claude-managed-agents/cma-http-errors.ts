/** The errors of a Claude Managed Agents HTTP call: a host's error answer, or a call that got no answer. */
import { AgentRxError } from '../../../core/errors.js';
import { abortReason } from '../../../core/util/async.js';
import { errorMessageOf, errorTypeOf, isMap, truncate } from './cma-wire.js';

/** A host's error answer as an `http_error` naming the call, with the host's message, error type and `retry-after`. */
export function statusError(method: string, path: string, status: number, body: unknown, headers: unknown): AgentRxError {
  const text = typeof body === 'string' ? body : '';
  const message = errorMessageOf(text) || `HTTP ${status}`;
  const retryAfter = headerOf(headers, 'retry-after');
  return new AgentRxError('http_error', `${method} ${path} failed with ${status}: ${truncate(message, 300)}`, {
    status,
    method,
    path,
    ...(errorTypeOf(text) !== undefined ? { errorType: errorTypeOf(text) } : {}),
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  });
}

/**
 * A call that got no answer: the signal's reason when it was aborted (`timeout` or `cancelled`,
 * naming the call), else a transient `http_error` with the socket's code.
 */
export function transportError(method: string, path: string, e: unknown, signal: AbortSignal): AgentRxError {
  if (signal.aborted) {
    const reason = abortReason(signal);
    if (signal.reason instanceof AgentRxError) return reason;
    return new AgentRxError(reason.code, `${method} ${path} ${reason.code === 'timeout' ? 'timed out' : 'was cancelled'}`);
  }
  const o = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; message?: unknown };
  const code = typeof o.code === 'string' ? o.code : undefined;
  const message = typeof o.message === 'string' ? o.message : String(e);
  // No `cause`: the axios error holds the request config; code and message are all we need. A
  // failure without an answer is transient (worth repeating when repeating is safe).
  return new AgentRxError('http_error', `${method} ${path} failed: ${code ? `${code} ` : ''}${truncate(message, 200)}`, {
    method,
    path,
    transient: true,
    ...(code ? { code } : {}),
  });
}

/** A response header as a string (axios headers or a plain map). */
export function headerOf(headers: unknown, name: string): string | undefined {
  if (!isMap(headers)) return undefined;
  const get = (headers as { get?: unknown }).get;
  const v: unknown = typeof get === 'function' ? (get as (n: string) => unknown).call(headers, name) : headers[name];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}
