import { HttpAgent, type AgentSubscriber, type RunAgentParameters } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { AgentRx } from '../../../src/agentrx.js';
import { startAgUiServer, type AgUiServer } from '../../../src/servers/agui-http/agui-http.server.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import type { StandardSchemaV1 } from '../../../src/core/plugin/tool-handler.js';
import { cmaProviderModule } from '../../../src/plugins/providers/claude-managed-agents/cma.module.js';
import { startCmaEmulator, type CmaEmulator } from '../../../src/testing/cma-emulator.js';
import { EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';
import { postJson, runInput, sseEvents, startStack, type Stack } from './agui-http.fixtures.js';

/** What one client run saw, after the client's own verification. */
interface ClientRun {
  readonly events: BaseEvent[];
  readonly failures: unknown[];
  outcome: string | undefined;
}

async function runClient(agent: HttpAgent, params: RunAgentParameters, extra: AgentSubscriber = {}): Promise<ClientRun> {
  const run: ClientRun = { events: [], failures: [], outcome: undefined };
  await agent.runAgent(params, {
    ...extra,
    onEvent: ({ event }) => void run.events.push(event),
    onRunFailed: ({ error }) => void run.failures.push(error),
    onRunFinishedEvent: ({ outcome }) => void (run.outcome = outcome),
  });
  return run;
}

const types = (events: readonly BaseEvent[]): string[] => events.map((e) => String(e.type));
const text = (events: readonly BaseEvent[]): string =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => (e as unknown as { delta: string }).delta)
    .join('');
/** A RUN_FINISHED as the wire carries it (what these tests read of it). */
interface Finished {
  readonly runId?: string;
  readonly outcome?: { readonly type?: string; readonly pendingToolCallIds?: readonly string[]; readonly interrupts?: readonly unknown[] };
}
const finished = (events: readonly BaseEvent[]): Finished => events.find((e) => e.type === 'RUN_FINISHED') as unknown as Finished;

/** A frontend tool as a page declares it. */
const CONFIRM_TOOL = {
  name: 'ask_user',
  description: 'Ask the user a yes/no question.',
  parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
};

type WireMessage = { role: string; content?: string | null; tool_call_id?: string };

/**
 * On thread `threadId` of `stack` (a batch of server tools and the `ask_user` frontend call, then
 * the text 'Both done.'): the first client run ends with only `call_ask` pending and the server
 * tools' results (`serverResults`) sent, and the run that answers `call_ask` gets the text.
 */
async function expectOnlyFrontendCallPending(
  stack: Stack,
  threadId: string,
  serverResults: readonly { toolCallId: string; content?: string }[],
): Promise<void> {
  const agent = new HttpAgent({ url: stack.endpoint, threadId, initialMessages: [{ id: 'u1', role: 'user', content: 'go' }] });
  const first = await runClient(agent, { runId: 'r1', tools: [CONFIRM_TOOL] });
  expect(first.failures).toEqual([]);
  const results = first.events.filter((e) => e.type === 'TOOL_CALL_RESULT');
  expect(results).toEqual(serverResults.map((r) => expect.objectContaining(r)));
  expect(finished(first.events)).toMatchObject({ outcome: { type: 'success', pendingToolCallIds: ['call_ask'] } });

  agent.addMessage({ id: 't2', role: 'tool', toolCallId: 'call_ask', content: 'fine' });
  const second = await runClient(agent, { runId: 'r2', tools: [CONFIRM_TOOL] });
  expect(second.failures).toEqual([]);
  expect(text(second.events)).toBe('Both done.');
}

