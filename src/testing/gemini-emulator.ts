import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLoopback, parseJsonBody, readBodyBuffer, recordedHeaders, redactCredential, RequestLog } from './emulator-http.js';
import { buildAnswer, buildChunks, responseBody } from './gemini-emulator/answers.js';
import {
  defaultErrorMessage,
  googleError,
  INVALID_KEY,
  MISSING_KEY,
  OVERLOADED,
  type GeminiEmulatorFault,
  type GeminiEmulatorTurn,
} from './gemini-emulator/gemini-script.js';
import { validateGenerateContentRequest } from './gemini-emulator/validation.js';

export type { GeminiEmulatorFault, GeminiEmulatorFunctionCall, GeminiEmulatorTurn, GeminiEmulatorUsage } from './gemini-emulator/gemini-script.js';

/**
 * A loopback emulator of the Google Gemini API (generativelanguage) for tests:
 * `POST /v1beta/models/{model}:generateContent` (a whole `GenerateContentResponse`) and
 * `POST /v1beta/models/{model}:streamGenerateContent` (with `?alt=sse`, as `@google/genai` asks:
 * server-sent events, each a `data: <GenerateContentResponse chunk>` line and a blank line, no
 * `[DONE]`; without it, the chunks as one JSON array, as the API does). `v1` and `v1alpha` are
 * served alike. Answers come from a script of turns, with a fault plan for error statuses, hangs,
 * stalls, drops, malformed chunks and in-stream errors. It checks the API key (`x-goog-api-key`
 * header or `?key=`) and validates requests like the API does (HTTP 400 `INVALID_ARGUMENT` naming
 * the field): every model turn of function calls must be answered by the immediately following
 * user turn, one function response per call.
 */

/** Options of `startGeminiEmulator`. */
export interface GeminiEmulatorOptions {
  /** Turns consumed in order, one per successfully served generate request. */
  readonly script?: readonly GeminiEmulatorTurn[];
  /**
   * Faults per 0-based index of generate requests (other paths don't count). Read when each request
   * arrives, so a test may add or remove entries while the emulator runs.
   */
  readonly faults?: Record<number, GeminiEmulatorFault | undefined>;
  /**
   * When set, requests must carry `x-goog-api-key: <apiKey>` (the header `@google/genai` sends) or
   * `?key=<apiKey>`: none gives the API's 403 `PERMISSION_DENIED`, another its 400 "API key not valid".
   */
  readonly apiKey?: string;
  readonly host?: '127.0.0.1';
  /**
   * Keep only the most recent this many requests in `requests` (older ones are dropped; `index`
   * still counts every request). Default: keep all.
   */
  readonly recordLimit?: number;
}

/** One request the emulator received. Fields after `call` are updated as the response proceeds. */
export interface GeminiRecordedRequest {
  /** 0-based over all requests. */
  readonly index: number;
  readonly method: string;
  /** The URL path, without the query. */
  readonly path: string;
  /** The query parameters, `key` redacted. */
  readonly query: Readonly<Record<string, string>>;
  /** Lower-case names; `x-goog-api-key`, `x-api-key` and `authorization` redacted. */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON body (undefined when empty or not JSON). */
  readonly body: unknown;
  /** The model named in the path (`gemini-2.5-flash`), when it is a generate request. */
  readonly model?: string;
  /** True for `streamGenerateContent`. */
  readonly streamed: boolean;
  /** 0-based index among generate requests (the fault-plan key), when it is one. */
  readonly call?: number;
  /** Status sent (0 until the head is written). */
  status: number;
  /** Response chunks written (streaming). */
  eventsSent: number;
  /** True once the response is closed (ended, dropped, or abandoned by the client). */
  closed: boolean;
  /** True when the response did not end normally (the client left, or the emulator dropped it). */
  clientAborted: boolean;
}

/** A running emulator; `close()` it when done. */
export interface GeminiEmulator {
  /** `http://127.0.0.1:<port>`, without the API version (what `httpOptions.baseUrl` of `@google/genai` takes). */
  readonly baseUrl: string;
  /** Every request received, in arrival order (the most recent `recordLimit` of them). */
  readonly requests: GeminiRecordedRequest[];
  /** Resolves once request `index` (0-based, any path) has been received. */
  waitForRequest(index: number): Promise<GeminiRecordedRequest>;
  /** Resolves once the response to request `index` is closed (ended, dropped or abandoned). */
  waitForClose(index: number): Promise<GeminiRecordedRequest>;
  /** Stops the server and destroys every open connection (stalled and hung requests included). */
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

const GENERATE_PATH = /^\/(v1beta|v1|v1alpha)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** Starts the emulator on an ephemeral port of 127.0.0.1. */
export async function startGeminiEmulator(opts: GeminiEmulatorOptions = {}): Promise<GeminiEmulator> {
  const log = new RequestLog<GeminiRecordedRequest>(opts.recordLimit);
  const requests = log.requests;
  const script = [...(opts.script ?? [])];
  let served = 0;
  let calls = 0;
  let received = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, 500, googleError(500, String(e instanceof Error ? e.message : e)));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBodyBuffer(req);
    const body = parseJsonBody(raw);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = req.method === 'POST' ? GENERATE_PATH.exec(url.pathname) : null;
    const query = Object.fromEntries([...url.searchParams].map(([k, v]) => [k, k === 'key' ? '[redacted]' : v]));
    const record: GeminiRecordedRequest = {
      index: received++,
      method: req.method ?? 'GET',
      path: url.pathname,
      query,
      headers: recordedHeaders(req, (name, value) => (name === 'x-goog-api-key' ? '[redacted]' : redactCredential(name, value))),
      body,
      ...(match ? { model: decodeURIComponent(match[2]!), call: calls++ } : {}),
      streamed: match?.[3] === 'streamGenerateContent',
      status: 0,
      eventsSent: 0,
      closed: false,
      clientAborted: false,
    };
    log.add(record, res);

