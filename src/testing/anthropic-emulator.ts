import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { buildAnswer, buildEvents, messageBody, type AnswerEvent } from './anthropic-emulator/answers.js';
import { defaultErrorMessage, errorTypeForStatus, type AnthropicEmulatorFault, type AnthropicEmulatorTurn } from './anthropic-emulator/anthropic-script.js';
import { validateMessagesRequest } from './anthropic-emulator/validation.js';
import { listenLoopback, parseJsonBody, readBodyBuffer, recordedHeaders, RequestLog } from './emulator-http.js';

export type { AnthropicEmulatorFault, AnthropicEmulatorToolUse, AnthropicEmulatorTurn, AnthropicEmulatorUsage } from './anthropic-emulator/anthropic-script.js';

/**
 * A loopback emulator of the Anthropic Messages API for tests: `POST /v1/messages`, non-streamed
 * (a `message` object) and streamed (the API's server-sent events, in its order: `message_start`,
 * content blocks with `thinking_delta`/`signature_delta`, `text_delta` and `input_json_delta`
 * pieces, a `ping`, `message_delta`, `message_stop`). Answers come from a script of turns, with a
 * fault plan for error statuses, hangs, stalls, drops, malformed events and in-stream `error`
 * events. It checks the API key and the `anthropic-version` header, and validates requests like the
 * API does (HTTP 400 `invalid_request_error` naming the field): every `tool_use` id must be
 * answered by a `tool_result` block in the immediately following user message.
 */

/** Options of `startAnthropicEmulator`. */
export interface AnthropicEmulatorOptions {
  /** Turns consumed in order, one per successfully served `/v1/messages` request. */
  readonly script?: readonly AnthropicEmulatorTurn[];
  /**
   * Faults per 0-based index of `/v1/messages` requests (other paths don't count). Read when each
   * request arrives, so a test may add or remove entries while the emulator runs.
   */
  readonly faults?: Record<number, AnthropicEmulatorFault | undefined>;
  /**
   * When set, requests must carry `x-api-key: <apiKey>` or `authorization: Bearer <apiKey>` (the
   * header `@anthropic-ai/sdk` 1.x sends the key in); else 401 `authentication_error`.
   */
  readonly apiKey?: string;
  readonly host?: '127.0.0.1';
  /**
   * Keep only the most recent this many requests in `requests` (older ones are dropped; `index`
   * still counts every request). Default: keep all.
   */
  readonly recordLimit?: number;
}

/** One request the emulator received. Fields after `body` are updated as the response proceeds. */
export interface AnthropicRecordedRequest {
  /** 0-based over all requests. */
  readonly index: number;
  readonly method: string;
  readonly path: string;
  /** Lower-case names; `x-api-key` and `authorization` redacted. */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON body (undefined when empty or not JSON). */
  readonly body: unknown;
  /** 0-based index among `POST /v1/messages` requests (the fault-plan key), when it is one. */
  readonly message?: number;
  /** Status sent (0 until the head is written). */
  status: number;
  /** Server-sent events written (streaming), `ping` included. */
  eventsSent: number;
  /** True once the response is closed (ended, dropped, or abandoned by the client). */
  closed: boolean;
  /** True when the response did not end normally (the client left, or the emulator dropped it). */
  clientAborted: boolean;
}

/** A running emulator; `close()` it when done. */
export interface AnthropicEmulator {
  /** `http://127.0.0.1:<port>`, without `/v1` (the Anthropic SDK's `baseURL` convention). */
  readonly baseUrl: string;
  /** Every request received, in arrival order (the most recent `recordLimit` of them). */
  readonly requests: AnthropicRecordedRequest[];
  /** Resolves once request `index` (0-based, any path) has been received. */
  waitForRequest(index: number): Promise<AnthropicRecordedRequest>;
  /** Resolves once the response to request `index` is closed (ended, dropped or abandoned). */
  waitForClose(index: number): Promise<AnthropicRecordedRequest>;
  /** Stops the server and destroys every open connection (stalled and hung requests included). */
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

const OVERLOADED = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };

