import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { EmulatedControlPlane, errorTypeFor, type AgentCoreControlOptions, type EmulatedHarness } from './agentcore-emulator/control-plane.js';
import { eventFrame, exceptionFrame } from './agentcore-emulator/frames.js';
import { isMap, validateMessages, type EmulatedSession, type HarnessWireMessage } from './agentcore-emulator/history.js';
import { checkSigV4, type SigV4Check } from './agentcore-emulator/sigv4.js';
import { listenLoopback, parseJsonBody, readBodyBuffer, recordedHeaders } from './emulator-http.js';

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
 */

/** One tool use of a scripted turn. */
export interface AgentCoreScriptedToolUse {
  /** Default `tooluse_e<invoke>_<i>`. */
  readonly id?: string;
  /** Tool name (an inline function of the harness). */
  readonly name: string;
  /** An object is JSON-encoded; a string is sent verbatim (it may be invalid JSON). */
  readonly input: Readonly<Record<string, unknown>> | string;
  /** How many `contentBlockDelta` frames carry the input. Default 3. */
  readonly pieces?: number;
  /** `toolUse.type` on the wire. Default `tool_use` (a client-side inline function). */
  readonly type?: 'tool_use' | 'server_tool_use' | 'mcp_tool_use';
}

/** One scripted model answer, consumed by one completed invoke. */
export interface AgentCoreScriptedTurn {
  /** Assistant text: a string is streamed in small deltas; an array gives the deltas exactly. */
  readonly text?: string | readonly string[];
  /** Tool uses, streamed after the text (parallel when more than one). */
  readonly toolUses?: readonly AgentCoreScriptedToolUse[];
  /** Default `tool_use` when there are tool uses, else `end_turn`. */
  readonly stopReason?: string;
  /** Default: a deterministic estimate (characters / 4). */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
  /** Interleave the input deltas of parallel tool uses (all starts, then deltas round-robin, then stops). */
  readonly interleave?: boolean;
  /** Put every tool-use block at the same `contentBlockIndex` (indices reused, as seen live). */
  readonly reuseIndex?: boolean;
}

/** What a scripted turn function sees. */
export interface AgentCoreTurnContext {
  /** 0-based number of the invoke. */
  readonly invoke: number;
  /** The session header value. */
  readonly runtimeSessionId: string;
  /** The messages this invoke sent (the delta). */
  readonly messages: readonly HarnessWireMessage[];
  /** Committed history of the session before this invoke. */
  readonly history: readonly HarnessWireMessage[];
}

/** A fault injected into one invoke (by 0-based invoke index). */
export type AgentCoreFault =
  /** An HTTP error before any frame (`x-amzn-errortype`, `{message}`). */
  | { readonly kind: 'status'; readonly status: number; readonly errorType?: string; readonly message?: string }
  /** HTTP 429 ThrottlingException. */
  | { readonly kind: 'throttle'; readonly message?: string }
  /** `afterFrames` frames, then an exception frame, then the end of the response. */
  | { readonly kind: 'exception'; readonly afterFrames: number; readonly exceptionType?: string; readonly message?: string }
  /**
   * `afterFrames` frames, then the response ends without `messageStop` (a clean end) — or, with
   * `midFrame`, half of the next frame and a destroyed socket.
   */
  | { readonly kind: 'truncate'; readonly afterFrames: number; readonly midFrame?: boolean }
  /**
   * `afterFrames` frames (plus half of the next one with `midFrame`), then nothing while the
   * socket stays open, until `release(n)` (the stream goes on) or `close()`. An invoke may stall
   * several times (one fault per stall), before an `exception` or `truncate` fault if any.
   */
  | { readonly kind: 'stall'; readonly afterFrames: number; readonly midFrame?: boolean };

/** Faults by 0-based invoke index. */
export type AgentCoreFaultPlan = Readonly<Record<number, AgentCoreFault | readonly AgentCoreFault[]>>;

/** Options of `startAgentCoreEmulator`. */
export interface AgentCoreEmulatorOptions {
  /** Turns answered by completed invokes, in order, or a function of the invoke. */
  readonly script?: readonly AgentCoreScriptedTurn[] | ((ctx: AgentCoreTurnContext) => AgentCoreScriptedTurn);
  /** Faults by 0-based invoke index. */
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
}

