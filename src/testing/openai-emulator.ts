import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { demoModelTurn } from './demo-model.js';
import { listenLoopback, parseJsonBody, readBodyBuffer, recordedHeaders } from './emulator-http.js';

/**
 * A loopback OpenAI-compatible chat-completions server for tests and demos: `POST
 * /v1/chat/completions` (streamed and not, OpenAI chunk shapes, `[DONE]`, usage in a final
 * `choices: []` chunk when `stream_options.include_usage`), `GET /v1/models`. Answers come from a
 * script of turns (or the rule-based demo model), with a fault plan for status errors, stalls,
 * drops, malformed chunks and the wire quirks of real OpenAI-compatible servers. It validates
 * requests like OpenAI does: every assistant `tool_call` id must be answered by exactly one
 * `tool` message before the next non-tool message, else HTTP 400.
 */

/** One tool call of a scripted turn. `arguments` as a string is sent verbatim (may be invalid JSON). */
export interface EmulatorToolCall {
  /** Default `call_e<completion>_<i>`. */
  readonly id?: string;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>> | string;
}

/** One scripted model answer; consumed by one successful completion request. */
export interface EmulatorTurn {
  /** Assistant text; streamed in several small deltas. */
  readonly text?: string;
  /** Tool calls (parallel when more than one). */
  readonly toolCalls?: readonly EmulatorToolCall[];
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  readonly finishReason?: string;
  /** Default: a deterministic estimate (characters / 4). */
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number };
}

/** Wire quirks of real OpenAI-compatible servers (streaming unless noted). */
export interface EmulatorQuirks {
  /** The first chunk of each tool call carries `function.arguments: null`. */
  readonly nullFirstArguments?: boolean;
  /** The finish chunk also carries an empty-arguments delta (with the id repeated) for the last call. */
  readonly finishWithEmptyArgsDelta?: boolean;
  /** Chunks of parallel tool calls are interleaved round-robin by `index`. */
  readonly interleaveParallelToolCalls?: boolean;
  /** Each call's arguments lose their last character (invalid JSON); streamed and not. */
  readonly invalidJsonArguments?: boolean;
}

/** What goes wrong with one completion request. */
export type EmulatorFault =
  /** Answer with this status (OpenAI-style error body unless `body` is given); the turn is not consumed. */
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string | number; readonly body?: unknown }
  /** Never answer (no status line, no headers) until the client leaves or `close()`; the turn is not consumed. */
  | { readonly kind: 'hang' }
  /** Stream `afterChunks` chunks, then write nothing more and keep the socket open (until the client leaves or `close()`). */
  | { readonly kind: 'stall'; readonly afterChunks: number }
  /** Stream `afterChunks` chunks (flushed), then destroy the socket. */
  | { readonly kind: 'drop'; readonly afterChunks: number }
  /** Stream `afterChunks` chunks, then a `data:` line that is not JSON, then the rest. */
  | { readonly kind: 'malformed_chunk'; readonly afterChunks: number }
  /** Serve this request with these quirks. */
  | ({ readonly kind: 'quirks' } & EmulatorQuirks);

/**
 * Faults per 0-based index of chat-completion requests (other endpoints don't count): an object
 * `{ 0: fault }` or a list `[fault, undefined, [fault, fault]]`.
 */
