import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgUiHttpOptions } from './agui-http.config.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';

/** Whether a request's origin may call the endpoint, and the CORS headers to answer it with. */
export interface CorsDecision {
  readonly allowed: boolean;
  /** The request names an origin other than the endpoint's own host. */
  readonly crossOrigin: boolean;
  readonly headers: HeaderMap;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * Who may call the endpoint: the CORS allow-list (`cors`; a page served by the endpoint's own
 * host is always allowed) and the bearer token (`token`, compared in constant time).
 */
export class AgUiAccess {
  private readonly tokenDigest: Buffer | undefined;

  constructor(private readonly options: Pick<AgUiHttpOptions, 'cors' | 'token'>) {
    this.tokenDigest = options.token ? digest(options.token.reveal()) : undefined;
  }

  /** The CORS decision for a request (no `Origin` header: a same-origin or non-browser call). */
  cors(req: IncomingMessage): CorsDecision {
    const origin = req.headers.origin;
    if (origin === undefined) return { allowed: true, crossOrigin: false, headers: {} };
    if (sameOrigin(origin, req)) return { allowed: true, crossOrigin: false, headers: {} };
    const list = this.options.cors;
    const allowed = list.includes('*') || list.includes(origin);
    return { allowed, crossOrigin: true, headers: allowed ? { 'access-control-allow-origin': origin, vary: 'Origin' } : { vary: 'Origin' } };
  }

  /** Answers an `OPTIONS` preflight: 204 with the allowed methods and headers, or 403. */
  preflight(req: IncomingMessage, res: ServerResponse, cors: CorsDecision): void {
    if (!cors.allowed) return refuseOrigin(req, res, cors.headers);
    res.writeHead(204, {
      ...cors.headers,
      allow: 'GET, POST, OPTIONS',
      ...(cors.crossOrigin
        ? {
            'access-control-allow-methods': 'GET, POST, OPTIONS',
            'access-control-allow-headers': 'authorization, content-type, accept, last-event-id',
            'access-control-max-age': '600',
          }
        : {}),
      'content-length': '0',
    });
    res.end();
  }

  /**
   * Admits a `POST /agent` or a reconnect: true when its origin is allowed and it carries the token (if one is
   * configured); otherwise answers 403 or 401 (`Connection: close`, the body is discarded) and
   * returns false.
   */
  admit(req: IncomingMessage, res: ServerResponse, cors: CorsDecision): boolean {
    if (!cors.allowed) {
      req.resume();
      refuseOrigin(req, res, { ...cors.headers, connection: 'close' });
      return false;
    }
    if (!this.authorized(req)) {
      req.resume();
      const given = req.headers.authorization !== undefined;
      sendJson(
        res,
        401,
        { error: 'unauthorized', message: given ? 'the bearer token is not valid' : 'send Authorization: Bearer <token>' },
        { ...cors.headers, 'www-authenticate': given ? 'Bearer realm="agentrx", error="invalid_token"' : 'Bearer realm="agentrx"', connection: 'close' },
      );
      return false;
    }
    return true;
  }

  /** True when no token is configured, or the request carries it (compared in constant time). */
  private authorized(req: IncomingMessage): boolean {
    if (this.tokenDigest === undefined) return true;
    const match = BEARER.exec(req.headers.authorization ?? '');
    // Digests have equal lengths, so timingSafeEqual never throws and the length of the
    // token does not leak either.
    return timingSafeEqual(digest(match?.[1] ?? ''), this.tokenDigest) && match !== null;
  }
}

function refuseOrigin(req: IncomingMessage, res: ServerResponse, headers: HeaderMap): void {
  sendJson(res, 403, { error: 'origin_not_allowed', message: `origin ${req.headers.origin} is not in the CORS allow-list` }, headers);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** True when `origin` names the host the request was sent to (the built-in page calling home). */
function sameOrigin(origin: string, req: IncomingMessage): boolean {
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const forwarded = req.headers['x-forwarded-host'];
  const hosts = [req.headers.host, ...(typeof forwarded === 'string' ? forwarded.split(',').map((h) => h.trim()) : [])];
  return hosts.some((h) => h !== undefined && h.toLowerCase() === host.toLowerCase());
}
