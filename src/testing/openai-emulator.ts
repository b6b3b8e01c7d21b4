import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { demoModelTurn } from './demo-model.js';
import { listenLoopback, parseJsonBody, readBodyBuffer, recordedHeaders, RequestLog } from './emulator-http.js';
import { buildAnswer, buildChunks, completionBody } from './openai-emulator/answers.js';
import { faultsFor, type EmulatorFault, type EmulatorQuirks, type EmulatorTurn, type FaultPlan } from './openai-emulator/openai-script.js';
import { validateCompletionRequest } from './openai-emulator/validation.js';

export type { EmulatorFault, EmulatorQuirks, EmulatorToolCall, EmulatorTurn, FaultPlan } from './openai-emulator/openai-script.js';

/**
 * A loopback OpenAI-compatible chat-completions server for tests and demos: `POST
 * /v1/chat/completions` (streamed and not, OpenAI chunk shapes, `[DONE]`, usage in a final
 * `choices: []` chunk when `stream_options.include_usage`), `GET /v1/models`. Answers come from a
 * script of turns (or the rule-based demo model), with a fault plan for status errors, stalls,
 * drops, malformed chunks, foreign bodies (an HTML page), frames that never end, and the wire
 * quirks of real OpenAI-compatible servers. It validates
 * requests like OpenAI does: every assistant `tool_call` id must be answered by exactly one
 * `tool` message before the next non-tool message, else HTTP 400.
 */

/** Options of `startOpenAiEmulator`. */
export interface OpenAiEmulatorOptions {
  /** Turns consumed in order, one per successfully served completion request. */
  readonly script?: readonly EmulatorTurn[];
  readonly faults?: FaultPlan;
  /** Quirks applied to every completion request. */
  readonly quirks?: EmulatorQuirks;
  /** `scripted` (default) plays `script`; `demo` answers with the rule-based demo model. */
  readonly model?: 'scripted' | 'demo';
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401). */
  readonly apiKey?: string;
  readonly host?: '127.0.0.1';
  /**
   * Keep only the most recent this many requests in `requests` (older ones are dropped; `index`
   * still counts every request). Default: keep all (tests read them). `agentrx serve --demo`
   * bounds it, so a long-running demo does not grow without end.
   */
  readonly recordLimit?: number;
}

/** One request the emulator received. Fields after `body` are updated as the response proceeds. */
export interface RecordedRequest {
  /** 0-based over all requests. */
  readonly index: number;
  readonly method: string;
  readonly path: string;
  /** Lower-case names; `authorization` redacted to `<scheme> [redacted]`. */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON body (undefined when empty or not JSON). */
  readonly body: unknown;
  /** 0-based index among chat-completion requests (the fault-plan key), when it is one. */
  readonly completion?: number;
  /** Status sent (0 until the head is written). */
  status: number;
  /** Chunk frames written (streaming). */
  chunksSent: number;
  /** True once the response is closed (ended, dropped, or abandoned by the client). */
  closed: boolean;
  /** True when the client closed the connection before the response ended. */
  clientAborted: boolean;
}

