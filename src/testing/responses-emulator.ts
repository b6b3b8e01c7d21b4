import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLoopback, parseJsonBody, readBodyBuffer, recordedHeaders, RequestLog } from './emulator-http.js';
import { buildAnswer, buildEvents, failedBody, responseBody, type AnswerEvent, type ResponsesAnswer } from './responses-emulator/answers.js';
import {
  errorBody,
  SERVER_ERROR_MESSAGE,
  statusErrorBody,
  type ResponsesEmulatorFault,
  type ResponsesEmulatorTurn,
} from './responses-emulator/responses-script.js';
import { validateResponsesRequest } from './responses-emulator/validation.js';

export type {
  ResponsesEmulatorFault,
  ResponsesEmulatorFunctionCall,
  ResponsesEmulatorTurn,
  ResponsesEmulatorUsage,
} from './responses-emulator/responses-script.js';

/**
 * A loopback emulator of the OpenAI Responses API for tests: `POST /v1/responses`, non-streamed
 * (a `response` object) and streamed (the API's server-sent events, in its order:
 * `response.created`, `response.in_progress`, per output item `response.output_item.added`, the
 * reasoning summary, output text or function-call argument deltas, `response.output_item.done`,
 * then `response.completed`; no `[DONE]`). Answers come from a script of turns, with a fault plan for
 * error statuses, hangs, stalls, drops, malformed events, in-stream `error` events and
 * `response.failed`. It checks the API key and validates requests like the API does (HTTP 400
 * `invalid_request_error` naming the `param`): every `function_call` must be answered by a
 * `function_call_output` with its `call_id` before the next message item. It keeps no server-side
 * state: `previous_response_id` and `conversation` are refused, the client sends the whole input.
 */

/** Options of `startResponsesEmulator`. */
export interface ResponsesEmulatorOptions {
  /** Turns consumed in order, one per successfully served `/v1/responses` request. */
  readonly script?: readonly ResponsesEmulatorTurn[];
  /**
   * Faults per 0-based index of `/v1/responses` requests (other paths don't count). Read when each
   * request arrives, so a test may add or remove entries while the emulator runs.
   */
  readonly faults?: Record<number, ResponsesEmulatorFault | undefined>;
  /** When set, requests must carry `authorization: Bearer <apiKey>`; else 401 `invalid_api_key`. */
  readonly apiKey?: string;
  /** The address listened on: loopback only. */
  readonly host?: '127.0.0.1';
  /**
   * Keep only the most recent this many requests in `requests` (older ones are dropped; `index`
   * still counts every request). Default: keep all.
   */
  readonly recordLimit?: number;
}

/** One request the emulator received. Fields after `body` are updated as the response proceeds. */
export interface ResponsesRecordedRequest {
  /** 0-based over all requests. */
  readonly index: number;
  readonly method: string;
  readonly path: string;
  /** Lower-case names; `authorization` redacted to `<scheme> [redacted]`. */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON body (undefined when empty or not JSON). */
  readonly body: unknown;
  /** 0-based index among `POST /v1/responses` requests (the fault-plan key), when it is one. */
  readonly response?: number;
  /** Status sent (0 until the head is written). */
  status: number;
  /** Server-sent events written (streaming), an in-stream `error` or `response.failed` included. */
  eventsSent: number;
  /** True once the response is closed (ended, dropped, or abandoned by the client). */
  closed: boolean;
  /** True when the response did not end normally (the client left, or the emulator dropped it). */
  clientAborted: boolean;
}

