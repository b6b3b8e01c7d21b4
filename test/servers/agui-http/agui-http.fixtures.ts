import type { PassThrough } from 'node:stream';
import { HttpAgent } from '@ag-ui/client';
import type { RunAgentInput } from '@ag-ui/core';
import { AGUI_MEDIA_TYPE } from '@ag-ui/encoder';
import { AgentRx } from '../../../src/agentrx.js';
import { startAgUiServer, type AgUiServer } from '../../../src/servers/agui-http/agui-http.server.js';
import type { AgUiHandlerOptions } from '../../../src/servers/agui-http/agui-http.handler.js';
import type { ContainerModule, Newable } from '../../../src/core/util/inversify.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import type { LiveSession } from '../../../src/core/plugin/live-session.js';
import type { ToolUse } from '../../../src/core/model.js';
import { startOpenAiEmulator, type EmulatorTurn, type FaultPlan, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';

/** What one session did, read from its own `events$` (the ground truth the client must match). */
export class SessionLog {
  /** Text per message id, in order of first appearance. */
  readonly texts = new Map<string, string>();
  readonly toolCalls: ToolUse[] = [];
  readonly toolResults = new Map<string, string>();
  readonly errors: { code: string; message: string }[] = [];
  runs = 0;

  constructor(
    readonly session: LiveSession,
    readonly threadId: string,
  ) {
    session.events$.subscribe((env) => {
      if (env.source !== 'agentrx') return;
      const ev = env.raw;
      switch (ev.type) {
        case 'agentrx.run_started':
          this.runs++;
          break;
        case 'agentrx.text_delta':
          this.texts.set(ev.messageId, (this.texts.get(ev.messageId) ?? '') + ev.text);
          break;
        case 'agentrx.turn_end':
          this.toolCalls.push(...ev.customToolUses);
          break;
        case 'agentrx.tool_result':
          this.toolResults.set(ev.toolUse.id, ev.result.content);
          break;
        case 'agentrx.run_error':
          this.errors.push({ code: ev.code, message: ev.message });
          break;
        default:
          break;
      }
    });
  }
}

/** An emulator, an AgentRx on the local provider pointed at it, and the endpoint on loopback. */
export interface Stack {
  readonly emulator: OpenAiEmulator;
  readonly rx: AgentRx;
  readonly server: AgUiServer;
  /** One log per session the handler started, in order. */
  readonly sessions: SessionLog[];
  /** `${server.url}agent`. */
  readonly endpoint: string;
  close(): Promise<void>;
}

export interface StackOptions {
  readonly script?: readonly EmulatorTurn[];
  readonly faults?: FaultPlan;
  readonly demo?: boolean;
  readonly tools?: readonly (Newable<ToolHandler> | ToolHandler)[];
  readonly modules?: readonly ContainerModule[];
  readonly handler?: Omit<AgUiHandlerOptions, 'rx' | 'onSession'>;
}

/** Starts emulator → AgentRx (local provider) → AG-UI server on 127.0.0.1 with an ephemeral port. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const emulator = await startOpenAiEmulator(opts.demo ? { model: 'demo' } : { script: opts.script ?? [], faults: opts.faults });
  const rx = await AgentRx.create({
    config: { provider: 'local', providers: { local: { baseUrl: emulator.baseUrl, model: 'scripted', maxRetries: 0 } }, limits: { runTimeoutMs: 20_000 } },
    tools: opts.tools,
    modules: opts.modules,
  });
  const sessions: SessionLog[] = [];
  const server = await startAgUiServer({ ...opts.handler, rx, port: 0, onSession: (s, threadId) => sessions.push(new SessionLog(s, threadId)) });
  return {
    emulator,
    rx,
    server,
    sessions,
    endpoint: `${server.url}agent`,
    close: async () => {
      await server.close();
      await rx.stop();
      await emulator.close();
    },
  };
}

/** A minimal valid RunAgentInput. */
export function runInput(overrides: Record<string, unknown> = {}, text = 'hello'): Record<string, unknown> {
  return {
    threadId: 'thread-1',
    runId: 'run-1',
    messages: [{ id: 'u1', role: 'user', content: text }],
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
    ...overrides,
  };
}

/** A JSON body's fields, each read as `unknown` (tests assert on them with `expect`). */
export type JsonBody = Readonly<Record<string, unknown>>;

/** An AG-UI event as it came over the wire: its `type`, and its other fields as `unknown`. */
export type WireEvent = { readonly type: string; readonly [field: string]: unknown };

/** A reply's status, headers, text and the text parsed as a JSON object (empty when it is not one). */
export async function readReply(res: Response): Promise<{ status: number; headers: Headers; json: JsonBody; text: string }> {
  const text = await res.text();
  let json: JsonBody = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) json = parsed as JsonBody;
  } catch {
    // not JSON: an SSE stream, a page
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** POSTs JSON to the endpoint with fetch and returns status, headers and the parsed body. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: JsonBody; text: string }> {
  return readReply(
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
}

/** One SSE frame: its `data:` JSON event and its `id:`, if it has one. */
export interface SseFrame {
  readonly event: WireEvent;
  readonly id: string | undefined;
}

/** Parses an SSE body into its frames (complete ones only; comments skipped). */
export function sseFrames(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  const parts = text.split('\n\n');
  parts.pop();
  for (const part of parts) {
    const lines = part.split('\n');
    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice('data: '.length));
    if (data.length === 0) continue;
    const id = lines.find((l) => l.startsWith('id: '))?.slice('id: '.length);
    frames.push({ event: JSON.parse(data.join('\n')), id });
  }
  return frames;
}

/** Parses an SSE body into its `data:` JSON events. */
export function sseEvents(text: string): WireEvent[] {
  return sseFrames(text).map((f) => f.event);
}

/** Starts a streaming POST and reads it until `until` matches an event; returns the reader and abort. */
export async function openStream(url: string, body: unknown, until: (ev: { type: string }) => boolean, headers: Record<string, string> = {}) {
  const ctrl = new AbortController();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
    signal: ctrl.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const seen: WireEvent[] = [];
  const readUntil = async (pred: (ev: { type: string }) => boolean): Promise<void> => {
    while (!seen.some(pred)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before the awaited event; got ${seen.map((e) => e.type).join(', ')}`);
      text += decoder.decode(value, { stream: true });
      seen.splice(0, seen.length, ...sseEvents(text));
    }
  };
  await readUntil(until);
  const readToEnd = async (): Promise<WireEvent[]> => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return sseEvents(text);
      text += decoder.decode(value, { stream: true });
    }
  };
  return { res, abort: () => ctrl.abort(), readToEnd, seen };
}

/** An HttpAgent that asks for protobuf and records the response Content-Type. */
export class ProtoHttpAgent extends HttpAgent {
  readonly contentTypes: (string | null)[] = [];
  constructor(url: string, threadId: string) {
    super({ url, threadId });
    const plain = this.fetch;
    this.fetch = async (input, init) => {
      const res = await plain(input, init);
      this.contentTypes.push(res.headers.get('content-type'));
      return res;
    };
  }
  protected override requestInit(input: RunAgentInput): RequestInit {
    const init = super.requestInit(input);
    return { ...init, headers: { ...(init.headers as Record<string, string>), Accept: AGUI_MEDIA_TYPE } };
  }
}

/** Resolves with the first match of `re` in what `stream` writes from now on (a CLI's output). */
export function waitForOutput(stream: PassThrough, re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (c: Buffer): void => {
      text += c.toString();
      const m = re.exec(text);
      if (m) {
        stream.off('data', onData);
        resolve(m);
      }
    };
    stream.on('data', onData);
  });
}
