import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { EmulatedControlPlane, errorTypeFor, type AgentCoreControlOptions, type EmulatedHarness } from './agentcore-emulator/control-plane.js';
import { EmulatedCommands, runtimeSessionOf } from './agentcore-emulator/commands.js';
import { exceptionFrame } from './agentcore-emulator/frames.js';
import { isMap, validateMessages, type EmulatedSession, type HarnessWireMessage } from './agentcore-emulator/history.js';
import { InvokeWriter } from './agentcore-emulator/invoke-writer.js';
import { faultsFor, type AgentCoreFaultPlan, type AgentCoreScriptedTurn, type AgentCoreTurnContext } from './agentcore-emulator/script.js';
import { checkSigV4, type SigV4Check } from './agentcore-emulator/sigv4.js';
import { buildTurn, type BuiltTurn } from './agentcore-emulator/turn-frames.js';
import { listenLoopback, parseJsonBody, readBodyBuffer, recordedHeaders } from './emulator-http.js';

export type { AgentCoreFault, AgentCoreFaultPlan, AgentCoreScriptedToolUse, AgentCoreScriptedTurn, AgentCoreTurnContext } from './agentcore-emulator/script.js';

/**
 * A loopback Bedrock AgentCore server for tests and demos, checked against the official
 * `@aws-sdk/client-bedrock-agentcore` and `@aws-sdk/client-bedrock-agentcore-control` clients:
 *
 * - `POST /harnesses/invoke?harnessArn=…` (`InvokeHarness`): answers with
 *   `application/vnd.amazon.eventstream` frames encoded by `@smithy/eventstream-codec`
 *   (`messageStart`, `contentBlockStart`/`Delta`/`Stop`, `messageStop`, `metadata`), text and
 *   tool-use input deltas split across frames, and optionally across TCP writes (`chunkBytes`);
 * - `POST /harnesses`, `GET /harnesses/{id}`, `GET /harnesses`, `DELETE /harnesses/{id}` (the
 *   control plane, see `AgentCoreControlOptions`).
 *
 * Every request must carry a SigV4 `Authorization` header scoped to `bedrock-agentcore` (with
 * `credentials`, the signature is recomputed and must match); invokes must carry a valid
 * `X-Amzn-Bedrock-AgentCore-Runtime-Session-Id`. History is kept per runtime session id and
 * committed only by an invoke that completed (a faulted or rejected invoke changes nothing);
 * invokes are validated like the real service validates them (see `validateMessages`).
 *
 * The parts: the script and fault model (`script.ts`), turns encoded as frames
 * (`turn-frames.ts`), the response body with its stalls and faults (`InvokeWriter`), session
 * history and its checks (`history.ts`), the control plane, and SigV4 checking; this file routes
 * requests and keeps the request log.
 */

/** Options of `startAgentCoreEmulator`. */
export interface AgentCoreEmulatorOptions {
  /** Turns answered by completed invokes, in order, or a function of the invoke. */
  readonly script?: readonly AgentCoreScriptedTurn[] | ((ctx: AgentCoreTurnContext) => AgentCoreScriptedTurn);
  /** Faults by 0-based invoke index: HTTP errors, throttling, exception frames, truncation, stalls, damaged frames (see `AgentCoreFault`). */
  readonly faults?: AgentCoreFaultPlan;
  /** When set, the access key id must match and every signature is recomputed with the secret. */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** Region the emulated ARNs carry and the credential scope must name. Default: any scope; ARNs use `us-east-1`. */
  readonly region?: string;
  /**
   * How an invoke with invalid history (tool results without tool uses, duplicate ids…) is
   * rejected: `exception` (default) = HTTP 200 and a `validationException` frame, as when the
   * model call inside the harness fails; `http_400` = HTTP 400 ValidationException.
   */
  readonly rejectWith?: 'exception' | 'http_400';
  /** Split each response body into TCP writes of this many bytes (frames straddle writes). */
  readonly chunkBytes?: number;
  /** Control-plane behaviour (statuses, seeded harnesses, faults). */
  readonly control?: AgentCoreControlOptions;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Port to listen on. Default 0: an ephemeral one (see `baseUrl`). */
  readonly port?: number;
}

/** The operations the emulator answers. */
export type AgentCoreOperation = 'InvokeHarness' | 'InvokeAgentRuntimeCommand' | 'CreateHarness' | 'GetHarness' | 'ListHarnesses' | 'DeleteHarness' | 'Unknown';

