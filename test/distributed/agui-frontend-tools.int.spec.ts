/**
 * Frontend tools in `runtime.mode: 'distributed'`: two AG-UI endpoints (nodes A and B) share one
 * Redis with a worker in the same process. The client's tools travel to the worker as
 * declarations; the model's call of one ends the client's run on A with `pendingToolCallIds`
 * (learned from the session's log), and the client's next run, on B, hands the tool's result to
 * the live session on the worker (`answerClient`), which goes on with the model. An answer the
 * session cannot take is refused (400) and it keeps waiting; an interrupt's decision (a worker
 * tool that needs approval) reaches the worker the same way.
 */
import { AgentRx } from '../../src/agentrx.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { defineTool } from '../../src/core/tools/define-tool.js';
import { ContainerModule } from '../../src/core/util/inversify.js';
import { startAgUiServer, type AgUiServer } from '../../src/servers/agui-http/agui-http.server.js';
import { postJson, runInput, sseEvents, type WireEvent } from '../servers/agui-http/agui-http.fixtures.js';
import { describeWithRedis } from '../support/redis-server.js';
import { DistributedWorld } from './distributed-fixture.js';

const THREAD = 'thread-frontend';
const ASK_USER = {
  name: 'ask_user',
  description: 'Ask the user a yes/no question.',
  parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
};
const SCRIPT = [
  { text: 'Let me ask.', toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship it?' } }] },
  { text: 'You said yes: shipping.' },
];

type WireMessage = { role: string; content?: string | null; tool_call_id?: string };

/** The conversation of the client's run answering the call `call_ask` with `answer` (`toolCallId`: the call it names). */
function answering(answer: string, toolCallId = 'call_ask'): Record<string, unknown>[] {
  return [
    { id: 'u1', role: 'user', content: 'Ship the release?' },
    {
      id: 'a1',
      role: 'assistant',
      content: 'Let me ask.',
      // A call the client made up is one of the assistant message's too (the input must be consistent).
      toolCalls: [...new Set(['call_ask', toolCallId])].map((id) => ({
        id,
        type: 'function',
        function: { name: 'ask_user', arguments: '{"question":"Ship it?"}' },
      })),
    },
    { id: 't1', role: 'tool', toolCallId, content: answer },
  ];
}

const types = (events: readonly WireEvent[]): string[] => events.map((e) => e.type);
const text = (events: readonly WireEvent[]): string =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => String(e['delta']))
    .join('');

