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

/** Host names a loopback endpoint always answers. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
/** Addresses that mean "every interface": they name no host a client would use. */
const ANY_ADDRESS = new Set(['0.0.0.0', '::', '[::]']);

type AccessOptions = Pick<AgUiHttpOptions, 'cors' | 'token' | 'allowedHosts' | 'host' | 'trustProxy' | 'corsAllowHeaders' | 'corsMaxAgeSeconds'>;

/**
 * Who may call the endpoint: the `Host` allow-list (`allowedHosts`, against DNS rebinding), the
 * CORS allow-list (`cors`; a page served by the endpoint's own host is always allowed) and the
 * bearer token (`token`, compared in constant time). `X-Forwarded-*` count only with `trustProxy`.
 */
export class AgUiAccess {
  private readonly tokenDigest: Buffer | undefined;
  private readonly anyHost: boolean;
  private readonly hosts: ReadonlySet<string>;

  constructor(private readonly options: AccessOptions) {
    this.tokenDigest = options.token ? digest(options.token.reveal()) : undefined;
    this.anyHost = options.allowedHosts.includes('*');
    const own = bracketed(options.host.toLowerCase());
    this.hosts = new Set([...LOOPBACK_NAMES, ...(ANY_ADDRESS.has(own) ? [] : [own]), ...options.allowedHosts.map((h) => h.toLowerCase())]);
  }

  /**
   * Admits the request's `Host` (and, with `trustProxy`, `X-Forwarded-Host`): true when allowed;
   * otherwise answers 403 `host_not_allowed` (400 without a Host header) and returns false.
   */
  checkHost(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.anyHost) return true;
    const names = this.requestHosts(req);
    if (names.length === 0) {
      req.resume();
      sendJson(res, 400, { error: 'host_required', message: 'send a Host header' }, { connection: 'close' });
      return false;
    }
    const refused = names.find((h) => !this.hostAllowed(h));
    if (refused === undefined) return true;
    req.resume();
    sendJson(
      res,
      403,
      {
        error: 'host_not_allowed',
        message: `host ${JSON.stringify(refused.slice(0, 255))} is not allowed; add it to the endpoint's allowedHosts (agui.allowedHosts) if clients reach the server by that name`,
      },
      { connection: 'close' },
    );
    return false;
  }

  /** The address runs are counted by for `maxRunsPerClient`: the socket's, or the proxy's `X-Forwarded-For` with `trustProxy`. */
  clientKey(req: IncomingMessage): string {
    if (this.options.trustProxy) {
      const forwarded = req.headers['x-forwarded-for'];
      const last = typeof forwarded === 'string' ? forwarded.split(',').at(-1)?.trim() : undefined;
      if (last) return last;
    }
    return req.socket?.remoteAddress ?? 'unknown';
  }

  /** The CORS decision for a request (no `Origin` header: a same-origin or non-browser call). */
  cors(req: IncomingMessage): CorsDecision {
    const origin = req.headers.origin;
    if (origin === undefined) return { allowed: true, crossOrigin: false, headers: {} };
    if (this.sameOrigin(origin, req)) return { allowed: true, crossOrigin: false, headers: {} };
    const list = this.options.cors;
    const allowed = list.includes('*') || list.includes(origin);
    // A page on another origin reads `Retry-After` of a 429 only when it is exposed.
    return {
      allowed,
      crossOrigin: true,
      headers: allowed ? { 'access-control-allow-origin': origin, 'access-control-expose-headers': 'Retry-After', vary: 'Origin' } : { vary: 'Origin' },
    };
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
            'access-control-allow-headers': [
              'authorization',
              'content-type',
              'accept',
              'last-event-id',
              ...this.options.corsAllowHeaders.map((h) => h.toLowerCase()),
            ].join(', '),
            'access-control-max-age': String(this.options.corsMaxAgeSeconds),
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

  /** True when `origin` names the host the request was sent to (the built-in page calling home). */
  private sameOrigin(origin: string, req: IncomingMessage): boolean {
    let host: string;
    try {
      host = new URL(origin).host.toLowerCase();
    } catch {
      return false;
    }
    return this.requestHostHeaders(req).some((h) => h.toLowerCase() === host);
  }

  /** `Host`, then `X-Forwarded-Host` entries with `trustProxy`, as sent (with ports). */
  private requestHostHeaders(req: IncomingMessage): string[] {
    const forwarded = this.options.trustProxy ? req.headers['x-forwarded-host'] : undefined;
    return [req.headers.host, ...(typeof forwarded === 'string' ? forwarded.split(',').map((h) => h.trim()) : [])].filter(
      (h): h is string => h !== undefined && h !== '',
    );
  }

  /** The host names (no port, lower case, IPv6 bracketed) the request says it was sent to. */
  private requestHosts(req: IncomingMessage): string[] {
    return this.requestHostHeaders(req).map(hostnameOf);
  }

  private hostAllowed(name: string): boolean {
    return this.hosts.has(name) || name.endsWith('.localhost');
  }
}

/** The host name of a `Host` header value (`example.com:8080` → `example.com`, `[::1]:80` → `[::1]`); unparsable → the raw text. */
function hostnameOf(header: string): string {
  try {
    return new URL(`http://${header}`).hostname.toLowerCase();
  } catch {
    return header.toLowerCase();
  }
}

/** `::1` → `[::1]` (a bare IPv6 address as the URL parser writes it). */
function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function refuseOrigin(req: IncomingMessage, res: ServerResponse, headers: HeaderMap): void {
  sendJson(res, 403, { error: 'origin_not_allowed', message: `origin ${req.headers.origin} is not in the CORS allow-list` }, headers);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