    if (opts.apiKey !== undefined) {
      const header = req.headers['x-goog-api-key'];
      const key = typeof header === 'string' ? header : (url.searchParams.get('key') ?? undefined);
      if (key === undefined) return sendJson(res, 403, MISSING_KEY);
      if (key !== opts.apiKey) return sendJson(res, 400, INVALID_KEY);
    }
    if (!match) return sendJson(res, 404, googleError(404, `Method not found: ${req.method ?? 'GET'} ${url.pathname}`));
    if (raw.length > 0 && body === undefined) return sendJson(res, 400, googleError(400, 'Invalid JSON payload received. Unexpected token.'));
    const invalid = validateGenerateContentRequest(body ?? {});
    if (invalid !== undefined) return sendJson(res, 400, googleError(400, invalid));

    const request = body as Json;
    const fault = opts.faults?.[record.call!];
    if (fault?.kind === 'status') return sendStatusFault(res, fault);
    if (fault?.kind === 'hang') return;
    const turn = script[served];
    if (!turn) {
      const message = `Emulator script exhausted: ${script.length} turn(s) were scripted and all have been served.`;
      return sendJson(res, 400, googleError(400, message));
    }
    const answer = buildAnswer(turn, record.call!, record.model!, request);
    if (record.streamed) {
      if (await writeStream(res, record, buildChunks(answer), fault, url.searchParams.get('alt') === 'sse')) served++;
      return;
    }
    if (fault === undefined) {
      sendJson(res, 200, responseBody(answer));
      served++;
      return;
    }
    // The nearest non-streamed equivalent of a stream fault (see GeminiEmulatorFault).
    if (fault.kind === 'stall') {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.flushHeaders();
    } else if (fault.kind === 'drop') res.socket?.destroy();
    else if (fault.kind === 'error_event') sendJson(res, 503, OVERLOADED);
    else {
      const cut = JSON.stringify(responseBody(answer)).slice(0, 40);
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(cut) });
      res.end(cut);
    }
  }

  /**
   * Streams the chunks with the fault applied, as server-sent events (`sse`) or as the items of one
   * JSON array; true when the answer was sent whole.
   */
  async function writeStream(
    res: ServerResponse,
    record: GeminiRecordedRequest,
    chunks: Json[],
    fault: GeminiEmulatorFault | undefined,
    sse: boolean,
  ): Promise<boolean> {
    const type = sse ? 'text/event-stream' : 'application/json; charset=UTF-8';
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    const limit = fault && 'afterEvents' in fault ? Math.max(0, fault.afterEvents) : Infinity;
    const write = (text: string): Promise<void> => new Promise((resolve) => res.write(text, () => resolve()));
    const send = async (json: string): Promise<void> => {
      await write(sse ? `data: ${json}\r\n\r\n` : `${record.eventsSent === 0 ? '[' : ','}${json}\r\n`);
      record.eventsSent++;
      log.changed();
    };
    const end = (): void => void res.end(sse ? '' : record.eventsSent === 0 ? '[]' : ']');
    for (let i = 0; i < chunks.length && i < limit; i++) {
      await send(JSON.stringify(chunks[i]));
      if (res.destroyed) return false;
    }
    if (fault === undefined) {
      end();
      return true;
    }
    if (fault.kind === 'stall') return false; // keep the socket open; the client or close() ends it
    if (fault.kind === 'drop') {
      res.socket?.destroy();
      return false;
    }
    if (fault.kind === 'error_event') {
      await send(JSON.stringify(OVERLOADED));
      end();
      return false;
    }
    await send('{"candidates": [{"content": this is not json');
    for (let i = limit; i < chunks.length; i++) await send(JSON.stringify(chunks[i]));
    end();
    return false;
  }

  const port = await listenLoopback(server, opts.host);

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    waitForRequest: (index) => log.waitFor(index, () => true),
    waitForClose: (index) => log.waitFor(index, (r) => r.closed),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ── plumbing ─────────────────────────────────────────────────────────────────────────────────

function sendStatusFault(res: ServerResponse, fault: Extract<GeminiEmulatorFault, { kind: 'status' }>): void {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=UTF-8' };
  const retry = fault.retryAfter !== undefined ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${fault.retryAfter}s` }] : undefined;
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  const body = fault.body ?? googleError(fault.status, fault.message ?? defaultErrorMessage(fault.status), retry);
  res.writeHead(fault.status, headers);
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
