import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { IsString } from 'class-validator';
import { AgentRx } from '../../../src/agentrx.js';
import { startAgUiServer, type AgUiServer } from '../../../src/consumers/agui-http/agui-http.server.js';
import { ContainerModule, injectable } from '../../../src/core/di/inversify.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import type { Session } from '../../../src/core/session/session.js';
import { MemorySessionStore } from '../../../src/core/store/memory-session-store.js';
import { SessionStore } from '../../../src/core/store/session-store.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { sseFrames } from './agui-http.fixtures.js';

class GateInput {
  @IsString()
  text!: string;
}

/** Waits until the test opens the gate; tells the test when it has started. */
@injectable()
class GateToolHandler implements ToolHandler<GateInput> {
  static started: Promise<void>;
  static open: () => void;
  private static markStarted: () => void;
  static reset(): void {
    GateToolHandler.started = new Promise((resolve) => (GateToolHandler.markStarted = resolve));
    const opened = new Promise<void>((resolve) => (GateToolHandler.open = resolve));
    GateToolHandler.opened = opened;
  }
  private static opened: Promise<void>;
  readonly name = 'gate';
  readonly description = 'Waits for the test.';
  readonly inputType = GateInput;
  readonly timeoutMs = 30_000;
  async handle(input: GateInput): Promise<string> {
    GateToolHandler.markStarted();
    await GateToolHandler.opened;
    return `passed ${input.text}`;
  }
}

const THREAD = 'thread-resume';
const SCRIPT = [
  { text: 'Waiting at the gate.', toolCalls: [{ id: 'call_gate', name: 'gate', arguments: { text: 'one' } }] },
  { text: 'Through the gate, all done.' },
];

/**
 * A fetch for HttpAgent that plays a client whose connection drops: it passes the first
 * response's SSE frames through up to the frame that carries an id after `cutAfter` matched,
 * then aborts that request and re-POSTs the same RunAgentInput to `reconnectUrl` with
 * `Last-Event-ID: <that id>`, passing the second response through. Frames after the last id
 * seen (a group cut in two) are dropped, as a resuming client must: they come again.
 */
function droppingFetch(reconnectUrl: string, cutAfter: (ev: { type: string }) => boolean) {
  const seen = { first: [] as { type: string; id: string | undefined }[], resumedFrom: undefined as string | undefined, second: [] as { type: string; id: string | undefined }[], reconnected: undefined as Promise<void> | undefined };
  let markReconnected!: () => void;
  seen.reconnected = new Promise((resolve) => (markReconnected = resolve));
  const fetchFn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const ctrl = new AbortController();
    const first = await fetch(input, { ...init, signal: ctrl.signal });
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(out) {
        const decoder = new TextDecoder();
        const reader = first.body!.getReader();
        let text = '';
        let lastId: string | undefined;
        let cut = false;
        while (!cut) {
          const { value, done } = await reader.read();
          if (done) throw new Error('the first stream ended before the cut');
          text += decoder.decode(value, { stream: true });
          const boundary = text.lastIndexOf('\n\n');
          if (boundary < 0) continue;
          const complete = text.slice(0, boundary + 2);
          text = text.slice(boundary + 2);
          let pass = '';
          let pending = '';
          let matched = false;
          for (const frame of complete.split('\n\n').slice(0, -1)) {
            pending += `${frame}\n\n`;
            const [parsed] = sseFrames(`${frame}\n\n`);
            if (parsed) {
              seen.first.push({ type: parsed.event.type, id: parsed.id });
              matched ||= cutAfter(parsed.event);
            }
            if (parsed?.id !== undefined) {
              pass += pending;
              pending = '';
              lastId = parsed.id;
              if (matched) break;
            }
          }
          out.enqueue(encoder.encode(pass));
          cut = matched && lastId !== undefined;
        }
        // The connection drops; the frames after the last id never reached the client.
        ctrl.abort();
        let end = seen.first.length;
        while (end > 0 && seen.first[end - 1]!.id !== lastId) end--;
        seen.first = seen.first.slice(0, end);
        seen.resumedFrom = lastId;
        const second = await fetch(reconnectUrl, { ...init, headers: { ...(init?.headers as Record<string, string>), 'Last-Event-ID': lastId! } });
        if (second.status !== 200) throw new Error(`reconnect answered ${second.status}: ${await second.text()}`);
        markReconnected();
        const reader2 = second.body!.getReader();
        let all = '';
        for (;;) {
          const { value, done } = await reader2.read();
          if (done) break;
          all += decoder.decode(value, { stream: true });
          out.enqueue(value);
        }
        seen.second = sseFrames(all).map((f) => ({ type: f.event.type, id: f.id }));
        out.close();
      },
    });
    return new Response(body, { status: first.status, headers: first.headers });
  };
  return { fetch: fetchFn, seen };
}

interface Server {
  readonly rx: AgentRx;
  readonly server: AgUiServer;
  readonly sessions: Session[];
}

