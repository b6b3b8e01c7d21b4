import { AgentRx } from '../../../src/agentrx.js';
import { startAgUiServer, type AgUiServer } from '../../../src/consumers/agui-http/agui-http.server.js';
import type { AgUiHandlerOptions } from '../../../src/consumers/agui-http/agui-http.handler.js';
import type { ContainerModule, Newable } from '../../../src/core/di/inversify.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import type { Session } from '../../../src/core/session/session.js';
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

  constructor(readonly session: Session, readonly threadId: string) {
    session.events$.subscribe((env) => {
      const raw = env.raw as Record<string, any>;
      if (env.source !== 'agentrx') return;
      switch (raw['type']) {
        case 'agentrx.run_started':
          this.runs++;
          break;
        case 'agentrx.text_delta':
          this.texts.set(raw['messageId'], (this.texts.get(raw['messageId']) ?? '') + raw['text']);
          break;
        case 'agentrx.turn_end':
          this.toolCalls.push(...(raw['customToolUses'] as ToolUse[]));
          break;
        case 'agentrx.tool_result':
          this.toolResults.set(raw['toolUse'].id, raw['result'].content);
          break;
        case 'agentrx.run_error':
          this.errors.push({ code: raw['code'], message: raw['message'] });
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
  readonly tools?: readonly Newable<ToolHandler>[];
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
  return { threadId: 'thread-1', runId: 'run-1', messages: [{ id: 'u1', role: 'user', content: text }], tools: [], context: [], state: {}, forwardedProps: {}, ...overrides };
}

/** POSTs JSON to the endpoint with fetch and returns status, headers and the parsed body. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** Parses an SSE body into its `data:` JSON events. */
export function sseEvents(text: string): { type: string; [k: string]: any }[] {
  return text
    .split('\n\n')
    .filter((f) => f.startsWith('data: '))
    .map((f) => JSON.parse(f.slice('data: '.length)));
}