/** The operations the emulator answers. */
export type AgentCoreOperation = 'InvokeHarness' | 'CreateHarness' | 'GetHarness' | 'ListHarnesses' | 'DeleteHarness' | 'Unknown';

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
    const auth = checkSigV4({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: raw }, { service: 'bedrock-agentcore', credentials: opts.credentials, region: opts.region });
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
      answer(res, record, 403, missing ? 'MissingAuthenticationTokenException' : 'InvalidSignatureException', { message: missing ? 'Missing Authentication Token' : `The request signature is invalid: ${auth.reason}` });
      return;
    }
    switch (operation) {
      case 'InvokeHarness':
        await invoke(req, res, record, url, body);
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
      reject(res, record, 400, `runtimeSessionId: must be 33-100 characters of [a-zA-Z0-9][a-zA-Z0-9-_]*, got ${sid.length} characters.`, 'FieldValidationFailed');
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
      startStream(res);
      await write(res, record, [exceptionFrame('validationException', { message: problem.message, reason: problem.reason })], 1);
      res.end();
      return;
    }
    const messages = (body as { messages: HarnessWireMessage[] }).messages;
    const turn = nextTurn({ invoke: n, runtimeSessionId: sid, messages, history: session?.messages.slice() ?? [] });
    if (!turn) {
      reject(res, record, 400, `Emulator script exhausted: all ${Array.isArray(opts.script) ? opts.script.length : 0} scripted turn(s) have been served.`, 'FieldValidationFailed');
      return;
    }
    const built = buildTurn(turn, n, messages);
    record.status = 200;
    startStream(res);
    const ok = await stream(res, record, built.frames, faults);
    if (!ok) return;
    record.outcome = 'completed';
    served++;
    commit(sid, messages, built);
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

  /**
   * Writes the frames of a turn, applying its stalls (in `afterFrames` order) and its ending
   * fault (`exception` or `truncate`), if any. Resolves true when the invoke completed.
   */
  async function stream(res: ServerResponse, record: AgentCoreRecordedRequest, frames: readonly Uint8Array[], faults: readonly AgentCoreFault[]): Promise<boolean> {
    const stalls = faults.filter((f): f is Extract<AgentCoreFault, { kind: 'stall' }> => f.kind === 'stall').sort((a, b) => a.afterFrames - b.afterFrames);
    const end = faults.find((f): f is Extract<AgentCoreFault, { kind: 'exception' | 'truncate' }> => f.kind === 'exception' || f.kind === 'truncate');
    const clamp = (n: number): number => Math.max(0, Math.min(n, frames.length));
    const endAt = end ? clamp(end.afterFrames) : frames.length;
    let pos = 0;
    // The unsent rest of frame `pos` when only its first half went out.
    let carry: Uint8Array | undefined;
    const sendUpTo = async (limit: number, half: boolean): Promise<boolean> => {
      const parts: Uint8Array[] = [];
      let from = pos;
      if (carry) {
        parts.push(carry);
        carry = undefined;
        from = pos + 1;
      }
      const upTo = Math.max(limit, from);
      parts.push(...frames.slice(from, upTo));
      const whole = parts.length;
      const head = half && upTo < frames.length ? frames[upTo]!.subarray(0, Math.ceil(frames[upTo]!.length / 2)) : undefined;
      if (head) parts.push(head);
      const ok = await write(res, record, parts, whole, pos);
      pos = upTo;
      if (head) carry = frames[upTo]!.subarray(head.length);
      return ok;
    };
    for (const stall of stalls) {
      if (end && stall.afterFrames >= endAt) break;
      if (!(await sendUpTo(clamp(stall.afterFrames), stall.midFrame === true))) return false;
      record.outcome = 'fault';
      record.message = 'Emulated stall';
      if (!(await waitRelease(res, record))) return false;
    }
    if (!end) {
      if (!(await sendUpTo(frames.length, false))) return false;
      res.end();
      record.outcome = 'completed';
      record.message = undefined;
      return true;
    }
    record.outcome = 'fault';
    if (end.kind === 'exception') {
      if (!(await sendUpTo(endAt, false))) return false;
      record.message = end.message ?? 'Emulated exception';
      const ok = await write(res, record, [exceptionFrame(end.exceptionType ?? 'internalServerException', { message: record.message })], 1, pos);
      if (ok) res.end();
      return false;
    }
    if (!(await sendUpTo(endAt, end.midFrame === true))) return false;
    record.message = 'Emulated truncated stream';
    if (carry) res.socket?.destroy();
    else res.end();
    return false;
  }

  /** Waits in a stall until a release is granted (true) or the connection closes (false). */
  function waitRelease(res: ServerResponse, record: AgentCoreRecordedRequest): Promise<boolean> {
    record.stalls++;
    changes.emit('change');
    return new Promise<boolean>((resolve) => {
      const done = (released: boolean): void => {
        changes.off('change', check);
        res.off('close', onClose);
        resolve(released && !res.destroyed);
      };
      const check = (): void => {
        if ((grants.get(record.invoke!) ?? 0) >= record.stalls) done(true);
      };
      const onClose = (): void => done(false);
      changes.on('change', check);
      res.once('close', onClose);
      check();
    });
  }

  /**
   * Writes `parts` as the body (split into `chunkBytes` writes when set); `wholeFrames` of them
   * count as frames (a trailing half frame does not). Resolves false when the client went away.
   */
  async function write(res: ServerResponse, record: AgentCoreRecordedRequest, parts: readonly Uint8Array[], wholeFrames: number, framesBefore = 0): Promise<boolean> {
    const ends: number[] = [];
    let total = 0;
    for (const p of parts) {
      total += p.length;
      ends.push(total);
    }
    const all = Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.length)));
    const size = opts.chunkBytes !== undefined && opts.chunkBytes > 0 ? opts.chunkBytes : undefined;
    const pieces: Buffer[] = [];
    if (size) for (let i = 0; i < all.length; i += size) pieces.push(all.subarray(i, i + size));
    else {
      let start = 0;
      for (const end of ends) {
        pieces.push(all.subarray(start, end));
        start = end;
      }
    }
    let sent = 0;
    for (const piece of pieces) {
      if (res.destroyed || record.closed) return false;
      await new Promise<void>((resolve) => res.write(piece, () => resolve()));
      sent += piece.length;
      record.writes++;
      record.framesSent = framesBefore + ends.slice(0, wholeFrames).filter((e) => e <= sent).length;
      changes.emit('change');
    }
    return !res.destroyed && !record.closed;
  }

  function startStream(res: ServerResponse): void {
    res.socket?.setNoDelay(true);
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': `req-${requests.length}` });
    res.flushHeaders();
  }

  function reject(res: ServerResponse, record: AgentCoreRecordedRequest, status: number, message: string, reason: string): void {
    record.outcome = 'rejected';
    record.message = message;
    answer(res, record, status, 'ValidationException', { message, reason });
  }

  function controlAnswer(res: ServerResponse, record: AgentCoreRecordedRequest, a: { status: number; body: Readonly<Record<string, unknown>>; errorType?: string }): void {
    if (a.status >= 400) {
      record.outcome = 'fault';
      record.message = typeof a.body['message'] === 'string' ? a.body['message'] : undefined;
    } else record.outcome = 'completed';
    answer(res, record, a.status, a.errorType, a.body);
  }

  function answer(res: ServerResponse, record: AgentCoreRecordedRequest, status: number, errorType: string | undefined, payload: Readonly<Record<string, unknown>>): void {
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

  const port = await listenLoopback(server, opts.host);

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    invokes: () => requests.filter((r) => r.operation === 'InvokeHarness'),
    history: (sid) => (sessions.get(sid)?.messages ?? []).map(clone),
    harnesses: () => [...control.harnesses],
    waitForRequest: (index) => waitFor(() => requests[index]),
    waitForInvoke: (n) => waitFor(() => invokeRecord(n)),
    waitForFrames: (n, frames) => waitFor(() => {
      const r = invokeRecord(n);
      return r && r.framesSent >= frames ? r : undefined;
    }),
    waitForClose: (n) => waitFor(() => {
      const r = invokeRecord(n);
      return r?.closed ? r : undefined;
    }),
    release: (invoke) => {
      if (invoke !== undefined) grants.set(invoke, (grants.get(invoke) ?? 0) + 1);
      else for (const r of requests) if (r.invoke !== undefined && !r.finished && !r.closed) grants.set(r.invoke, Math.max(grants.get(r.invoke) ?? 0, r.stalls));
      changes.emit('change');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ── turns → frames ───────────────────────────────────────────────────────────────────────────

interface BuiltTurn {
  readonly frames: Uint8Array[];
  readonly stopReason: string;
  readonly toolUses: readonly { toolUseId: string; name: string; input: string }[];
  /** The assistant message content as committed to history. */
  readonly content: Record<string, unknown>[];
}

function buildTurn(turn: AgentCoreScriptedTurn, invoke: number, messages: readonly HarnessWireMessage[]): BuiltTurn {
  const frames: Uint8Array[] = [];
  const ev = (type: string, payload: unknown): void => {
    frames.push(eventFrame(type, payload));
  };
  const deltas = typeof turn.text === 'string' ? splitText(turn.text) : [...(turn.text ?? [])];
  const text = deltas.join('');
  const uses = (turn.toolUses ?? []).map((u, i) => ({
    toolUseId: u.id ?? `tooluse_e${invoke}_${i}`,
    name: u.name,
    type: u.type ?? 'tool_use',
    input: typeof u.input === 'string' ? u.input : JSON.stringify(u.input),
    pieces: Math.max(1, u.pieces ?? 3),
  }));
  ev('messageStart', { role: 'assistant' });
  let index = 0;
  if (deltas.length > 0) {
    for (const d of deltas) ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: d } });
    ev('contentBlockStop', { contentBlockIndex: 0 });
    index = 1;
  }
  const indexOf = (i: number): number => (turn.reuseIndex ? index : index + i);
  const start = (u: (typeof uses)[number], i: number): void =>
    ev('contentBlockStart', { contentBlockIndex: indexOf(i), start: { toolUse: { toolUseId: u.toolUseId, name: u.name, type: u.type } } });
  const pieces = uses.map((u) => splitInput(u.input, u.pieces));
  if (turn.interleave && !turn.reuseIndex) {
    uses.forEach(start);
    const longest = Math.max(0, ...pieces.map((p) => p.length));
    for (let k = 0; k < longest; k++) {
      uses.forEach((_u, i) => {
        const p = pieces[i]![k];
        if (p !== undefined) ev('contentBlockDelta', { contentBlockIndex: indexOf(i), delta: { toolUse: { input: p } } });
      });
    }
    uses.forEach((_u, i) => ev('contentBlockStop', { contentBlockIndex: indexOf(i) }));
  } else {
    uses.forEach((u, i) => {
      start(u, i);
      for (const p of pieces[i]!) ev('contentBlockDelta', { contentBlockIndex: indexOf(i), delta: { toolUse: { input: p } } });
      ev('contentBlockStop', { contentBlockIndex: indexOf(i) });
    });
  }
  const stopReason = turn.stopReason ?? (uses.some((u) => u.type === 'tool_use') ? 'tool_use' : 'end_turn');
  ev('messageStop', { stopReason });
  const usage = turn.usage ?? {
    inputTokens: Math.max(1, Math.ceil(JSON.stringify(messages).length / 4)),
    outputTokens: Math.max(1, Math.ceil((text + uses.map((u) => u.name + u.input).join('')).length / 4)),
  };
  ev('metadata', { usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens }, metrics: { latencyMs: 1 } });
  const content: Record<string, unknown>[] = [];
  if (text !== '') content.push({ text });
  for (const u of uses) content.push({ toolUse: { toolUseId: u.toolUseId, name: u.name, input: safeParse(u.input) } });
  return { frames, stopReason, toolUses: uses.filter((u) => u.type === 'tool_use'), content };
}