describe('AG-UI endpoint: @ag-ui/client reconnecting with Last-Event-ID', () => {
  let emulator: OpenAiEmulator;
  let store: MemorySessionStore;
  let started: Server[];

  async function serve(withStore = true): Promise<Server> {
    const rx = await AgentRx.create({
      config: { provider: 'local', providers: { local: { baseUrl: emulator.baseUrl, model: 'scripted', maxRetries: 0 } }, limits: { runTimeoutMs: 20_000 } },
      tools: [GateToolHandler],
      modules: [new ContainerModule((o) => void o.bind(SessionStore).toConstantValue(store))],
    });
    const sessions: Session[] = [];
    // A run whose client left goes on for a minute, waiting for it to come back.
    const server = await startAgUiServer({ rx, ...(withStore ? { store } : {}), port: 0, reconnectGraceMs: 60_000, onSession: (s) => sessions.push(s) });
    const s = { rx, server, sessions };
    started.push(s);
    return s;
  }

  beforeEach(async () => {
    GateToolHandler.reset();
    emulator = await startOpenAiEmulator({ script: SCRIPT });
    store = new MemorySessionStore();
    started = [];
  });
  afterEach(async () => {
    GateToolHandler.open();
    for (const s of started) {
      await s.server.close();
      await s.rx.stop();
    }
    await emulator.close();
  });

  async function resumedRun(first: Server, second: Server) {
    const endpoint = `${first.server.url}agent`;
    const drop = droppingFetch(`${second.server.url}agent`, (ev) => ev.type === 'TOOL_CALL_END');
    const agent = new HttpAgent({ url: endpoint, threadId: THREAD, fetch: drop.fetch });
    agent.addMessage({ id: 'u1', role: 'user', content: 'Go through the gate' });
    const events: BaseEvent[] = [];
    const failures: unknown[] = [];
    const subscriber: AgentSubscriber = {
      onEvent: ({ event }) => void events.push(event),
      onRunFailed: ({ error }) => void failures.push(error),
    };
    const running = agent.runAgent({ runId: 'client-run-1' }, subscriber);
    await GateToolHandler.started;
    await drop.seen.reconnected;
    // The client is back (on `second`): let the tool finish, the run goes on live.
    GateToolHandler.open();
    await running;
    // What an uninterrupted client would have seen: the whole run, replayed from the log.
    const reference = await fetch(`${first.server.url}threads/${THREAD}/events?runId=client-run-1`).then((r) => r.text());
    return { agent, events, failures, seen: drop.seen, reference: sseFrames(reference) };
  }

  const strip = (e: object): object => {
    const { timestamp: _t, rawEvent: _r, ...rest } = e as Record<string, unknown>;
    return rest;
  };

  function expectSeamless(run: Awaited<ReturnType<typeof resumedRun>>): void {
    expect(run.failures).toEqual([]);
    const n = Number(run.seen.resumedFrom);
    expect(n).toBeGreaterThan(0);
    // No duplicate, no gap: the first stream up to id n, then exactly the frames after n.
    expect([...run.seen.first, ...run.seen.second]).toEqual(run.reference.map((f) => ({ type: f.event.type, id: f.id })));
    const nextId = run.reference.map((f) => f.id).find((id) => id !== undefined && Number(id) > n);
    expect(run.seen.second.find((f) => f.id !== undefined)!.id).toBe(nextId);
    // Cut mid-run: the tool call was announced, its result and the rest came on the second stream.
    expect(run.seen.first.map((f) => f.type)).toContain('TOOL_CALL_END');
    expect(run.seen.second.map((f) => f.type)).toEqual(expect.arrayContaining(['TOOL_CALL_RESULT', 'RUN_FINISHED']));
    expect(run.seen.second[0]!.type).not.toBe('RUN_STARTED');
    // The client's verified stream is the same run, event for event.
    expect(run.events.map(strip)).toEqual(run.reference.map((f) => strip(f.event)));
    expect(run.events.filter((e) => e.type === 'RUN_FINISHED')).toHaveLength(1);
    const texts = run.agent.messages.flatMap((m) => (m.role === 'assistant' && typeof m.content === 'string' ? [m.content] : []));
    expect(texts).toEqual(['Waiting at the gate.', 'Through the gate, all done.']);
  }

  describe('when the client reconnects to the same server', () => {
    it('should receive exactly the events after its Last-Event-ID, and the run is not cancelled', async () => {
      const a = await serve();
      const run = await resumedRun(a, a);
      expectSeamless(run);
      expect(a.sessions).toHaveLength(1);
      expect(a.server.handler.activeRuns).toBe(0);
      expect(a.server.handler.activeReconnects).toBe(0);
    });
  });

  describe('when the endpoint is given no store (it reads its own threads\' logs through rx.attach)', () => {
    it('should receive exactly the events after its Last-Event-ID', async () => {
      const a = await serve(false);
      expectSeamless(await resumedRun(a, a));
    });
  });

  describe('when the client reconnects to a second server sharing the store', () => {
    it('should receive exactly the events after its Last-Event-ID from the log', async () => {
      const a = await serve();
      const b = await serve();
      const run = await resumedRun(a, b);
      expectSeamless(run);
      expect(b.sessions).toHaveLength(0);
      expect(a.sessions).toHaveLength(1);
    });
  });
});
