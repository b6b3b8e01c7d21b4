import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { AgentRx } from '../../../src/agentrx.js';
import { startAgUiServer, type AgUiServer } from '../../../src/servers/agui-http/agui-http.server.js';
import { injectable } from '../../../src/core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { startOpenAiEmulator, type EmulatorTurn, type FaultPlan, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';
import { tempDir } from '../../support/temp-dir.js';

/** Adds `by` (default 1) to the shared state's `count`. */
@injectable()
class CountTool implements ToolHandler {
  readonly name = 'count';
  readonly description = 'Adds to the counter in the shared state.';
  readonly inputSchema = { type: 'object', properties: { by: { type: 'number' } } };
  handle(input: { by?: number }, ctx: ToolContext): string {
    ctx.state!['count'] = (ctx.state!['count'] as number) + (input.by ?? 1);
    return `count is ${String(ctx.state!['count'])}`;
  }
}

interface ClientRun {
  readonly events: BaseEvent[];
  readonly failures: unknown[];
}

async function runClient(agent: HttpAgent, runId: string, extra: AgentSubscriber = {}): Promise<ClientRun> {
  const run: ClientRun = { events: [], failures: [] };
  await agent.runAgent({ runId }, { ...extra, onEvent: ({ event }) => void run.events.push(event), onRunFailed: ({ error }) => void run.failures.push(error) });
  return run;
}

type WireMessage = { role: string; content?: string | null; tool_calls?: { id: string }[]; tool_call_id?: string };

/** One server process: an AgentRx on a file store in `dir`, and its AG-UI endpoint. */
async function startServer(emulator: OpenAiEmulator, dir: string): Promise<{ rx: AgentRx; server: AgUiServer; close(): Promise<void> }> {
  const rx = await AgentRx.create({
    config: {
      provider: 'local',
      store: { type: 'file', dir },
      providers: { local: { baseUrl: emulator.baseUrl, model: 'scripted', maxRetries: 0 } },
      limits: { runTimeoutMs: 20_000 },
    },
    tools: [EchoToolHandler, CountTool],
  });
  const server = await startAgUiServer({ rx, port: 0 });
  return { rx, server, close: async () => (await server.close(), await rx.stop()) };
}

describe('AG-UI endpoint with @ag-ui/client: one thread across runs', () => {
  let emulator: OpenAiEmulator | undefined;
  let dir: string | undefined;
  const servers: { close(): Promise<void> }[] = [];
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    await emulator?.close();
    emulator = dir = undefined;
  });

  async function start(script: readonly EmulatorTurn[], faults?: FaultPlan): Promise<void> {
    emulator = await startOpenAiEmulator({ script, ...(faults ? { faults } : {}) });
    dir = await tempDir('agentrx-agui-thread-');
  }

  describe('when a run is aborted by the client and the server restarts before the third', () => {
    it("should give the model the whole conversation in the last request, every run passing the client's verify stage", async () => {
      await start(
        [
          { text: 'Echoing.', toolCalls: [{ id: 'call_echo', name: 'echo', arguments: { text: 'one' } }] },
          { text: 'Echo said ONE.' },
          { text: 'You asked three things.' },
        ],
        // The second run's model call never answers: the client aborts it.
        { 2: { kind: 'hang' } },
      );
      const first = await startServer(emulator!, dir!);
      servers.push(first);
      const agent = new HttpAgent({
        url: `${first.server.url}agent`,
        threadId: 'thread-3',
        initialMessages: [{ id: 'u1', role: 'user', content: 'echo one' }],
      });

      const run1 = await runClient(agent, 'run-1');
      expect(run1.failures).toEqual([]);
      expect(run1.events.at(-1)!.type).toBe('RUN_FINISHED');

      agent.addMessage({ id: 'u2', role: 'user', content: 'then wait forever' });
      const run2 = runClient(agent, 'run-2');
      await emulator!.waitForRequest(2);
      agent.abortRun();
      expect((await run2).failures).toEqual([]);

      // A restart: a new process (AgentRx and endpoint) on the same store.
      await first.close();
      servers.length = 0;
      const second = await startServer(emulator!, dir!);
      servers.push(second);
      agent.url = `${second.server.url}agent`;
      agent.addMessage({ id: 'u3', role: 'user', content: 'what did I ask?' });
      const run3 = await runClient(agent, 'run-3');
      expect(run3.failures).toEqual([]);
      expect(run3.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-3' });

      const last = (emulator!.requests.filter((r) => r.completion !== undefined).at(-1)!.body as { messages: WireMessage[] }).messages;
      const said = last.map((m) => `${m.role}:${m.content ?? ''}${m.tool_call_id ? `#${m.tool_call_id}` : ''}`);
      expect(said).toEqual(expect.arrayContaining(['user:echo one', 'tool:ONE#call_echo', 'assistant:Echo said ONE.', 'user:then wait forever']));
      expect(said.at(-1)).toMatch(/^user:what did I ask\?/);
      expect(last.find((m) => m.role === 'assistant' && m.tool_calls)?.tool_calls?.[0]?.id).toBe('call_echo');
      // The tool ran once in all.
      expect(emulator!.requests.filter((r) => r.completion !== undefined)).toHaveLength(4);
    });
  });

  describe('when the client keeps shared state over runs and a tool changes it', () => {
    it("should start each run from the client's state, and the client applies the STATE_DELTA", async () => {
      await start([
        { toolCalls: [{ id: 'c1', name: 'count', arguments: { by: 2 } }] },
        { text: 'Counted.' },
        { toolCalls: [{ id: 'c2', name: 'count', arguments: { by: 5 } }] },
        { text: 'Counted again.' },
      ]);
      const srv = await startServer(emulator!, dir!);
      servers.push(srv);
      const agent = new HttpAgent({
        url: `${srv.server.url}agent`,
        threadId: 'state-1',
        initialMessages: [{ id: 'u1', role: 'user', content: 'count' }],
        initialState: { count: 1, theme: 'dark' },
      });
      const run1 = await runClient(agent, 's1');
      expect(run1.failures).toEqual([]);
      expect(run1.events.map((e) => e.type)).toEqual(expect.arrayContaining(['STATE_SNAPSHOT', 'STATE_DELTA']));
      expect(agent.state).toEqual({ count: 3, theme: 'dark' });

      // The client changes its state between runs: the next run starts from it.
      agent.setState({ count: 10, theme: 'light' });
      agent.addMessage({ id: 'u2', role: 'user', content: 'count more' });
      const run2 = await runClient(agent, 's2');
      expect(run2.failures).toEqual([]);
      expect(run2.events.find((e) => e.type === 'STATE_SNAPSHOT')).toMatchObject({ snapshot: { count: 10, theme: 'light' } });
      expect(agent.state).toEqual({ count: 15, theme: 'light' });
    });
  });
});