/** Splits text into deltas of up to two words (concatenation gives the text back). */
function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text]);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 2) out.push(words.slice(i, i + 2).join(''));
  return out.join('') === text ? out : text === '' ? [] : [text];
}

/** Splits a JSON string into `n` fragments (never empty ones). */
function splitInput(input: string, n: number): string[] {
  if (input === '') return [];
  const size = Math.ceil(input.length / Math.min(n, input.length));
  const out: string[] = [];
  for (let i = 0; i < input.length; i += size) out.push(input.slice(i, i + size));
  return out;
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return {};
  }
}

// ── plumbing ─────────────────────────────────────────────────────────────────────────────────

function operationOf(method: string, path: string): AgentCoreOperation {
  if (method === 'POST' && path === '/harnesses/invoke') return 'InvokeHarness';
  if (method === 'POST' && path === '/harnesses') return 'CreateHarness';
  if (method === 'GET' && path === '/harnesses') return 'ListHarnesses';
  if (/^\/harnesses\/[^/]+$/.test(path)) {
    if (method === 'GET') return 'GetHarness';
    if (method === 'DELETE') return 'DeleteHarness';
  }
  return 'Unknown';
}

function faultsFor(plan: AgentCoreFaultPlan | undefined, n: number): AgentCoreFault[] {
  const f = plan?.[n];
  if (f === undefined) return [];
  return Array.isArray(f) ? [...(f as readonly AgentCoreFault[])] : [f as AgentCoreFault];
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