describeWithRedis('AG-UI frontend tools in runtime.mode distributed', () => {
  let world: DistributedWorld;
  let servers: AgUiServer[];

  beforeEach(() => {
    servers = [];
  });
  afterEach(async () => {
    for (const s of servers) await s.close();
    await world.close();
  });

  /** A client node: an AgentRx configured for the pool (store and queue on Redis), behind an AG-UI server. */
  async function node(): Promise<AgUiServer> {
    const rx = await AgentRx.create({
      config: {
        logLevel: 'silent',
        consumers: { terminal: false },
        store: { type: 'redis', url: world.redis.url, leaseMs: 1_000 },
        runtime: { mode: 'distributed', queueName: world.queueName },
      },
    });
    world.instances.push(rx);
    const server = await startAgUiServer({ rx, port: 0 });
    servers.push(server);
    return server;
  }

  describe('when the model calls a frontend tool, and the client answers it through another endpoint', () => {
    it("should end the run on A with the call pending, and continue the session on the worker with the client's result from B", async () => {
      world = await DistributedWorld.start(SCRIPT);
      await world.worker();
      const a = await node();
      const b = await node();

      const opened = await postJson(
        `${a.url}agent`,
        runInput({ threadId: THREAD, runId: 'run-1', tools: [ASK_USER], protocolVersion: '1.0' }, 'Ship the release?'),
      );
      expect(opened.status).toBe(200);
      const first = sseEvents(opened.text);
      expect(types(first)).toEqual(expect.arrayContaining(['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_END']));
      expect(types(first)).not.toContain('TOOL_CALL_RESULT');
      expect(first.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-1', outcome: { type: 'success', pendingToolCallIds: ['call_ask'] } });
      // The worker offered the client's tool to the model, and the session waits for the client.
      const completions = (): { body: unknown }[] => world.emu.requests.filter((r) => r.completion !== undefined);
      expect(completions()).toHaveLength(1);
      const offered = (completions()[0]!.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
      expect(offered).toContain('ask_user');

      const answered = await postJson(
        `${b.url}agent`,
        runInput({ threadId: THREAD, runId: 'run-2', tools: [ASK_USER], protocolVersion: '1.0', messages: answering('yes') }),
      );
      expect(answered.status).toBe(200);
      const second = sseEvents(answered.text);
      expect(second[0]).toMatchObject({ type: 'RUN_STARTED', threadId: THREAD, runId: 'run-2' });
      expect(second.filter((e) => e.type === 'RUN_FINISHED')).toEqual([expect.objectContaining({ runId: 'run-2' })]);
      expect(second.at(-1)!.type).toBe('RUN_FINISHED');
      expect(text(second)).toBe('You said yes: shipping.');
      // The client has the tool's result already: no TOOL_CALL_RESULT repeats it.
      expect(types(second)).not.toContain('TOOL_CALL_RESULT');
      // The model's second request answers its call with the client's result, in the same conversation.
      expect(completions()).toHaveLength(2);
      const last = completions()[1]!.body as { messages: WireMessage[] };
      expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(last.messages[2]).toMatchObject({ tool_call_id: 'call_ask', content: 'yes' });
      // One submission, one session on the worker.
      expect(world.logs.filter((l) => / job sub-\S+ started/.test(l))).toHaveLength(1);
    }, 60_000);
  });

  describe('when a run on another endpoint answers a call that does not wait, then the client answers on the first endpoint', () => {
    it('should refuse the wrong answer with 400 while the session keeps waiting, and continue it with the right one', async () => {
      world = await DistributedWorld.start(SCRIPT);
      await world.worker();
      const a = await node();
      const b = await node();
      const thread = 'thread-frontend-wrong';
      const opened = await postJson(
        `${a.url}agent`,
        runInput({ threadId: thread, runId: 'r1', tools: [ASK_USER], protocolVersion: '1.0' }, 'Ship the release?'),
      );
      expect(sseEvents(opened.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { pendingToolCallIds: ['call_ask'] } });

      const wrong = await postJson(`${b.url}agent`, runInput({ threadId: thread, runId: 'r2', tools: [ASK_USER], messages: answering('x', 'call_other') }));
      expect(wrong.status).toBe(400);
      expect(wrong.json.message).toMatch(/no client-answered tool call waits for a result with id 'call_other'/);

      const right = await postJson(
        `${a.url}agent`,
        runInput({ threadId: thread, runId: 'r3', tools: [ASK_USER], protocolVersion: '1.0', messages: answering('yes') }),
      );
      expect(right.status).toBe(200);
      const events = sseEvents(right.text);
      expect(events[0]).toMatchObject({ type: 'RUN_STARTED', runId: 'r3' });
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'r3' });
      expect(text(events)).toBe('You said yes: shipping.');
      const last = world.emu.requests.filter((r) => r.completion !== undefined).at(-1)!.body as { messages: WireMessage[] };
      expect(last.messages[2]).toMatchObject({ tool_call_id: 'call_ask', content: 'yes' });
    }, 60_000);
  });

  describe('when a worker tool waits for the user to allow it, and the client answers the interrupt through another endpoint', () => {
    it('should end the run on A with the interrupt, and run the tool on the worker once B hands over the decision', async () => {
      let deploys = 0;
      const deploy = defineTool({
        name: 'deploy',
        description: 'Deploys the release.',
        requireApproval: true,
        inputSchema: { type: 'object', properties: {} },
        handle: () => `deployed ${++deploys}`,
      });
      world = await DistributedWorld.start([{ toolCalls: [{ id: 'call_deploy', name: 'deploy', arguments: {} }] }, { text: 'Deployed.' }]);
      const store = world.store();
      const workerRx = await AgentRx.create({
        modules: [new ContainerModule((o) => void o.bind(SessionStore).toConstantValue(store))],
        tools: [deploy],
        config: {
          provider: 'local',
          logLevel: 'silent',
          consumers: { terminal: false },
          providers: { local: { baseUrl: world.emu.baseUrl, model: 'scripted', retryBaseMs: 1 } },
        },
      });
      world.instances.push(workerRx);
      await world.worker([], {}, workerRx);
      const a = await node();
      const b = await node();
      const thread = 'thread-interrupt';

      const opened = await postJson(`${a.url}agent`, runInput({ threadId: thread, runId: 'r1', protocolVersion: '1.0' }, 'Deploy it'));
      expect(sseEvents(opened.text).at(-1)).toMatchObject({
        type: 'RUN_FINISHED',
        outcome: { type: 'interrupt', interrupts: [expect.objectContaining({ id: 'call_deploy' })] },
      });
      expect(deploys).toBe(0);

      const resume = [{ interruptId: 'call_deploy', status: 'resolved', payload: { allow: true } }];
      const answered = await postJson(
        `${b.url}agent`,
        runInput({
          threadId: thread,
          runId: 'r2',
          protocolVersion: '1.0',
          resume,
          messages: [
            { id: 'u1', role: 'user', content: 'Deploy it' },
            { id: 'a1', role: 'assistant', toolCalls: [{ id: 'call_deploy', type: 'function', function: { name: 'deploy', arguments: '{}' } }] },
          ],
        }),
      );
      expect(answered.status).toBe(200);
      const events = sseEvents(answered.text);
      expect(events[0]).toMatchObject({ type: 'RUN_STARTED', runId: 'r2' });
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'r2' });
      expect(text(events)).toBe('Deployed.');
      expect(deploys).toBe(1);
    }, 60_000);
  });
});