export type FaultPlan = Readonly<Record<number, EmulatorFault | readonly EmulatorFault[] | undefined>>;

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
  const requests: RecordedRequest[] = [];
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  const script = [...(opts.script ?? [])];
  let served = 0;
  let completions = 0;

  const waitFor = (index: number, ready: (r: RecordedRequest) => boolean): Promise<RecordedRequest> =>
    new Promise((resolve) => {
      const check = (): boolean => {
        const r = requests[index];
        if (r && ready(r)) {
          changes.off('change', check);
          resolve(r);
          return true;
        }
        return false;
      };
      if (!check()) changes.on('change', check);
    });

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
      index: requests.length,
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
    requests.push(record);
    res.on('close', () => {
      record.closed = true;
      record.clientAborted = !res.writableEnded;
      changes.emit('change');
    });
    const origWriteHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
    (res as { writeHead: unknown }).writeHead = (...a: unknown[]) => {
      record.status = Number(a[0]);
      return origWriteHead(...a);
    };
    changes.emit('change');

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
    const breaking = faults.find((f) => f.kind === 'stall' || f.kind === 'drop' || f.kind === 'malformed_chunk');
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
    const limit = fault && (fault.kind === 'stall' || fault.kind === 'drop' || fault.kind === 'malformed_chunk') ? Math.max(0, fault.afterChunks) : Infinity;
    const write = (frame: string): Promise<void> => new Promise((resolve) => res.write(frame, () => resolve()));
    if (limit === 0) await write(': emulator\n\n');
    for (let i = 0; i < chunks.length; i++) {
      if (i === limit) break;
      await write(`data: ${JSON.stringify(chunks[i])}\n\n`);
      record.chunksSent++;
      changes.emit('change');
      if (res.destroyed) return false;
    }
    if (fault?.kind === 'stall' && limit <= chunks.length) return false; // keep the socket open; close() ends it
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
    waitForRequest: (index) => waitFor(index, () => true),
    waitForClose: (index) => waitFor(index, (r) => r.closed),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ── answers ──────────────────────────────────────────────────────────────────────────────────

interface Answer {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly text: string | undefined;
  readonly calls: readonly { id: string; name: string; arguments: string }[];
  readonly finishReason: string;
  readonly usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

function buildAnswer(turn: EmulatorTurn, completion: number, request: Json, quirks: EmulatorQuirks): Answer {
  const calls = (turn.toolCalls ?? []).map((c, i) => {
    let args = typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments);
    if (quirks.invalidJsonArguments) args = args.slice(0, -1);
    return { id: c.id ?? `call_e${completion}_${i}`, name: c.name, arguments: args };
  });
  const text = turn.text;
  const prompt = Math.max(1, Math.ceil(JSON.stringify(request['messages'] ?? []).length / 4));
  const completionTokens = Math.max(1, Math.ceil(((text ?? '') + calls.map((c) => c.name + c.arguments).join('')).length / 4));
  const usage = turn.usage ?? { prompt_tokens: prompt, completion_tokens: completionTokens };
  return {
    id: `chatcmpl-emu${completion}`,
    created: 1_700_000_000 + completion,
    model: typeof request['model'] === 'string' ? request['model'] : 'emulator-model',
    text,
    calls,
    finishReason: turn.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

function completionBody(a: Answer): Json {
  const message: Json = { role: 'assistant', content: a.text ?? null, refusal: null, annotations: [] };
  if (a.calls.length > 0) {
    message['tool_calls'] = a.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  return {
    id: a.id,
    object: 'chat.completion',
    created: a.created,
    model: a.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: a.finishReason }],
    usage: a.usage,
    system_fingerprint: 'fp_emulator',
  };
}

/** The chunk sequence of a streamed answer (without `[DONE]`). */
function buildChunks(a: Answer, quirks: EmulatorQuirks, includeUsage: boolean): Json[] {
  const chunk = (delta: Json, finish: string | null = null): Json => ({
    id: a.id,
    object: 'chat.completion.chunk',
    created: a.created,
    model: a.model,
    system_fingerprint: 'fp_emulator',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const out: Json[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const piece of splitText(a.text ?? '')) out.push(chunk({ content: piece }));

  const perCall = a.calls.map((c, index) => {
    const pieces = splitArgs(c.arguments);
    const first: Json = { index, id: c.id, type: 'function', function: { name: c.name, arguments: quirks.nullFirstArguments ? null : '' } };
    return [first, ...pieces.map((p) => ({ index, function: { arguments: p } }))];
  });
  if (quirks.interleaveParallelToolCalls) {
    const longest = Math.max(0, ...perCall.map((p) => p.length));
    for (let i = 0; i < longest; i++) for (const p of perCall) if (p[i]) out.push(chunk({ tool_calls: [p[i]] }));
  } else {
    for (const p of perCall) for (const d of p) out.push(chunk({ tool_calls: [d] }));
  }

  const last = a.calls.length - 1;
  if (quirks.finishWithEmptyArgsDelta && last >= 0) {
    out.push(chunk({ tool_calls: [{ index: last, id: a.calls[last]!.id, type: 'function', function: { arguments: '' } }] }, a.finishReason));
  } else {
    out.push(chunk({}, a.finishReason));
  }
  if (includeUsage) {
    out.push({ id: a.id, object: 'chat.completion.chunk', created: a.created, model: a.model, system_fingerprint: 'fp_emulator', choices: [], usage: a.usage });
  }
  return out;
}

/** Splits text into small deltas of up to two words each (concatenation gives the text back). */
function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text]);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 2) out.push(words.slice(i, i + 2).join(''));
  const joined = out.join('');
  if (joined !== text) return text === '' ? [] : [text];
  return out;
}