describe('AG-UI endpoint: the client in the loop (frontend tools and interrupts)', () => {
  let stack: Stack | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('when the model calls a tool the client declared', () => {
    it("should end the run after the call with it pending, and continue the same request with the client's result", async () => {
      stack = await startStack({
        script: [
          { text: 'Let me ask.', toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship it?' } }] },
          { text: 'You said yes: shipping.' },
        ],
      });
      const agent = new HttpAgent({ url: stack.endpoint, threadId: 'fe-1', initialMessages: [{ id: 'u1', role: 'user', content: 'Ship the release?' }] });

      const first = await runClient(agent, { runId: 'run-1', tools: [CONFIRM_TOOL] });
      expect(first.failures).toEqual([]);
      expect(types(first.events)).toEqual(expect.arrayContaining(['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END']));
      expect(types(first.events)).not.toContain('TOOL_CALL_RESULT');
      expect(finished(first.events)).toMatchObject({ runId: 'run-1', outcome: { type: 'success', pendingToolCallIds: ['call_ask'] } });
      // The model was asked once: the session waits for the client.
      expect(stack.emulator.requests.filter((r) => r.completion !== undefined)).toHaveLength(1);
      const offered = (stack.emulator.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
      expect(offered).toContain('ask_user');

      agent.addMessage({ id: 'tool-1', role: 'tool', toolCallId: 'call_ask', content: 'yes' });
      const second = await runClient(agent, { runId: 'run-2', tools: [CONFIRM_TOOL] });
      expect(second.failures).toEqual([]);
      expect(types(second.events)[0]).toBe('RUN_STARTED');
      expect(finished(second.events)).toMatchObject({ runId: 'run-2' });
      expect(text(second.events)).toBe('You said yes: shipping.');
      // The client has the tool's result already: no TOOL_CALL_RESULT repeats it.
      expect(types(second.events)).not.toContain('TOOL_CALL_RESULT');
      expect(agent.messages.filter((m) => m.role === 'tool')).toHaveLength(1);
      // The model's second request answers its call with the client's result, in the same conversation.
      const last = stack.emulator.requests.filter((r) => r.completion !== undefined).at(-1)!.body as { messages: WireMessage[] };
      expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(last.messages[2]).toMatchObject({ tool_call_id: 'call_ask', content: 'yes' });
      expect(stack.sessions).toHaveLength(1);
    });

    it("should run the server's tools of the same batch first, and leave only the frontend call pending", async () => {
      stack = await startStack({
        tools: [EchoToolHandler],
        script: [
          {
            toolCalls: [
              { id: 'call_echo', name: 'echo', arguments: { text: 'hi' } },
              { id: 'call_ask', name: 'ask_user', arguments: { question: 'ok?' } },
            ],
          },
          { text: 'Both done.' },
        ],
      });
      await expectOnlyFrontendCallPending(stack, 'fe-2', [{ toolCallId: 'call_echo' }]);
    });

    it('should count a server tool of the batch that has not started yet (its validator still runs) before ending the run', async () => {
      // A Standard Schema whose validate answers 50 ms later (a check against a database, say):
      // the frontend call waits for the client before the server tool has started.
      const slowValidation: StandardSchemaV1 = {
        '~standard': {
          version: 1,
          vendor: 'test',
          validate: (value: unknown) => new Promise((resolve) => setTimeout(() => resolve({ value }), 50)),
          jsonSchema: { input: () => ({ type: 'object', properties: { text: { type: 'string' } } }) },
        },
      };
      stack = await startStack({
        tools: [defineTool({ name: 'lookup', description: 'Looks up.', inputSchema: slowValidation, handle: () => 'FOUND' })],
        script: [
          {
            toolCalls: [
              { id: 'call_ask', name: 'ask_user', arguments: { question: 'ok?' } },
              { id: 'call_lookup', name: 'lookup', arguments: { text: 'hi' } },
            ],
          },
          { text: 'Both done.' },
        ],
      });
      await expectOnlyFrontendCallPending(stack, 'fe-3', [{ toolCallId: 'call_lookup', content: 'FOUND' }]);
    });
  });

  describe('when the client changes its state while a frontend call waits, and a tool then changes it', () => {
    it("should continue from the client's state, with a STATE_DELTA the client applies", async () => {
      const bump = defineTool({
        name: 'bump',
        description: 'Adds one to count.',
        inputSchema: { type: 'object', properties: {} },
        handle: (_input, ctx) => {
          ctx.state!['count'] = (ctx.state!['count'] as number) + 1;
          return 'bumped';
        },
      });
      stack = await startStack({
        tools: [bump],
        script: [
          { toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'bump?' } }] },
          { toolCalls: [{ id: 'call_bump', name: 'bump', arguments: {} }] },
          { text: 'Bumped.' },
        ],
      });
      const agent = new HttpAgent({
        url: stack.endpoint,
        threadId: 'fe-state',
        initialMessages: [{ id: 'u1', role: 'user', content: 'go' }],
        initialState: { count: 1, note: 'a' },
      });
      const first = await runClient(agent, { runId: 'r1', tools: [CONFIRM_TOOL] });
      expect(first.failures).toEqual([]);
      agent.setState({ count: 40, note: 'changed meanwhile' });
      agent.addMessage({ id: 't1', role: 'tool', toolCallId: 'call_ask', content: 'yes' });
      const second = await runClient(agent, { runId: 'r2', tools: [CONFIRM_TOOL] });
      expect(second.failures).toEqual([]);
      expect(types(second.events)).toContain('STATE_DELTA');
      expect(agent.state).toEqual({ count: 41, note: 'changed meanwhile' });
    });
  });

  describe('when a run brings what the thread does not wait for', () => {
    it('should answer 400 naming the problem, and keep the waiting run answerable', async () => {
      stack = await startStack({ script: [{ toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'ok?' } }] }, { text: 'Thanks.' }] });
      const opened = await postJson(stack.endpoint, runInput({ threadId: 'fe-3', runId: 'r1', tools: [CONFIRM_TOOL], protocolVersion: '1.0' }, 'start'));
      expect(finished(sseEvents(opened.text) as unknown as BaseEvent[])).toMatchObject({ outcome: { pendingToolCallIds: ['call_ask'] } });
      const history = [
        { id: 'u1', role: 'user', content: 'start' },
        {
          id: 'a1',
          role: 'assistant',
          toolCalls: [
            { id: 'call_ask', type: 'function', function: { name: 'ask_user', arguments: '{"question":"ok?"}' } },
            { id: 'call_other', type: 'function', function: { name: 'ask_user', arguments: '{}' } },
          ],
        },
      ];

      const wrongCall = await postJson(
        stack.endpoint,
        runInput({ threadId: 'fe-3', runId: 'r2', messages: [...history, { id: 't1', role: 'tool', toolCallId: 'call_other', content: 'x' }] }),
      );
      expect(wrongCall.status).toBe(400);
      expect(wrongCall.json.message).toMatch(/call_other.*no frontend tool call of this thread waits/);

      const resumeInstead = await postJson(
        stack.endpoint,
        runInput({ threadId: 'fe-3', runId: 'r3', resume: [{ interruptId: 'call_ask', status: 'resolved' }] }),
      );
      expect(resumeInstead.status).toBe(400);
      expect(resumeInstead.json.message).toMatch(/waits for frontend tool results/);

      const right = await postJson(
        stack.endpoint,
        runInput({ threadId: 'fe-3', runId: 'r4', messages: [...history, { id: 't1', role: 'tool', toolCallId: 'call_ask', content: 'ok' }] }),
      );
      expect(right.status).toBe(200);
      expect(sseEvents(right.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'r4' });
    });

    it('should answer 400 to tool results or a resume on a thread that waits for nothing', async () => {
      stack = await startStack({ script: [{ text: 'Hi.' }] });
      await postJson(stack.endpoint, runInput({ threadId: 'idle', runId: 'r1' }));
      const resume = await postJson(stack.endpoint, runInput({ threadId: 'idle', runId: 'r2', resume: [{ interruptId: 'nope', status: 'resolved' }] }));
      expect(resume.status).toBe(400);
      expect(resume.json.message).toMatch(/resume: no run of thread idle waits for an answer to nope/);
      const results = await postJson(
        stack.endpoint,
        runInput({
          threadId: 'unknown-thread',
          runId: 'r3',
          messages: [
            { id: 'u1', role: 'user', content: 'x' },
            { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'ask_user', arguments: '{}' } }] },
            { id: 't1', role: 'tool', toolCallId: 'c1', content: 'y' },
          ],
        }),
      );
      expect(results.status).toBe(400);
      expect(results.json.message).toMatch(/no run of thread unknown-thread waits for frontend tool results/);
      expect(stack.sessions).toHaveLength(1);
    });

    it('should answer 400 when a frontend tool takes the name of a server tool, starting nothing', async () => {
      stack = await startStack({ tools: [EchoToolHandler], script: [{ text: 'never' }] });
      const reply = await postJson(
        stack.endpoint,
        runInput({ threadId: 'clash', tools: [{ name: 'echo', description: 'mine', parameters: { type: 'object' } }] }),
      );
      expect(reply.status).toBe(400);
      expect(reply.json.message).toMatch(/'echo' is the name of an agent tool/);
      expect(stack.sessions).toHaveLength(0);
    });

    it("should answer 400 when a frontend tool's parameters are not a usable JSON Schema", async () => {
      stack = await startStack({ script: [{ text: 'never' }] });
      const reply = await postJson(
        stack.endpoint,
        runInput({ threadId: 'bad-schema', tools: [{ name: 'pick', description: 'x', parameters: { type: 'array' } }] }),
      );
      expect(reply.status).toBe(400);
      expect(reply.json.message).toMatch(/tools\[0\].*object/);
    });
  });

  describe("when a local tool needs the user's approval (requireApproval)", () => {
    it('should end the run with an interrupt, and run the tool once the client resumes with allow', async () => {
      let ran = 0;
      const deploy = defineTool({
        name: 'deploy',
        description: 'Deploys.',
        requireApproval: true,
        inputSchema: { type: 'object', properties: {} },
        handle: () => `deployed ${++ran}`,
      });
      stack = await startStack({ script: [{ toolCalls: [{ id: 'call_dep', name: 'deploy', arguments: {} }] }, { text: 'Deployed.' }], tools: [deploy] });
      const agent = new HttpAgent({ url: stack.endpoint, threadId: 'ap-1', initialMessages: [{ id: 'u1', role: 'user', content: 'deploy' }] });
      const first = await runClient(agent, {});
      expect(first.failures).toEqual([]);
      expect(first.outcome).toBe('interrupt');
      expect(finished(first.events).outcome?.interrupts).toEqual([
        expect.objectContaining({ id: 'call_dep', reason: 'tool_confirmation', toolCallId: 'call_dep' }),
      ]);
      expect(ran).toBe(0);

      const second = await runClient(agent, { runId: 'ap-run-2', resume: [{ interruptId: 'call_dep', status: 'resolved', payload: { allow: true } }] });
      expect(second.failures).toEqual([]);
      expect(ran).toBe(1);
      expect(second.events.filter((e) => e.type === 'TOOL_CALL_RESULT')).toHaveLength(1);
      expect(text(second.events)).toBe('Deployed.');
    });

    it('should tell the model the tool was denied when the client cancels the interrupt', async () => {
      let ran = 0;
      const deploy = defineTool({
        name: 'deploy',
        description: 'Deploys.',
        requireApproval: true,
        inputSchema: { type: 'object', properties: {} },
        handle: () => `deployed ${++ran}`,
      });
      stack = await startStack({ script: [{ toolCalls: [{ id: 'call_dep', name: 'deploy', arguments: {} }] }, { text: 'Not deployed.' }], tools: [deploy] });
      const agent = new HttpAgent({ url: stack.endpoint, threadId: 'ap-2', initialMessages: [{ id: 'u1', role: 'user', content: 'deploy' }] });
      await runClient(agent, {});
      const second = await runClient(agent, { resume: [{ interruptId: 'call_dep', status: 'cancelled' }] });
      expect(second.failures).toEqual([]);
      expect(ran).toBe(0);
      const last = stack.emulator.requests.filter((r) => r.completion !== undefined).at(-1)!.body as { messages: WireMessage[] };
      expect(last.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_dep', content: expect.stringMatching(/dismissed/) });
    });
  });

  describe('when Claude Managed Agents asks to confirm a tool of its own', () => {
    let emu: CmaEmulator | undefined;
    let rx: AgentRx | undefined;
    let server: AgUiServer | undefined;
    afterEach(async () => {
      await server?.close();
      await rx?.stop();
      await emu?.close();
      server = rx = emu = undefined;
    });

    it('should ask the client with an interrupt and continue with its answer', async () => {
      emu = await startCmaEmulator({
        apiKey: 'sk-ant-agui-test-key',
        script: [{ serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }] }, { text: 'Done.' }],
      });
      rx = await AgentRx.create({
        modules: [cmaProviderModule],
        config: {
          provider: 'claude-managed-agents',
          consumers: { terminal: false },
          providers: { 'claude-managed-agents': { apiKey: 'sk-ant-agui-test-key', baseUrl: emu.baseUrl } },
        },
      });
      server = await startAgUiServer({ rx, port: 0 });
      const agent = new HttpAgent({ url: `${server.url}agent`, threadId: 'cma-1', initialMessages: [{ id: 'u1', role: 'user', content: 'search' }] });
      const first = await runClient(agent, {});
      expect(first.failures).toEqual([]);
      expect(first.outcome).toBe('interrupt');
      expect(finished(first.events).outcome?.interrupts?.[0]).toMatchObject({
        id: 'sevt_ws',
        reason: 'tool_confirmation',
        message: expect.stringContaining('web_search'),
      });

      const second = await runClient(agent, { resume: [{ interruptId: 'sevt_ws', status: 'resolved', payload: { allow: true } }] });
      expect(second.failures).toEqual([]);
      expect(second.outcome).toBe('success');
      expect(text(second.events)).toBe('Done.');
    });
  });
});

