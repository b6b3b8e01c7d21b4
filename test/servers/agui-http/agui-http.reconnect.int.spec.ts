import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { AgentRx } from '../../../src/agentrx.js';
import { startAgUiServer, type AgUiServer } from '../../../src/servers/agui-http/agui-http.server.js';
import { ContainerModule } from '../../../src/core/util/inversify.js';
import type { LiveSession } from '../../../src/core/plugin/live-session.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { SessionStore } from '../../../src/core/store/session-store.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { sseFrames } from './agui-http.fixtures.js';
import { droppingFetch } from './agui-http.dropping-fetch.js';
import { GateToolHandler } from '../../fakes/gate-tool.js';

const THREAD = 'thread-resume';
const SCRIPT = [
  { text: 'Waiting at the gate.', toolCalls: [{ id: 'call_gate', name: 'gate', arguments: { text: 'one' } }] },
  { text: 'Through the gate, all done.' },
];

interface Server {
  readonly rx: AgentRx;
  readonly server: AgUiServer;
  readonly sessions: LiveSession[];
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
    const sessions: LiveSession[] = [];
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
    // From the server the client reconnected to: only one that streamed the run knows its conversation.
    const reference = await fetch(`${second.server.url}threads/${THREAD}/events?runId=client-run-1`).then((r) => r.text());
    // A reader attaching from the run's start (a reloaded page) also gets the conversation the run
    // started with, right after RUN_STARTED: a client that was there all along has it already.
    const replay = sseFrames(reference);
    const opening = replay[1]?.event.type === 'MESSAGES_SNAPSHOT' && replay[1].id === undefined ? 1 : -1;
    return { agent, events, failures, seen: drop.seen, reference: replay.filter((_, i) => i !== opening) };
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

  describe("when a reader reconnects with the id of a finished run's last frame", () => {
    it('should answer 204 at once (nothing follows), by Last-Event-ID and by ?after=, while an earlier id still gets the rest', async () => {
      const a = await serve();
      GateToolHandler.open();
      const agent = new HttpAgent({ url: `${a.server.url}agent`, threadId: THREAD });
      agent.addMessage({ id: 'u1', role: 'user', content: 'Go through the gate' });
      await agent.runAgent({ runId: 'client-run-1' });
      const whole = sseFrames(await fetch(`${a.server.url}threads/${THREAD}/events`).then((r) => r.text()));
      const ids = whole.flatMap((f) => (f.id !== undefined ? [f.id] : []));
      const last = ids.at(-1)!;
      expect(whole.at(-1)!.event.type).toBe('RUN_FINISHED');

      const byHeader = await fetch(`${a.server.url}threads/${THREAD}/events`, { headers: { 'last-event-id': last } });
      expect(byHeader.status).toBe(204);
      expect(await byHeader.text()).toBe('');
      const byQuery = await fetch(`${a.server.url}threads/${THREAD}/events?after=${last}`);
      expect(byQuery.status).toBe(204);

      const earlier = await fetch(`${a.server.url}threads/${THREAD}/events`, { headers: { 'last-event-id': ids.at(-2)! } });
      expect(earlier.status).toBe(200);
      expect(sseFrames(await earlier.text()).map((f) => f.event.type)).toContain('RUN_FINISHED');
      expect(a.server.handler.activeReconnects).toBe(0);
    });
  });

  describe("when the endpoint is given no store (it reads its own threads' logs through rx.attach)", () => {
    it('should receive exactly the events after its Last-Event-ID', async () => {
      const a = await serve(false);
      expectSeamless(await resumedRun(a, a));
    });
  });

  describe('when the run ends waiting on a frontend tool while its client is away', () => {
    it('should end the reconnected stream with that RUN_FINISHED (the call pending), and the next run should continue the session', async () => {
      await emulator.close();
      emulator = await startOpenAiEmulator({
        script: [
          {
            text: 'Checking, then asking.',
            toolCalls: [
              { id: 'call_gate', name: 'gate', arguments: { text: 'one' } },
              { id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship it?' } },
            ],
          },
          { text: 'You said yes.' },
        ],
      });
      const a = await serve();
      const endpoint = `${a.server.url}agent`;
      const askUser = { name: 'ask_user', description: 'Ask the user.', parameters: { type: 'object', properties: { question: { type: 'string' } } } };
      const drop = droppingFetch(endpoint, (ev) => ev.type === 'TOOL_CALL_END');
      const agent = new HttpAgent({ url: endpoint, threadId: THREAD, fetch: drop.fetch });
      agent.addMessage({ id: 'u1', role: 'user', content: 'Ship the release?' });
      const events: BaseEvent[] = [];
      const failures: unknown[] = [];
      const running = agent.runAgent(
        { runId: 'client-run-1', tools: [askUser] },
        { onEvent: ({ event }) => void events.push(event), onRunFailed: ({ error }) => void failures.push(error) },
      );
      await GateToolHandler.started;
      await drop.seen.reconnected;
      // The client follows the log again; the server tool finishes and the run ends waiting on the client.
      GateToolHandler.open();
      await running;

      expect(failures).toEqual([]);
      expect(drop.seen.second.map((f) => f.type)).toEqual(expect.arrayContaining(['TOOL_CALL_RESULT', 'RUN_FINISHED']));
      const finished = events.filter((e) => e.type === 'RUN_FINISHED');
      expect(finished).toHaveLength(1);
      expect(finished[0]).toMatchObject({ runId: 'client-run-1', outcome: { type: 'success', pendingToolCallIds: ['call_ask'] } });

      const next = new HttpAgent({
        url: endpoint,
        threadId: THREAD,
        initialMessages: [...agent.messages, { id: 't1', role: 'tool', toolCallId: 'call_ask', content: 'yes' }],
      });
      const second: BaseEvent[] = [];
      await next.runAgent({ runId: 'client-run-2', tools: [askUser] }, { onEvent: ({ event }) => void second.push(event) });
      expect(second.filter((e) => e.type === 'RUN_FINISHED')).toEqual([expect.objectContaining({ runId: 'client-run-2' })]);
      expect(a.sessions).toHaveLength(1);
      // A reader of the thread's last run now sees it under the client's new run id.
      const replay = sseFrames(await fetch(`${a.server.url}threads/${THREAD}/events`).then((r) => r.text()));
      expect(replay.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', runId: 'client-run-2' });
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
