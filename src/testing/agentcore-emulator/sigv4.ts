import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * AWS Signature Version 4 checks for the AgentCore emulator: parses the `Authorization` header
 * and, given the secret access key, recomputes the signature the way the AWS SDK computes it
 * (canonical request → string to sign → HMAC chain). Loopback-test quality: enough to prove a
 * client signs every request with the configured credentials, region and service.
 */

/** What the emulator learned from a request's `Authorization` header. */
export interface SigV4Check {
  /** True when the header is a well-formed SigV4 header (and, with a secret, the signature matches). */
  readonly ok: boolean;
  /** Why the check failed (no secrets in it). */
  readonly reason?: string;
  /** Access key id of the credential scope. */
  readonly accessKeyId?: string;
  /** Region of the credential scope. */
  readonly region?: string;
  /** Service of the credential scope. */
  readonly service?: string;
  /** Names of the signed headers. */
  readonly signedHeaders?: readonly string[];
  /** True when the signature itself was recomputed and matched (a secret was given). */
  readonly signatureVerified: boolean;
}

/** The parts of a request the signature covers. */
export interface SignedRequest {
  /** HTTP method. */
  readonly method: string;
  /** Path and query exactly as on the wire (`/harnesses/invoke?harnessArn=…`). */
  readonly url: string;
  /** Request headers as Node parsed them. */
  readonly headers: IncomingHttpHeaders;
  /** The raw request body. */
  readonly body: Buffer;
}

/** Expectations of `checkSigV4`. */
export interface SigV4Expectations {
  /** Signing service name the request must be scoped to (`bedrock-agentcore`). */
  readonly service: string;
  /** When set, the access key id must equal it and the signature is recomputed with the secret. */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** When set, the credential scope's region must equal it. */
  readonly region?: string;
}

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/\s,]+)\/(\d{8})\/([^/\s,]+)\/([^/\s,]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})$/;

/** Checks the SigV4 `Authorization` header of `req`. Never throws. */
export function checkSigV4(req: SignedRequest, expect: SigV4Expectations): SigV4Check {
  const header = req.headers['authorization'];
  if (typeof header !== 'string' || header === '') return { ok: false, reason: 'missing Authorization header', signatureVerified: false };
  const m = AUTH.exec(header);
  if (!m) return { ok: false, reason: 'Authorization is not an AWS4-HMAC-SHA256 header', signatureVerified: false };
  const [accessKeyId, date, region, service, signedList, signature] = m.slice(1, 7).map((part) => part ?? '');
  const signedHeaders = signedList.split(';');
  const base = { accessKeyId, region, service, signedHeaders };
  if (service !== expect.service)
    return { ...base, ok: false, reason: `credential scope names service '${service}', expected '${expect.service}'`, signatureVerified: false };
  if (expect.region !== undefined && region !== expect.region) {
    return { ...base, ok: false, reason: `credential scope names region '${region}', expected '${expect.region}'`, signatureVerified: false };
  }
  const amzDate = headerValue(req.headers, 'x-amz-date');
  if (amzDate === undefined || !amzDate.startsWith(date))
    return { ...base, ok: false, reason: 'x-amz-date is missing or does not match the credential scope date', signatureVerified: false };
  for (const required of ['host', 'x-amz-date']) {
    if (!signedHeaders.includes(required)) return { ...base, ok: false, reason: `SignedHeaders does not include ${required}`, signatureVerified: false };
  }
  const payloadHash = sha256Hex(req.body);
  const declared = headerValue(req.headers, 'x-amz-content-sha256');
  if (declared !== undefined && declared !== 'UNSIGNED-PAYLOAD' && declared !== payloadHash) {
    return { ...base, ok: false, reason: 'x-amz-content-sha256 does not match the body', signatureVerified: false };
  }
  if (!expect.credentials) return { ...base, ok: true, signatureVerified: false };
  if (accessKeyId !== expect.credentials.accessKeyId) return { ...base, ok: false, reason: 'unknown access key id', signatureVerified: false };

  const canonical = [
    req.method.toUpperCase(),
    canonicalPath(req.url),
    canonicalQuery(req.url),
    signedHeaders.map((h) => `${h}:${headerValue(req.headers, h) ?? ''}\n`).join(''),
    signedList,
    declared ?? payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(Buffer.from(canonical, 'utf8'))].join('\n');
  let key: Buffer = hmac(Buffer.from(`AWS4${expect.credentials.secretAccessKey}`, 'utf8'), date);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  const expected = createHmac('sha256', key).update(stringToSign, 'utf8').digest();
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ...base, ok: false, reason: 'the request signature does not match', signatureVerified: false };
  }
  return { ...base, ok: true, signatureVerified: true };
}

/** SigV4 URI encoding: RFC 3986 unreserved characters stay, everything else is %XX. */
export function escapeUri(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalPath(url: string): string {
  const path = url.split('?')[0] || '/';
  // The SDK signs non-S3 paths with each (already encoded) segment URI-encoded once more.
  return path
    .split('/')
    .map((segment) => escapeUri(segment))
    .join('/');
}

function canonicalQuery(url: string): string {
  const q = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  if (q === '') return '';
  const pairs = q
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const i = p.indexOf('=');
      const k = decodeURIComponent(i < 0 ? p : p.slice(0, i));
      const v = i < 0 ? '' : decodeURIComponent(p.slice(i + 1).replace(/\+/g, '%20'));
      return [escapeUri(k), escapeUri(v)] as const;
    });
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  if (v === undefined) return undefined;
  const s = Array.isArray(v) ? v.join(',') : v;
  return s.trim().replace(/\s+/g, ' ');
}

function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}