describe('AG-UI endpoint: MESSAGES_SNAPSHOT before each RUN_FINISHED', () => {
  let stack: Stack | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  /** Runs the agent and returns, for each MESSAGES_SNAPSHOT, the client's messages just before it and the snapshot's. */
  async function snapshotsOf(agent: HttpAgent, params: RunAgentParameters): Promise<{ before: unknown[]; snapshot: unknown[]; failures: unknown[] }[]> {
    const seen: { before: unknown[]; snapshot: unknown[]; failures: unknown[] }[] = [];
    const failures: unknown[] = [];
    await agent.runAgent(params, {
      onMessagesSnapshotEvent: ({ event, messages }) =>
        void seen.push({ before: [...structuredClone(messages)], snapshot: [...structuredClone(event.messages)], failures }),
      onRunFailed: ({ error }) => void failures.push(error),
    });
    return seen;
  }

  it('should send the conversation exactly as the client rebuilt it, run after run (text, tool calls, results, a frontend tool)', async () => {
    stack = await startStack({
      tools: [EchoToolHandler],
      script: [
        { text: 'Checking.', toolCalls: [{ id: 'call_echo', name: 'echo', arguments: { text: 'hi' } }] },
        { text: 'Echo said HI.' },
        { text: 'Let me ask.', toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'more?' } }] },
        { text: 'Done, as you wished.' },
      ],
    });
    const agent = new HttpAgent({
      url: stack.endpoint,
      threadId: 'snap-1',
      initialMessages: [
        { id: 's0', role: 'system', content: 'Be brief.' },
        { id: 'u1', role: 'user', content: 'echo hi' },
      ],
    });
    const runs: Awaited<ReturnType<typeof snapshotsOf>>[] = [];
    runs.push(await snapshotsOf(agent, { runId: 'r1', tools: [CONFIRM_TOOL] }));
    agent.addMessage({ id: 'u2', role: 'user', content: 'and ask me' });
    runs.push(await snapshotsOf(agent, { runId: 'r2', tools: [CONFIRM_TOOL] }));
    agent.addMessage({ id: 't-ask', role: 'tool', toolCallId: 'call_ask', content: 'yes' });
    runs.push(await snapshotsOf(agent, { runId: 'r3', tools: [CONFIRM_TOOL] }));

    for (const run of runs) {
      expect(run).toHaveLength(1);
      expect(run[0]!.failures).toEqual([]);
      // The client holds exactly this already: the snapshot reorders and drops nothing.
      expect(run[0]!.snapshot).toEqual(run[0]!.before);
    }
    const roles = (agent.messages as { role: string }[]).map((m) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
    expect(runs[2]![0]!.snapshot).toEqual(agent.messages);
  });
});