/** One request as the emulator saw it (the Authorization header redacted). */
export interface AgentCoreRecordedRequest {
  /** 0-based position among all requests. */
  readonly index: number;
  /** The operation the method and path map to. */
  readonly operation: AgentCoreOperation;
  /** HTTP method. */
  readonly method: string;
  /** URL path, without the query. */
  readonly path: string;
  /** Decoded query parameters. */
  readonly query: Readonly<Record<string, string>>;
  /** Request headers; the signature and any security token are redacted. */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON body (undefined when empty or not JSON). */
  readonly body: unknown;
  /** What the SigV4 check found. */
  readonly auth: SigV4Check;
  /** 0-based invoke number (InvokeHarness only). */
  readonly invoke?: number;
  /** The runtime session id header, when present. */
  readonly runtimeSessionId?: string;
  /** HTTP status answered. */
  status?: number;
  /** `completed`, `rejected` (validation), `fault`, `unauthorized`. */
  outcome?: 'completed' | 'rejected' | 'fault' | 'unauthorized';
  /** The rejection or fault message, if any. */
  message?: string;
  /** Complete event-stream frames written. */
  framesSent: number;
  /** TCP writes of the response body. */
  writes: number;
  /** Stalls this response has entered so far. */
  stalls: number;
  /** True once the response was fully sent. */
  finished: boolean;
  /** True when the connection closed before the response was fully sent (client went away, or a dropped stream). */
  closed: boolean;
}

/** A running emulator. */
export interface AgentCoreEmulator {
  /** `http://127.0.0.1:<port>`: the `endpoint` for both SDK clients. */
  readonly baseUrl: string;
  /** Every request, in arrival order. */
  readonly requests: readonly AgentCoreRecordedRequest[];
  /** Invoke requests only, in order. */
  readonly invokes: () => readonly AgentCoreRecordedRequest[];
  /** Committed conversation of a runtime session (copies). */
  history(runtimeSessionId: string): readonly HarnessWireMessage[];
  /** Live harnesses of the control plane. */
  harnesses(): readonly EmulatedHarness[];
  /** Resolves once request `index` (0-based, all operations) has arrived. */
  waitForRequest(index: number): Promise<AgentCoreRecordedRequest>;
  /** Resolves once invoke `n` (0-based) has arrived. */
  waitForInvoke(n: number): Promise<AgentCoreRecordedRequest>;
  /** Resolves once invoke `n` has written at least `frames` complete frames. */
  waitForFrames(n: number, frames: number): Promise<AgentCoreRecordedRequest>;
  /** Resolves once invoke `n`'s connection closed before its response was complete. */
  waitForClose(n: number): Promise<AgentCoreRecordedRequest>;
  /**
   * `release(n)`: lets invoke `n` go past one stall — the one it is in, or its next one (a grant
   * is never lost, whatever the timing). `release()`: ends every stall currently waiting.
   */
  release(invoke?: number): void;
  /** Stops the server and closes every open connection (stalled streams included). */
  close(): Promise<void>;
}

const SESSION_HEADER = 'x-amzn-bedrock-agentcore-runtime-session-id';
const SESSION_ID = /^[a-zA-Z0-9][a-zA-Z0-9_-]{32,99}$/;
const ACCOUNT = '123456789012';