/** Splits an arguments string into up to three pieces. */
function splitArgs(args: string): string[] {
  if (args.length < 3) return args === '' ? [] : [args];
  const third = Math.ceil(args.length / 3);
  return [args.slice(0, third), args.slice(third, 2 * third), args.slice(2 * third)].filter((p) => p !== '');
}

// ── validation (OpenAI semantics) ────────────────────────────────────────────────────────────

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** Returns the OpenAI-style 400 reason for an invalid request, or undefined. */
function validateCompletionRequest(body: unknown): { message: string; param: string | null } | undefined {
  if (!isMap(body)) return { message: 'The request body must be a JSON object.', param: null };
  if (typeof body['model'] !== 'string' || body['model'] === '') return { message: 'you must provide a model parameter', param: 'model' };
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) return { message: "[] is too short - 'messages'", param: 'messages' };
  const tools = body['tools'];
  if (tools !== undefined) {
    if (!Array.isArray(tools) || tools.length === 0) return { message: "[] is too short - 'tools'", param: 'tools' };
    for (let i = 0; i < tools.length; i++) {
      const t = tools[i] as unknown;
      if (!isMap(t) || t['type'] !== 'function' || !isMap(t['function']) || typeof t['function']['name'] !== 'string') {
        return { message: `Invalid tool at tools[${i}]: expected {type:'function', function:{name,…}}.`, param: `tools[${i}]` };
      }
    }
  }
  let pending: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as unknown;
    if (!isMap(m) || typeof m['role'] !== 'string' || !ROLES.has(m['role'])) {
      return { message: `Invalid value for 'messages[${i}].role'.`, param: `messages.[${i}].role` };
    }
    const role = m['role'];
    if (role === 'tool') {
      const id = m['tool_call_id'];
      if (typeof id !== 'string' || !pending.includes(id)) {
        return {
          message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${i}].role`,
        };
      }
      if (typeof m['content'] !== 'string' && !Array.isArray(m['content'])) {
        return { message: `Invalid type for 'messages[${i}].content': expected a string.`, param: `messages.[${i}].content` };
      }
      pending = pending.filter((p) => p !== id);
      continue;
    }
    if (pending.length > 0) {
      return {
        message:
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          `The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
        param: `messages.[${i}].role`,
      };
    }
    if (role === 'assistant' && Array.isArray(m['tool_calls'])) {
      for (let j = 0; j < m['tool_calls'].length; j++) {
        const call = m['tool_calls'][j] as unknown;
        if (!isMap(call) || typeof call['id'] !== 'string' || !isMap(call['function']) || typeof call['function']['arguments'] !== 'string') {
          return { message: `Invalid value for 'messages[${i}].tool_calls[${j}]'.`, param: `messages.[${i}].tool_calls.[${j}]` };
        }
        pending.push(call['id']);
      }
    } else if (role !== 'assistant' && m['content'] === undefined) {
      return { message: `Missing required parameter: 'messages[${i}].content'.`, param: `messages.[${i}].content` };
    }
  }
  if (pending.length > 0) {
    return {
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
        `The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
      param: 'messages',
    };
  }
  return undefined;
}

// ── plumbing ─────────────────────────────────────────────────────────────────────────────────

function faultsFor(plan: FaultPlan | undefined, completion: number): EmulatorFault[] {
  const f = plan?.[completion];
  if (f === undefined) return [];
  return Array.isArray(f) ? [...(f as readonly EmulatorFault[])] : [f as EmulatorFault];
}

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
