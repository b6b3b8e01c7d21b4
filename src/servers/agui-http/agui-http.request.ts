import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgUiHttpOptions } from './agui-http.config.js';
import { parseRunAgentInput, type AgUiRunRequest } from './agui-http.input.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';

type Body = { kind: 'ok'; value: unknown } | { kind: 'too_large' } | { kind: 'timeout'; problem: string } | { kind: 'invalid'; problem: string };

/** The limits a body is read under. */
type BodyLimits = Pick<AgUiHttpOptions, 'maxBodyBytes' | 'bodyIdleTimeoutMs' | 'bodyTimeoutMs'>;

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

/**
 * Reads and validates the body of a `POST /agent`: a JSON `RunAgentInput` of at most
 * `maxBodyBytes`. Resolves with the run request, or with undefined after answering 415 (not
 * declared as JSON, or no Content-Type), 413 (too large, declared or streamed; `Connection:
 * close`), 408 (no chunk for `bodyIdleTimeoutMs`, or not complete within `bodyTimeoutMs`; the
 * connection is closed, so a slow or stalled body holds no socket) or 400 (empty, invalid JSON, or
 * an invalid `RunAgentInput`, listing every problem). A body already parsed by the host (express
 * `json()`, Nest) in `req.body` is used as it is. Rejects when the request stream fails or the
 * client goes away while sending.
 */
export async function readRunRequest(req: IncomingMessage, res: ServerResponse, cors: HeaderMap, limits: BodyLimits): Promise<AgUiRunRequest | undefined> {
  const contentType = req.headers['content-type'];
  const preParsed = (req as IncomingMessage & { body?: unknown }).body !== undefined;
  if (contentType === undefined ? !preParsed : !JSON_TYPE.test(contentType)) {
    req.resume();
    const got = contentType === undefined ? 'no Content-Type' : `Content-Type ${contentType}`;
    sendJson(
      res,
      415,
      { error: 'unsupported_media_type', message: `send Content-Type: application/json (a RunAgentInput); got ${got}` },
      { ...cors, connection: 'close' },
    );
    return undefined;
  }
  const body = await readJson(req, limits);
  if (body.kind === 'too_large') {
    sendJson(
      res,
      413,
      { error: 'payload_too_large', message: 'invalid request', problems: [`body: larger than ${limits.maxBodyBytes} bytes`] },
      { ...cors, connection: 'close' },
    );
    return undefined;
  }
  if (body.kind === 'timeout') {
    sendJson(res, 408, { error: 'request_timeout', message: body.problem }, { ...cors, connection: 'close' });
    // The client may still be sending: close the connection once the answer is out.
    res.once('finish', () => req.socket?.destroy());
    return undefined;
  }
  if (body.kind === 'invalid') {
    sendJson(res, 400, { error: 'invalid_request', message: 'invalid request', problems: [body.problem] }, cors);
    return undefined;
  }
  const parsed = parseRunAgentInput(body.value);
  if (!parsed.ok) {
    sendJson(res, 400, { error: 'invalid_request', message: 'invalid RunAgentInput', problems: parsed.problems }, cors);
    return undefined;
  }
  return parsed.request;
}

function readJson(req: IncomingMessage, limits: BodyLimits): Promise<Body> {
  const limit = limits.maxBodyBytes;
  // A host body parser (express.json(), Nest) may have consumed the stream already.
  const preParsed = (req as IncomingMessage & { body?: unknown }).body;
  if (preParsed !== undefined && (req.readableEnded || req.complete)) {
    if (Buffer.isBuffer(preParsed) || typeof preParsed === 'string') {
      const text = preParsed.toString();
      return Promise.resolve(Buffer.byteLength(text) > limit ? { kind: 'too_large' } : parse(text));
    }
    return Promise.resolve({ kind: 'ok', value: preParsed });
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ kind: 'too_large' });
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let settled = false;
    const timedOut = (problem: string): void => {
      req.off('data', onData);
      req.pause();
      settle(() => resolve({ kind: 'timeout', problem }));
    };
    const total = setTimeout(() => timedOut(`the request body was not complete within ${limits.bodyTimeoutMs} ms (bodyTimeoutMs)`), limits.bodyTimeoutMs);
    const idle = setTimeout(
      () => timedOut(`the request body stalled: nothing received for ${limits.bodyIdleTimeoutMs} ms (bodyIdleTimeoutMs)`),
      limits.bodyIdleTimeoutMs,
    );
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(idle);
      fn();
    };
    const onData = (chunk: Buffer): void => {
      idle.refresh();
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        // Discard the rest; the 413 goes out with `Connection: close`.
        req.resume();
        settle(() => resolve({ kind: 'too_large' }));
        return;
      }
      parts.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => settle(() => resolve(parse(Buffer.concat(parts).toString('utf8')))));
    req.once('error', (e) => settle(() => reject(e)));
    req.once('close', () => settle(() => reject(new Error('the client closed the connection while sending the body'))));
  });
}

function parse(text: string): Body {
  if (text.trim() === '') return { kind: 'invalid', problem: 'body: empty; send a RunAgentInput JSON object' };
  try {
    return { kind: 'ok', value: JSON.parse(text) as unknown };
  } catch (e) {
    return { kind: 'invalid', problem: `body: invalid JSON (${(e as Error).message})` };
  }
}