/** Starts the emulator on an ephemeral port of 127.0.0.1. */
export async function startAnthropicEmulator(opts: AnthropicEmulatorOptions = {}): Promise<AnthropicEmulator> {
  const log = new RequestLog<AnthropicRecordedRequest>(opts.recordLimit);
  const requests = log.requests;
  const script = [...(opts.script ?? [])];
  let served = 0;
  let messages = 0;
  let received = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendError(res, 500, String(e instanceof Error ? e.message : e), 'api_error');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBodyBuffer(req);
    const body = parseJsonBody(raw);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const isMessages = req.method === 'POST' && url.pathname === '/v1/messages';
    const record: AnthropicRecordedRequest = {
      index: received++,
      method: req.method ?? 'GET',
      path: url.pathname,
      headers: recordedHeaders(req),
      body,
      ...(isMessages ? { message: messages++ } : {}),
      status: 0,
      eventsSent: 0,
      closed: false,
      clientAborted: false,
    };
    log.add(record, res);
    res.setHeader('request-id', `req_e${record.index}`);

    // The API takes the key as `x-api-key`, or (as @anthropic-ai/sdk ≥ 1 sends it) as a bearer token.
    if (opts.apiKey !== undefined && req.headers['x-api-key'] !== opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      sendError(res, 401, 'invalid x-api-key', 'authentication_error');
      return;
    }
    if (!isMessages) {
      sendError(res, 404, 'Not Found', 'not_found_error');
      return;
    }
    if (req.headers['anthropic-version'] === undefined) {
      sendError(res, 400, 'anthropic-version: header is required', 'invalid_request_error');
      return;
    }
    if (raw.length > 0 && body === undefined) {
      sendError(res, 400, 'There was an issue with the formatting of your request: the body is not valid JSON.', 'invalid_request_error');
      return;
    }
    const invalid = validateMessagesRequest(body);
    if (invalid !== undefined) {
      sendError(res, 400, invalid, 'invalid_request_error');
      return;
    }
    const request = body as Json;
    const fault = opts.faults?.[record.message!];
    if (fault?.kind === 'status') {
      sendStatusFault(res, fault);
      return;
    }
    if (fault?.kind === 'hang') return;
    const turn = script[served];
    if (!turn) {
      const message = `Emulator script exhausted: ${script.length} turn(s) were scripted and all have been served.`;
      sendError(res, 400, message, 'invalid_request_error');
      return;
    }
    const answer = buildAnswer(turn, record.message!, request);
    if (request['stream'] === true) {
      if (await writeStream(res, record, buildEvents(answer), fault)) served++;
      return;
    }
    if (fault === undefined) {
      sendJson(res, 200, messageBody(answer));
      served++;
      return;
    }
    // The nearest non-streamed equivalent of a stream fault (see AnthropicEmulatorFault).
    if (fault.kind === 'stall') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
    } else if (fault.kind === 'drop') res.socket?.destroy();
    else if (fault.kind === 'error_event') sendJson(res, 529, OVERLOADED);
    else {
      const cut = JSON.stringify(messageBody(answer)).slice(0, 40);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(cut) });
      res.end(cut);
    }
  }

  /** Streams the events with the fault applied; true when the answer was sent whole. */
  async function writeStream(
    res: ServerResponse,
    record: AnthropicRecordedRequest,
    events: AnswerEvent[],
    fault: AnthropicEmulatorFault | undefined,
  ): Promise<boolean> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    const limit = fault && 'afterEvents' in fault ? Math.max(0, fault.afterEvents) : Infinity;
    const write = (frame: string): Promise<void> => new Promise((resolve) => res.write(frame, () => resolve()));
    const send = async (e: AnswerEvent): Promise<void> => {
      await write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
      record.eventsSent++;
      log.changed();
    };
    for (let i = 0; i < events.length && i < limit; i++) {
      await send(events[i]!);
      if (res.destroyed) return false;
    }
    if (fault === undefined) {
      res.end();
      return true;
    }
    if (fault.kind === 'stall') return false; // keep the socket open; the client or close() ends it
    if (fault.kind === 'drop') {
      res.socket?.destroy();
      return false;
    }
    if (fault.kind === 'error_event') {
      await send({ event: 'error', data: OVERLOADED });
      res.end();
      return false;
    }
    await write('event: content_block_delta\ndata: {"type": "content_block_delta", this is not json\n\n');
    record.eventsSent++;
    for (let i = limit; i < events.length; i++) await send(events[i]!);
    res.end();
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

function sendStatusFault(res: ServerResponse, fault: Extract<AnthropicEmulatorFault, { kind: 'status' }>): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  const body = fault.body ?? { type: 'error', error: { type: errorTypeForStatus(fault.status), message: fault.message ?? defaultErrorMessage(fault.status) } };
  res.writeHead(fault.status, headers);
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, message: string, type: string): void {
  sendJson(res, status, { type: 'error', error: { type, message } });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