export interface OpenAiEmulator {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Resolves once request `index` (0-based, any endpoint) has been received. */
  waitForRequest(index: number): Promise<RecordedRequest>;
  /** Resolves once the response to request `index` is closed (ended, dropped or abandoned). */
  waitForClose(index: number): Promise<RecordedRequest>;
  /** Stops the server and destroys every open connection (stalled streams included). */
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

/** Starts the emulator on an ephemeral port of 127.0.0.1. */
export async function startOpenAiEmulator(opts: OpenAiEmulatorOptions = {}): Promise<OpenAiEmulator> {
  const log = new RequestLog<RecordedRequest>(opts.recordLimit);
  const requests = log.requests;
  const script = [...(opts.script ?? [])];
  let served = 0;
  let completions = 0;
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
    const isCompletion = req.method === 'POST' && url.pathname === '/v1/chat/completions';
    const record: RecordedRequest = {
      index: received++,
      method: req.method ?? 'GET',
      path: url.pathname,
      headers: recordedHeaders(req),
      body,
      ...(isCompletion ? { completion: completions++ } : {}),
      status: 0,
      chunksSent: 0,
      closed: false,
      clientAborted: false,
    };
    log.add(record, res);

    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      sendError(res, 401, 'Incorrect API key provided.', 'invalid_request_error', null, 'invalid_api_key');
      return;
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: [modelEntry(opts.model === 'demo' ? 'demo' : 'emulator-model')] });
      return;
    }
    if (req.method === 'GET' && url.pathname.startsWith('/v1/models/')) {
      sendJson(res, 200, modelEntry(decodeURIComponent(url.pathname.slice('/v1/models/'.length))));
      return;
    }
    if (!isCompletion) {
      sendError(res, 404, `Unknown request URL: ${req.method} ${url.pathname}.`, 'invalid_request_error', null, 'unknown_url');
      return;
    }
    if (raw.length > 0 && body === undefined) {
      sendError(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
      return;
    }
    const invalid = validateCompletionRequest(body);
    if (invalid) {
      sendError(res, 400, invalid.message, 'invalid_request_error', invalid.param);
      return;
    }
    const request = body as Json;
    const faults = faultsFor(opts.faults, record.completion!);
    const status = faults.find((f): f is Extract<EmulatorFault, { kind: 'status' }> => f.kind === 'status');
    if (status) {
      sendStatusFault(res, status, String(request['model']));
      return;
    }
    const page = faults.find((f): f is Extract<EmulatorFault, { kind: 'body' }> => f.kind === 'body');
    if (page) {
      res.writeHead(page.status ?? 200, { 'content-type': page.contentType, 'content-length': Buffer.byteLength(page.body) });
      res.end(page.body);
      return;
    }
    if (faults.some((f) => f.kind === 'hang')) return;
    const quirks: EmulatorQuirks = Object.assign({}, opts.quirks ?? {}, ...faults.filter((f) => f.kind === 'quirks'));
    let turn: EmulatorTurn;
    if (opts.model === 'demo') turn = demoModelTurn({ messages: request['messages'] as unknown[], tools: request['tools'] as unknown[] | undefined });
    else {
      const next = script[served];
      if (!next) {
        sendError(res, 400, `Emulator script exhausted: ${script.length} turn(s) were scripted and all have been served.`, 'emulator_error');
        return;
      }
      turn = next;
    }
    const completionIndex = record.completion!;
    const answer = buildAnswer(turn, completionIndex, request, quirks);
    const breaking = faults.find((f) => f.kind === 'stall' || f.kind === 'drop' || f.kind === 'malformed_chunk' || f.kind === 'unbounded_frame');
    if (request['stream'] === true) {
      const includeUsage = isMap(request['stream_options']) && request['stream_options']['include_usage'] === true;
      const ok = await writeStream(res, record, buildChunks(answer, quirks, includeUsage), breaking);
      if (ok) served += opts.model === 'demo' ? 0 : 1;
    } else {
      sendJson(res, 200, completionBody(answer));
      served += opts.model === 'demo' ? 0 : 1;
    }
  }

  async function writeStream(res: ServerResponse, record: RecordedRequest, chunks: Json[], fault: EmulatorFault | undefined): Promise<boolean> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const limit =
      fault && (fault.kind === 'stall' || fault.kind === 'drop' || fault.kind === 'malformed_chunk' || fault.kind === 'unbounded_frame')
        ? Math.max(0, fault.afterChunks)
        : Infinity;
    const write = (frame: string): Promise<void> => new Promise((resolve) => res.write(frame, () => resolve()));
    if (limit === 0) await write(': emulator\n\n');
    for (let i = 0; i < chunks.length; i++) {
      if (i === limit) break;
      await write(`data: ${JSON.stringify(chunks[i])}\n\n`);
      record.chunksSent++;
      log.changed();
      if (res.destroyed) return false;
    }
    if (fault?.kind === 'stall' && limit <= chunks.length) return false; // keep the socket open; close() ends it
    if (fault?.kind === 'unbounded_frame') {
      // A frame that never ends, written as fast as the client reads it; then the socket stays open.
      await write('data: {"id":"');
      const piece = 'x'.repeat(64 * 1024);
      for (let left = fault.bytes; left > 0 && !res.destroyed; left -= piece.length) await write(left >= piece.length ? piece : piece.slice(0, left));
      return false;
    }
    if (fault?.kind === 'drop') {
      res.socket?.destroy();
      return false;
    }
    if (fault?.kind === 'malformed_chunk') {
      await write('data: {"id": this is not json\n\n');
      for (let i = limit; i < chunks.length; i++) {
        await write(`data: ${JSON.stringify(chunks[i])}\n\n`);
        record.chunksSent++;
      }
      res.end('data: [DONE]\n\n');
      return false;
    }
    res.end('data: [DONE]\n\n');
    return true;
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

function sendStatusFault(res: ServerResponse, fault: Extract<EmulatorFault, { kind: 'status' }>, model: string): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  const body = fault.body ?? defaultErrorBody(fault.status, model);
  res.writeHead(fault.status, headers);
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function defaultErrorBody(status: number, model: string): Json {
  const e = (message: string, type: string, code: string | null = null): Json => ({ error: { message, type, param: null, code } });
  if (status === 401) return e('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
  if (status === 404) return e(`The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found');
  if (status === 429) return e('Rate limit reached for requests. Please try again later.', 'requests', 'rate_limit_exceeded');
  if (status >= 500) return e('The server had an error while processing your request. Sorry about that!', 'server_error');
  return e(`Emulated error with status ${status}.`, 'invalid_request_error');
}

function sendError(res: ServerResponse, status: number, message: string, type: string, param: string | null = null, code: string | null = null): void {
  sendJson(res, status, { error: { message, type, param, code } });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function modelEntry(id: string): Json {
  return { id, object: 'model', created: 1_700_000_000, owned_by: 'agentrx-emulator' };
}

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