/** Starts the emulator on an ephemeral loopback port. */
export async function startAgentCoreEmulator(opts: AgentCoreEmulatorOptions = {}): Promise<AgentCoreEmulator> {
  const requests: AgentCoreRecordedRequest[] = [];
  const sessions = new Map<string, EmulatedSession>();
  const control = new EmulatedControlPlane(opts.control ?? {}, opts.region ?? 'us-east-1', ACCOUNT);
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  /** Stall releases granted per invoke index. */
  const grants = new Map<number, number>();
  let invokes = 0;
  let served = 0;
  const writer = new InvokeWriter(opts.chunkBytes, changes, (n) => grants.get(n) ?? 0);
  const commands = new EmulatedCommands();

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'InternalServerException', `Emulator failure: ${e instanceof Error ? e.message : String(e)}`);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBodyBuffer(req);
    const url = new URL(req.url ?? '/', 'http://emulator');
    const operation = operationOf(req.method ?? 'GET', url.pathname);
    const body = parseJsonBody(raw);
    const auth = checkSigV4(
      { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: raw },
      { service: 'bedrock-agentcore', credentials: opts.credentials, region: opts.region },
    );
    const record: AgentCoreRecordedRequest = {
      index: requests.length,
      operation,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams.entries()),
      headers: recordedHeaders(req, redactSigV4),
      body,
      auth,
      ...(operation === 'InvokeHarness' ? { invoke: invokes++ } : {}),
      ...(typeof req.headers[SESSION_HEADER] === 'string' ? { runtimeSessionId: req.headers[SESSION_HEADER] } : {}),
      framesSent: 0,
      writes: 0,
      stalls: 0,
      finished: false,
      closed: false,
    };
    requests.push(record);
    res.on('finish', () => {
      record.finished = true;
      changes.emit('change');
    });
    res.on('close', () => {
      if (!record.finished) record.closed = true;
      changes.emit('change');
    });
    changes.emit('change');

    if (!auth.ok) {
      record.outcome = 'unauthorized';
      record.message = auth.reason;
      const missing = req.headers['authorization'] === undefined;
      answer(res, record, 403, missing ? 'MissingAuthenticationTokenException' : 'InvalidSignatureException', {
        message: missing ? 'Missing Authentication Token' : `The request signature is invalid: ${auth.reason}`,
      });
      return;
    }
    switch (operation) {
      case 'InvokeHarness':
        await invoke(req, res, record, url, body);
        return;
      case 'InvokeAgentRuntimeCommand':
        await runCommand(req, res, record, body);
        return;
      case 'CreateHarness':
        controlAnswer(res, record, control.create(body));
        return;
      case 'GetHarness':
        controlAnswer(res, record, control.get(decodeURIComponent(url.pathname.split('/')[2] ?? '')));
        return;
      case 'ListHarnesses':
        controlAnswer(res, record, control.list(record.query));
        return;
      case 'DeleteHarness':
        controlAnswer(res, record, control.delete(decodeURIComponent(url.pathname.split('/')[2] ?? '')));
        return;
      default:
        answer(res, record, 404, 'UnknownOperationException', { message: `No operation at ${req.method} ${url.pathname}` });
    }
  }

  async function invoke(req: IncomingMessage, res: ServerResponse, record: AgentCoreRecordedRequest, url: URL, body: unknown): Promise<void> {
    const n = record.invoke!;
    const sid = req.headers[SESSION_HEADER];
    if (typeof sid !== 'string' || sid === '') {
      reject(res, record, 400, 'Missing required header X-Amzn-Bedrock-AgentCore-Runtime-Session-Id.', 'CannotParse');
      return;
    }
    if (!SESSION_ID.test(sid)) {
      reject(
        res,
        record,
        400,
        `runtimeSessionId: must be 33-100 characters of [a-zA-Z0-9][a-zA-Z0-9-_]*, got ${sid.length} characters.`,
        'FieldValidationFailed',
      );
      return;
    }
    if (!url.searchParams.get('harnessArn')?.startsWith('arn:')) {
      reject(res, record, 400, 'harnessArn: a harness ARN is required.', 'FieldValidationFailed');
      return;
    }
    const faults = faultsFor(opts.faults, n);
    const status = faults.find((f) => f.kind === 'status' || f.kind === 'throttle');
    if (status) {
      record.outcome = 'fault';
      if (status.kind === 'throttle') answer(res, record, 429, 'ThrottlingException', { message: status.message ?? 'Rate exceeded' });
      else {
        const type = status.errorType ?? errorTypeFor(status.status);
        const payload: Record<string, unknown> = { message: status.message ?? `Emulated ${type} (HTTP ${status.status}).` };
        if (type === 'ValidationException') payload['reason'] = 'FieldValidationFailed';
        answer(res, record, status.status, type, payload);
      }
      return;
    }
    const session = sessions.get(sid);
    const problem = validateMessages(isMap(body) ? body['messages'] : undefined, session);
    if (problem) {
      if (problem.shape || opts.rejectWith === 'http_400') {
        reject(res, record, 400, problem.message, problem.reason);
        return;
      }
      record.outcome = 'rejected';
      record.message = problem.message;
      record.status = 200;
      writer.start(res, `req-${requests.length}`);
      await writer.write(res, record, [exceptionFrame('validationException', { message: problem.message, reason: problem.reason })], 1);
      res.end();
      return;
    }
    const messages = (body as { messages: HarnessWireMessage[] }).messages;
    const turn = nextTurn({ invoke: n, runtimeSessionId: sid, messages, history: session?.messages.slice() ?? [] });
    if (!turn) {
      reject(
        res,
        record,
        400,
        `Emulator script exhausted: all ${Array.isArray(opts.script) ? opts.script.length : 0} scripted turn(s) have been served.`,
        'FieldValidationFailed',
      );
      return;
    }
    const built = buildTurn(turn, n, messages);
    record.status = 200;
    writer.start(res, `req-${requests.length}`);
    const ok = await writer.play(res, record, built.frames, faults);
    if (!ok) return;
    record.outcome = 'completed';
    served++;
    commit(sid, messages, built);
  }

  /** `InvokeAgentRuntimeCommand`: the session storage commands (see `EmulatedCommands`). */
  async function runCommand(req: IncomingMessage, res: ServerResponse, record: AgentCoreRecordedRequest, body: unknown): Promise<void> {
    const sid = runtimeSessionOf(req);
    if (sid === undefined)
      return reject(res, record, 400, 'X-Amzn-Bedrock-AgentCore-Runtime-Session-Id: a valid runtime session id is required.', 'FieldValidationFailed');
    record.status = 200;
    const done = await commands.serve(res, sid, body);
    record.outcome = 'completed';
    record.message = `exit ${done.exitCode}`;
  }

  function nextTurn(ctx: AgentCoreTurnContext): AgentCoreScriptedTurn | undefined {
    if (typeof opts.script === 'function') return opts.script(ctx);
    return (opts.script ?? [])[served];
  }

  function commit(sid: string, messages: readonly HarnessWireMessage[], built: BuiltTurn): void {
    let s = sessions.get(sid);
    if (!s) {
      s = { messages: [], pending: [], turns: 0 };
      sessions.set(sid, s);
    }
    s.messages.push(...messages.map(clone));
    s.turns++;
    if (built.stopReason === 'tool_use') {
      // The harness does not persist the uncommitted tool-use turn: the client echoes it on resume.
      s.pending = built.toolUses.map((u) => ({ toolUseId: u.toolUseId, name: u.name }));
    } else {
      s.pending = [];
      if (built.content.length > 0) s.messages.push({ role: 'assistant', content: built.content });
    }
  }

  function reject(res: ServerResponse, record: AgentCoreRecordedRequest, status: number, message: string, reason: string): void {
    record.outcome = 'rejected';
    record.message = message;
    answer(res, record, status, 'ValidationException', { message, reason });
  }

  function controlAnswer(
    res: ServerResponse,
    record: AgentCoreRecordedRequest,
    a: { status: number; body: Readonly<Record<string, unknown>>; errorType?: string },
  ): void {
    if (a.status >= 400) {
      record.outcome = 'fault';
      record.message = typeof a.body['message'] === 'string' ? a.body['message'] : undefined;
    } else record.outcome = 'completed';
    answer(res, record, a.status, a.errorType, a.body);
  }

  function answer(
    res: ServerResponse,
    record: AgentCoreRecordedRequest,
    status: number,
    errorType: string | undefined,
    payload: Readonly<Record<string, unknown>>,
  ): void {
    record.status = status;
    sendError(res, status, errorType, payload);
  }

  function waitFor(pred: () => AgentCoreRecordedRequest | undefined): Promise<AgentCoreRecordedRequest> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        const r = pred();
        if (!r) return false;
        changes.off('change', check);
        resolve(r);
        return true;
      };
      if (!check()) changes.on('change', check);
    });
  }
  const invokeRecord = (n: number): AgentCoreRecordedRequest | undefined => requests.find((r) => r.invoke === n);

  const port = await listenLoopback(server, opts.host, opts.port);

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    invokes: () => requests.filter((r) => r.operation === 'InvokeHarness'),
    history: (sid) => (sessions.get(sid)?.messages ?? []).map(clone),
    harnesses: () => [...control.harnesses],
    waitForRequest: (index) => waitFor(() => requests[index]),
    waitForInvoke: (n) => waitFor(() => invokeRecord(n)),
    waitForFrames: (n, frames) =>
      waitFor(() => {
        const r = invokeRecord(n);
        return r && r.framesSent >= frames ? r : undefined;
      }),
    waitForClose: (n) =>
      waitFor(() => {
        const r = invokeRecord(n);
        return r?.closed ? r : undefined;
      }),
    release: (invoke) => {
      if (invoke !== undefined) grants.set(invoke, (grants.get(invoke) ?? 0) + 1);
      else
        for (const r of requests) if (r.invoke !== undefined && !r.finished && !r.closed) grants.set(r.invoke, Math.max(grants.get(r.invoke) ?? 0, r.stalls));
      changes.emit('change');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ── plumbing ─────────────────────────────────────────────────────────────────────────────────

function operationOf(method: string, path: string): AgentCoreOperation {
  if (method === 'POST' && path === '/harnesses/invoke') return 'InvokeHarness';
  if (method === 'POST' && /^\/runtimes\/[^/]+\/commands$/.test(path)) return 'InvokeAgentRuntimeCommand';
  if (method === 'POST' && path === '/harnesses') return 'CreateHarness';
  if (method === 'GET' && path === '/harnesses') return 'ListHarnesses';
  if (/^\/harnesses\/[^/]+$/.test(path)) {
    if (method === 'GET') return 'GetHarness';
    if (method === 'DELETE') return 'DeleteHarness';
  }
  return 'Unknown';
}

function sendError(res: ServerResponse, status: number, errorType: string | undefined, payload: unknown): void {
  const text = JSON.stringify(payload);
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
  if (errorType !== undefined) headers['x-amzn-errortype'] = errorType;
  res.writeHead(status, headers);
  res.end(text);
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** SigV4 signatures and session tokens are not kept in the request log. */
function redactSigV4(name: string, value: string): string {
  if (name === 'authorization') return value.replace(/Signature=[0-9a-f]+/, 'Signature=[redacted]');
  if (name === 'x-amz-security-token') return '[redacted]';
  return value;
}