/** A running emulator; `close()` it when done. */
export interface ResponsesEmulator {
  /** `http://127.0.0.1:<port>/v1` (the `openai` SDK's `baseURL` convention). */
  readonly baseUrl: string;
  /** Every request received, in arrival order (the most recent `recordLimit` of them). */
  readonly requests: ResponsesRecordedRequest[];
  /** Resolves once request `index` (0-based, any path) has been received. */
  waitForRequest(index: number): Promise<ResponsesRecordedRequest>;
  /** Resolves once the response to request `index` is closed (ended, dropped or abandoned). */
  waitForClose(index: number): Promise<ResponsesRecordedRequest>;
  /** Stops the server and destroys every open connection (stalled and hung requests included). */
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

const BAD_JSON =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. " +
  'The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)';

/** Starts the emulator on an ephemeral port of 127.0.0.1. */
export async function startResponsesEmulator(opts: ResponsesEmulatorOptions = {}): Promise<ResponsesEmulator> {
  const log = new RequestLog<ResponsesRecordedRequest>(opts.recordLimit);
  const requests = log.requests;
  const script = [...(opts.script ?? [])];
  // Reasoning items served with `store` on: what the API would find again by id.
  const servedReasoning = new Set<string>();
  let served = 0;
  let responses = 0;
  let received = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendError(res, 500, String(e instanceof Error ? e.message : e), 'server_error');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBodyBuffer(req);
    const body = parseJsonBody(raw);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const isResponses = req.method === 'POST' && url.pathname === '/v1/responses';
    const record: ResponsesRecordedRequest = {
      index: received++,
      method: req.method ?? 'GET',
      path: url.pathname,
      headers: recordedHeaders(req),
      body,
      ...(isResponses ? { response: responses++ } : {}),
      status: 0,
      eventsSent: 0,
      closed: false,
      clientAborted: false,
    };
    log.add(record, res);
    res.setHeader('x-request-id', `req_e${record.index}`);

    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      const message = 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.';
      sendError(res, 401, message, 'invalid_request_error', null, 'invalid_api_key');
      return;
    }
    if (!isResponses) {
      const message = `Unknown request URL: ${req.method} ${url.pathname}. Please check the URL for typos, or see the docs at https://platform.openai.com/docs/api-reference/.`;
      sendError(res, 404, message, 'invalid_request_error', null, 'unknown_url');
      return;
    }
    if (raw.length > 0 && body === undefined) {
      sendError(res, 400, BAD_JSON, 'invalid_request_error');
      return;
    }
    const invalid = validateResponsesRequest(body, { servedReasoning });
    if (invalid) {
      sendError(res, 400, invalid.message, 'invalid_request_error', invalid.param, invalid.code);
      return;
    }
    const request = body as Json;
    const fault = opts.faults?.[record.response!];
    if (fault?.kind === 'status') {
      sendStatusFault(res, fault);
      return;
    }
    if (fault?.kind === 'hang') return;
    const turn = script[served];
    if (!turn) {
      const message = `Emulator script exhausted: ${script.length} turn(s) were scripted and all have been served.`;
      sendError(res, 400, message, 'invalid_request_error', null, 'emulator_script_exhausted');
      return;
    }
    const answer = buildAnswer(turn, record.response!, request);
    const consume = (): void => {
      served++;
      if (request['store'] !== false) for (const item of answer.output) if (item['type'] === 'reasoning') servedReasoning.add(item['id'] as string);
    };
    if (request['stream'] === true) await writeStream(res, record, answer, fault, consume);
    else if (answerWhole(res, answer, fault)) consume();
  }

  /** Answers a non-streamed request (with the nearest equivalent of a stream fault); true when sent whole. */
  function answerWhole(res: ServerResponse, answer: ResponsesAnswer, fault: ResponsesEmulatorFault | undefined): boolean {
    if (fault === undefined) {
      sendJson(res, 200, responseBody(answer));
      return true;
    }
    if (fault.kind === 'stall') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
    } else if (fault.kind === 'drop') res.socket?.destroy();
    else if (fault.kind === 'error_event') sendError(res, 500, fault.message ?? SERVER_ERROR_MESSAGE, 'server_error', null, 'server_error');
    else if (fault.kind === 'failed') sendJson(res, 200, failedBody(answer, [], fault.message ?? SERVER_ERROR_MESSAGE));
    else {
      const cut = JSON.stringify(responseBody(answer)).slice(0, 40);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(cut) });
      res.end(cut);
    }
    return false;
  }

  /**
   * Streams the events with the fault applied. An answer streamed whole consumes its turn (`consume`)
   * before its last event is written, so a client that asks again as soon as it has read that event
   * gets the next turn.
   */
  async function writeStream(
    res: ServerResponse,
    record: ResponsesRecordedRequest,
    answer: ResponsesAnswer,
    fault: ResponsesEmulatorFault | undefined,
    consume: () => void,
  ): Promise<void> {
    const events = buildEvents(answer);
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
      if (fault === undefined && i === events.length - 1) consume();
      await send(events[i]!);
      if (res.destroyed) return;
    }
    if (fault === undefined) {
      res.end();
      return;
    }
    if (fault.kind === 'stall') return; // keep the socket open; the client or close() ends it
    if (fault.kind === 'drop') {
      res.socket?.destroy();
      return;
    }
    const sequence_number = Math.min(limit, events.length);
    const message = 'message' in fault ? (fault.message ?? SERVER_ERROR_MESSAGE) : SERVER_ERROR_MESSAGE;
    if (fault.kind === 'error_event') {
      await send({ event: 'error', data: { type: 'error', code: 'server_error', message, param: null, sequence_number } });
      res.end();
      return;
    }
    if (fault.kind === 'failed') {
      const sent = events.slice(0, sequence_number).filter((e) => e.event === 'response.output_item.done');
      const response = failedBody(
        answer,
        sent.map((e) => e.data['item'] as Json),
        message,
      );
      await send({ event: 'response.failed', data: { type: 'response.failed', response, sequence_number } });
      res.end();
      return;
    }
    await write('event: response.output_text.delta\ndata: {"type": "response.output_text.delta", this is not json\n\n');
    record.eventsSent++;
    for (let i = limit; i < events.length; i++) await send(events[i]!);
    res.end();
  }

  const port = await listenLoopback(server, opts.host);

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
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

function sendStatusFault(res: ServerResponse, fault: Extract<ResponsesEmulatorFault, { kind: 'status' }>): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  const body = fault.body ?? statusErrorBody(fault.status, fault.message);
  res.writeHead(fault.status, headers);
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, message: string, type: string, param: string | null = null, code: string | null = null): void {
  sendJson(res, status, errorBody(message, type, param, code));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
