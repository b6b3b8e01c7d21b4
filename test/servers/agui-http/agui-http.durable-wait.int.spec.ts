import { HttpAgent, type AgentSubscriber, type RunAgentParameters } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { AgentRx } from '../../../src/agentrx.js';
import { startAgUiServer, type AgUiServer } from '../../../src/servers/agui-http/agui-http.server.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import type { LedgerEntry } from '../../../src/core/tools/tool-ledger.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { tempDir } from '../../support/temp-dir.js';
import { postJson, runInput, sseEvents, startStack, type Stack } from './agui-http.fixtures.js';

/** What one client run saw, after the client's own verification. */
interface ClientRun {
  readonly events: BaseEvent[];
  readonly failures: unknown[];
}

async function runClient(agent: HttpAgent, params: RunAgentParameters): Promise<ClientRun> {
  const run: ClientRun = { events: [], failures: [] };
  const subscriber: AgentSubscriber = {
    onEvent: ({ event }) => void run.events.push(event),
    onRunFailed: ({ error }) => void run.failures.push(error),
  };
  await agent.runAgent(params, subscriber);
  return run;
}

const types = (events: readonly BaseEvent[]): string[] => events.map((e) => String(e.type));
const text = (events: readonly BaseEvent[]): string =>
  events
    .filter((e): e is BaseEvent & { delta: string } => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('');
const finished = (events: readonly BaseEvent[]): BaseEvent | undefined => events.find((e) => e.type === 'RUN_FINISHED');

/** The frontend tool the page declares on every run. */
const ASK_TOOL = {
  name: 'ask_user',
  description: 'Ask the user a yes/no question.',
  parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
};

type WireMessage = { role: string; content?: string | null; tool_call_id?: string };

/** An agentrx instance on the Local provider (the emulator) and the store under test, with its AG-UI endpoint. */
interface Endpoint {
  readonly rx: AgentRx;
  readonly server: AgUiServer;
  readonly url: string;
}

/**
 * The scenario, on the store `store()` configures: the model calls a frontend tool, the client's
 * run ends waiting, the endpoint goes away without an answer, a new endpoint on the same store
 * takes the client's next run (the tool message) and the run goes on.
 */
function durableWaitSuite(store: () => Record<string, unknown>): void {
  let emulator: OpenAiEmulator | undefined;
  const endpoints: Endpoint[] = [];
  afterEach(async () => {
    for (const e of endpoints.splice(0)) {
      await e.server.close();
      await e.rx.stop();
    }
    await emulator?.close();
    emulator = undefined;
  });

  /** Runs of the server's `deploy` tool, which needs the user's approval, over every endpoint. */
  let deploys = 0;
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys the release.',
    requireApproval: true,
    inputSchema: { type: 'object', properties: {} },
    handle: () => `deployed ${++deploys}`,
  });
  beforeEach(() => {
    deploys = 0;
  });

  const startEndpoint = async (): Promise<Endpoint> => {
    const rx = await AgentRx.create({
      tools: [deploy],
      config: {
        provider: 'local',
        logLevel: 'silent',
        consumers: { terminal: false },
        store: store(),
        providers: { local: { baseUrl: emulator!.baseUrl, model: 'scripted', maxRetries: 0 } },
        limits: { runTimeoutMs: 20_000 },
      },
    });
    const server = await startAgUiServer({ rx, port: 0 });
    const endpoint = { rx, server, url: `${server.url}agent` };
    endpoints.push(endpoint);
    return endpoint;
  };

  /** Stops `endpoint` without answering what its sessions wait for (its sessions are left, as a shutdown leaves them). */
  const stopEndpoint = async (endpoint: Endpoint): Promise<void> => {
    endpoints.splice(endpoints.indexOf(endpoint), 1);
    await endpoint.server.close();
    await endpoint.rx.stop();
  };

  /** The thread's stored ledger entry of `toolUseId`, read through `rx`'s store. */
  const ledgerEntry = async (rx: AgentRx, threadId: string, toolUseId: string): Promise<LedgerEntry | undefined> => {
    const sessionId = await rx.sessionStore.findByThread!(threadId);
    const record = sessionId === undefined ? undefined : await rx.sessionStore.load(sessionId);
    return record?.ledger.find((e) => e.toolUseId === toolUseId);
  };

  describe('when the endpoint goes away while a tool waits for the user to allow it, and the client answers the interrupt to a new endpoint', () => {
    it('should run the tool once, on the new endpoint, and continue the run', async () => {
      emulator = await startOpenAiEmulator({ script: [{ toolCalls: [{ id: 'call_dep', name: 'deploy', arguments: {} }] }, { text: 'Deployed.' }] });
      const first = await startEndpoint();
      const agent = new HttpAgent({ url: first.url, threadId: 'durable-confirm', initialMessages: [{ id: 'u1', role: 'user', content: 'deploy' }] });
      const asked = await runClient(agent, { runId: 'run-1' });
      expect(asked.failures).toEqual([]);
      expect(finished(asked.events)).toMatchObject({ outcome: { type: 'interrupt', interrupts: [expect.objectContaining({ id: 'call_dep' })] } });
      expect(await ledgerEntry(first.rx, 'durable-confirm', 'call_dep')).toMatchObject({ state: 'awaiting_client', awaits: 'confirmation' });
      await stopEndpoint(first);

      const second = await startEndpoint();
      agent.url = second.url;
      const run = await runClient(agent, { runId: 'run-2', resume: [{ interruptId: 'call_dep', status: 'resolved', payload: { allow: true } }] });
      expect(run.failures).toEqual([]);
      expect(text(run.events)).toBe('Deployed.');
      expect(deploys).toBe(1);
      const calls = emulator.requests.filter((r) => r.completion !== undefined);
      expect(calls).toHaveLength(2);
      expect((calls[1]!.body as { messages: WireMessage[] }).messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_dep', content: 'deployed 1' });
      expect(await ledgerEntry(second.rx, 'durable-confirm', 'call_dep')).toMatchObject({ state: 'posted' });
    });
  });

  /** Runs the thread's first run on a first endpoint (it ends waiting on `call_ask`), then stops that endpoint. */
  const waitThenStop = async (threadId: string): Promise<HttpAgent> => {
    const first = await startEndpoint();
    const agent = new HttpAgent({ url: first.url, threadId, initialMessages: [{ id: 'u1', role: 'user', content: 'Ship the release?' }] });
    const run = await runClient(agent, { runId: 'run-1', tools: [ASK_TOOL] });
    expect(run.failures).toEqual([]);
    expect(types(run.events)).toEqual(expect.arrayContaining(['TOOL_CALL_START', 'TOOL_CALL_END']));
    expect(types(run.events)).not.toContain('TOOL_CALL_RESULT');
    expect(finished(run.events)).toMatchObject({ runId: 'run-1', outcome: { type: 'success', pendingToolCallIds: ['call_ask'] } });
    // The wait is in the store before the client's run ends.
    const waiting = await ledgerEntry(first.rx, threadId, 'call_ask');
    expect(waiting).toMatchObject({ state: 'awaiting_client', awaits: 'tool', name: 'ask_user' });
    expect(waiting!.deadline).toBeGreaterThan(Date.now() + 60_000);
    await stopEndpoint(first);
    return agent;
  };

  describe('when the endpoint goes away while a frontend tool call waits, and the client answers a new endpoint', () => {
    it("should continue the run with the client's result in the model's next request", async () => {
      emulator = await startOpenAiEmulator({
        script: [
          { text: 'Let me ask.', toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship it?' } }] },
          { text: 'You said yes: shipping.' },
        ],
      });
      const agent = await waitThenStop('durable-1');

      const second = await startEndpoint();
      // Stopping left the wait as it was: nothing answered it.
      expect(await ledgerEntry(second.rx, 'durable-1', 'call_ask')).toMatchObject({ state: 'awaiting_client' });
      agent.url = second.url;
      agent.addMessage({ id: 'tool-1', role: 'tool', toolCallId: 'call_ask', content: 'yes' });
      const run = await runClient(agent, { runId: 'run-2', tools: [ASK_TOOL] });

      expect(run.failures).toEqual([]);
      expect(types(run.events)[0]).toBe('RUN_STARTED');
      expect(finished(run.events)).toMatchObject({ runId: 'run-2' });
      expect(text(run.events)).toBe('You said yes: shipping.');
      // The client has its result already: no TOOL_CALL_RESULT repeats it.
      expect(types(run.events)).not.toContain('TOOL_CALL_RESULT');
      expect(agent.messages.filter((m) => m.role === 'tool')).toHaveLength(1);
      const calls = emulator.requests.filter((r) => r.completion !== undefined);
      expect(calls).toHaveLength(2);
      const messages = (calls[1]!.body as { messages: WireMessage[] }).messages;
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(messages[2]).toMatchObject({ tool_call_id: 'call_ask', content: 'yes' });
      expect(await ledgerEntry(second.rx, 'durable-1', 'call_ask')).toMatchObject({ state: 'posted', result: { content: 'yes', isError: false } });
    });
  });

  describe('when the client answers a call the stored session does not wait for', () => {
    it('should answer 400 naming it, start nothing, and keep the wait answerable', async () => {
      emulator = await startOpenAiEmulator({
        script: [{ toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship it?' } }] }, { text: 'Shipping.' }],
      });
      const agent = await waitThenStop('durable-2');
      const second = await startEndpoint();
      const asked = agent.messages.find((m) => m.role === 'assistant')!;
      const body = (toolCallId: string, runId: string): Record<string, unknown> => ({
        threadId: 'durable-2',
        runId,
        messages: [
          { id: 'u1', role: 'user', content: 'Ship the release?' },
          {
            ...asked,
            toolCalls: [
              { id: 'call_ask', type: 'function', function: { name: 'ask_user', arguments: '{"question":"Ship it?"}' } },
              { id: 'call_other', type: 'function', function: { name: 'ask_user', arguments: '{}' } },
            ],
          },
          { id: 't1', role: 'tool', toolCallId, content: 'yes' },
        ],
        tools: [ASK_TOOL],
        context: [],
        state: {},
        forwardedProps: {},
      });

      const wrong = await postJson(second.url, body('call_other', 'run-2'));
      expect(wrong.status).toBe(400);
      expect(wrong.json['message']).toMatch(/durable-2.*call_other: no tool use waits on the client.*waiting on the client: call_ask/);
      expect(emulator.requests.filter((r) => r.completion !== undefined)).toHaveLength(1);

      const right = await postJson(second.url, body('call_ask', 'run-3'));
      expect(right.status).toBe(200);
      expect(right.text).toContain('Shipping.');
      expect(await ledgerEntry(second.rx, 'durable-2', 'call_ask')).toMatchObject({ state: 'posted' });
    });
  });
}

describe('AG-UI endpoint: a wait on the client outlives its endpoint (file store)', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await tempDir('agentrx-durable-wait-');
  });
  durableWaitSuite(() => ({ type: 'file', dir }));
});

