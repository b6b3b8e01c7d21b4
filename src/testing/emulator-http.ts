import type { IncomingMessage } from 'node:http';

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

/** The whole request body as UTF-8 text. */
export async function readBodyText(req: IncomingMessage): Promise<string> {
  return (await readBodyBuffer(req)).toString('utf8');
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
