import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Helpers shared by the loopback emulators. */

/** The whole request body. */
export function readBodyBuffer(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

/** A request body parsed as JSON; undefined when it is empty or not JSON (the emulator then answers 400). */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Listens on an ephemeral port of `host` (default 127.0.0.1); resolves with the port. */
export async function listenLoopback(server: Server, host = '127.0.0.1', port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/**
 * Request headers as recorded by an emulator: credentials never kept (`authorization`,
 * `x-api-key`… keep only their scheme; `redact` may rewrite other values, e.g. a SigV4 signature).
 */
export function recordedHeaders(req: IncomingMessage, redact: (name: string, value: string) => string = redactCredential): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    out[k] = redact(k, Array.isArray(v) ? v.join(', ') : v);
  }
  return out;
}

/** Default redaction: bearer/api-key style credentials keep only their scheme. */
export function redactCredential(name: string, value: string): string {
  if (name === 'authorization' || name === 'proxy-authorization' || name === 'x-api-key' || name === 'api-key') {
    const scheme = value.includes(' ') ? `${value.split(' ')[0]} ` : '';
    return `${scheme}[redacted]`;
  }
  return value;
}

/** What every emulator records of a request: its place, and how its response went. */
export interface LoggedRequest {
  readonly index: number;
  status: number;
  closed: boolean;
  clientAborted: boolean;
}

/**
 * An emulator's request log: the requests received (the most recent `limit` of them), each
 * followed as its response goes (the status once the head is written, the close), and waits for
 * one by index.
 */
export class RequestLog<R extends LoggedRequest> {
  readonly requests: R[] = [];
  private readonly changes = new EventEmitter();

  constructor(private readonly limit = Infinity) {
    this.changes.setMaxListeners(0);
  }

  /** Records `record` and follows `res`. */
  add(record: R, res: ServerResponse): void {
    this.requests.push(record);
    if (this.requests.length > this.limit) this.requests.splice(0, this.requests.length - this.limit);
    res.on('close', () => {
      record.closed = true;
      record.clientAborted = !res.writableEnded;
      this.changed();
    });
    const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
    (res as { writeHead: unknown }).writeHead = (...a: unknown[]) => {
      record.status = Number(a[0]);
      return writeHead(...a);
    };
    this.changed();
  }

  /** A record changed (more of its response was written): wake the waits. */
  changed(): void {
    this.changes.emit('change');
  }

  /** Resolves with request `index` once `ready` holds for it. */
  waitFor(index: number, ready: (r: R) => boolean): Promise<R> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        const r = this.requests.find((q) => q.index === index);
        if (r && ready(r)) {
          this.changes.off('change', check);
          resolve(r);
          return true;
        }
        return false;
      };
      if (!check()) this.changes.on('change', check);
    });
  }
}