describeWithRedis('AG-UI endpoint: a wait on the client outlives its endpoint (Redis store)', () => {
  let redis: RedisServer | undefined;
  let prefix = '';
  let n = 0;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  beforeEach(() => {
    prefix = `durable-wait-${++n}:`;
  });
  durableWaitSuite(() => ({ type: 'redis', url: redis!.url, keyPrefix: prefix }));
});

describe('AG-UI endpoint: a thread let go of while it waits on its client (default memory store)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('when another thread takes its place (maxThreads) and the client then answers', () => {
    it("should resume the thread's stored session with the answer, on the same endpoint", async () => {
      stack = await startStack({
        handler: { maxThreads: 1 },
        script: [{ toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship it?' } }] }, { text: 'Hi B.' }, { text: 'You said yes.' }],
      });
      const asked = await postJson(stack.endpoint, runInput({ threadId: 'A', runId: 'a1', tools: [ASK_TOOL] }, 'ship?'));
      expect(sseEvents(asked.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'a1' });
      // Thread B needs the only thread slot: the waiting thread A is let go of (its session cancelled).
      const other = await postJson(stack.endpoint, runInput({ threadId: 'B', runId: 'b1' }, 'hi'));
      expect(sseEvents(other.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'b1' });
      await stack.sessions[0]!.session.closed;

      const assistant = {
        id: 'a-1',
        role: 'assistant',
        toolCalls: [{ id: 'call_ask', type: 'function', function: { name: 'ask_user', arguments: '{"question":"Ship it?"}' } }],
      };
      const answered = await postJson(
        stack.endpoint,
        runInput({
          threadId: 'A',
          runId: 'a2',
          tools: [ASK_TOOL],
          messages: [{ id: 'u1', role: 'user', content: 'ship?' }, assistant, { id: 't1', role: 'tool', toolCallId: 'call_ask', content: 'yes' }],
        }),
      );
      expect(answered.status).toBe(200);
      const events = sseEvents(answered.text);
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'a2' });
      expect(
        events
          .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
          .map((e) => e['delta'])
          .join(''),
      ).toBe('You said yes.');
      const last = stack.emulator.requests.filter((r) => r.completion !== undefined).at(-1)!.body as { messages: WireMessage[] };
      expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(last.messages[2]).toMatchObject({ tool_call_id: 'call_ask', content: 'yes' });
      expect(stack.sessions).toHaveLength(3);
    });
  });
});
