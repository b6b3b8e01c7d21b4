import { HttpAgent as HttpAgentV0, type AgentSubscriber as AgentSubscriberV0 } from '@ag-ui/client-v0';
import { EventSchemas as V0Schemas } from '@ag-ui/core-v0';
import { EventSchemas as V1Schemas } from '@ag-ui/core/schemas';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { postJson, runInput, sseEvents, startStack, type Stack, type StackOptions, type WireEvent } from './agui-http.fixtures.js';

/** A frontend tool as a page declares it. */
const ASK_USER = {
  name: 'ask_user',
  description: 'Ask the user a yes/no question.',
  parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
};

/** Adds one to the client's `count`: a STATE_DELTA after its result. */
const bump = defineTool({
  name: 'bump',
  description: 'Adds one to count.',
  inputSchema: { type: 'object', properties: {} },
  handle: (_input, ctx) => {
    if (ctx.state) ctx.state['count'] = Number(ctx.state['count']) + 1;
    return 'bumped';
  },
});

/** A tool the user must approve: the run ends with the interrupt outcome. */
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys.',
  requireApproval: true,
  inputSchema: { type: 'object', properties: {} },
  handle: () => 'deployed',
});

/** The issues each schema line finds in an event (empty: it accepts it). */
function v0Issues(ev: WireEvent): string[] {
  const r = V0Schemas.safeParse(ev);
  return r.success ? [] : r.error.issues.map((i) => `${i.code} ${i.path.join('.')}`);
}
function v1Issues(ev: WireEvent): string[] {
  const r = V1Schemas.safeParse(ev);
  return r.success ? [] : r.error.issues.map((i) => `${i.code} ${i.path.join('.')}`);
}

/** Each event with what a schema line found wrong in it (only the rejected ones). */
const rejected = (events: readonly WireEvent[], issues: (ev: WireEvent) => string[]): { type: string; issues: string[] }[] =>
  events.map((ev) => ({ type: ev.type, issues: issues(ev) })).filter((r) => r.issues.length > 0);

/** What a `@ag-ui/client` 1.x HttpAgent announces in its RunAgentInput. */
const V1 = { protocolVersion: '1.0' };

/** One scenario: its stack and the RunAgentInput of its run (a script serves it twice: once per client line). */
interface Scenario {
  readonly name: string;
  readonly stack: StackOptions;
  readonly input: Record<string, unknown>;
}

/** A model that calls the client's frontend tool (served twice). */
const FRONTEND_TOOL: Scenario = {
  name: 'a frontend tool call: the run ends waiting on the client',
  stack: {
    script: [
      { text: 'Let me ask.', toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship it?' } }] },
      { text: 'Let me ask.', toolCalls: [{ id: 'call_ask2', name: 'ask_user', arguments: { question: 'Ship it?' } }] },
    ],
  },
  input: { tools: [ASK_USER] },
};

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'reasoning, text, a streamed server tool call with its result, state snapshot and delta',
    stack: {
      tools: [bump],
      script: [
        { reasoning: 'The user wants a bump.', text: 'Bumping.', toolCalls: [{ id: 'call_bump', name: 'bump', arguments: {} }] },
        { text: 'Bumped.' },
        { reasoning: 'The user wants a bump.', text: 'Bumping.', toolCalls: [{ id: 'call_bump2', name: 'bump', arguments: {} }] },
        { text: 'Bumped.' },
      ],
    },
    input: { state: { count: 1 } },
  },
  FRONTEND_TOOL,
  {
    name: 'a tool that needs approval: the run ends with the interrupt outcome',
    stack: {
      tools: [deploy],
      script: [{ toolCalls: [{ id: 'call_dep', name: 'deploy', arguments: {} }] }, { toolCalls: [{ id: 'call_dep2', name: 'deploy', arguments: {} }] }],
    },
    input: {},
  },
  {
    name: 'a model server that refuses the request: RUN_ERROR',
    stack: { script: [], faults: { 0: { kind: 'status', status: 400 }, 1: { kind: 'status', status: 400 } } },
    input: {},
  },
];

describe('AG-UI endpoint across client versions (@ag-ui/core 0.0.59, as CopilotKit 1.74 pins it, and 1.0)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe.each(SCENARIOS)('when a run streams $name', ({ stack: options, input }) => {
    it("should send a client that announces no version only events 0.0.59's schemas accept, and a 1.0 client events 1.0's accept", async () => {
      stack = await startStack(options);
      const legacy = sseEvents((await postJson(stack.endpoint, runInput({ threadId: 'legacy', ...input }))).text);
      const current = sseEvents((await postJson(stack.endpoint, runInput({ threadId: 'current', ...input, ...V1 }))).text);

      expect(legacy.at(-1)?.type).toMatch(/^RUN_(FINISHED|ERROR)$/);
      expect(rejected(legacy, v0Issues)).toEqual([]);
      expect(rejected(legacy, v1Issues)).toEqual([]);
      expect(rejected(current, v1Issues)).toEqual([]);
      // Both lines get the same events, but for what only 1.0 knows.
      expect(legacy.map((e) => e.type)).toEqual(current.map((e) => e.type));
    });
  });

  describe('when the streams of every scenario are put together', () => {
    it('should have covered every event kind the endpoint sends', async () => {
      const seen = new Set<string>();
      for (const { stack: options, input } of SCENARIOS) {
        stack = await startStack(options);
        for (const ev of sseEvents((await postJson(stack.endpoint, runInput(input))).text))
          seen.add(ev.type === 'CUSTOM' ? `CUSTOM ${String(ev['name'])}` : ev.type);
        await stack.close();
        stack = undefined;
      }
      expect([...seen].sort()).toEqual(
        [
          'CUSTOM agentrx.turn_end',
          'MESSAGES_SNAPSHOT',
          'REASONING_END',
          'REASONING_MESSAGE_CONTENT',
          'REASONING_MESSAGE_END',
          'REASONING_MESSAGE_START',
          'REASONING_START',
          'RUN_ERROR',
          'RUN_FINISHED',
          'RUN_STARTED',
          'STATE_DELTA',
          'STATE_SNAPSHOT',
          'TEXT_MESSAGE_CONTENT',
          'TEXT_MESSAGE_END',
          'TEXT_MESSAGE_START',
          'TOOL_CALL_ARGS',
          'TOOL_CALL_END',
          'TOOL_CALL_RESULT',
          'TOOL_CALL_START',
        ].sort(),
      );
    });
  });

  describe('when a run ends waiting on a frontend tool', () => {
    it('should name the pending calls to a 1.0 client only: 0.0.59 refuses that outcome', async () => {
      stack = await startStack(FRONTEND_TOOL.stack);
      const finished = (events: WireEvent[]): WireEvent | undefined => events.find((e) => e.type === 'RUN_FINISHED');
      const legacy = finished(sseEvents((await postJson(stack.endpoint, runInput({ threadId: 'legacy', tools: [ASK_USER] }))).text));
      const current = finished(sseEvents((await postJson(stack.endpoint, runInput({ threadId: 'current', tools: [ASK_USER], ...V1 }))).text));

      expect(legacy).toMatchObject({ outcome: { type: 'success' } });
      expect(legacy?.['outcome']).not.toHaveProperty('pendingToolCallIds');
      expect(current).toMatchObject({ outcome: { type: 'success', pendingToolCallIds: ['call_ask2'] } });
      // What broke CopilotKit 1.74: its client refuses the 1.0 outcome outright.
      expect(v0Issues(current ?? { type: 'RUN_FINISHED' })).toEqual(['unrecognized_keys outcome']);
    });

    it('should replay that end to a GET reconnect in the shape its ?protocolVersion= names (none: 0.0)', async () => {
      const s = await startStack(FRONTEND_TOOL.stack);
      stack = s;
      await postJson(s.endpoint, runInput({ threadId: 'asked', tools: [ASK_USER], ...V1 }));
      const replay = async (query: string): Promise<WireEvent[]> => sseEvents(await fetch(`${s.server.url}threads/asked/events${query}`).then((r) => r.text()));

      const legacy = await replay('');
      const current = await replay('?protocolVersion=1.0.0');

      expect(legacy.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
      expect(legacy.at(-1)?.['outcome']).not.toHaveProperty('pendingToolCallIds');
      expect(rejected(legacy, v0Issues)).toEqual([]);
      expect(current.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success', pendingToolCallIds: ['call_ask'] } });
    });
  });

  describe("when @ag-ui/client 0.0.59's HttpAgent runs a frontend tool and then answers it", () => {
    it('should finish both runs without a client error, and continue the same request with the answer', async () => {
      stack = await startStack({
        script: [
          { reasoning: 'I should ask first.', text: 'Let me ask.', toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship it?' } }] },
          { text: 'You said yes: shipping.' },
        ],
      });
      const agent = new HttpAgentV0({
        url: stack.endpoint,
        threadId: 'copilotkit-1.74',
        initialMessages: [{ id: 'u1', role: 'user', content: 'Ship the release?' }],
      });
      const run = async (runId: string): Promise<{ types: string[]; failures: unknown[]; errors: string[]; text: string }> => {
        const seen = { types: [] as string[], failures: [] as unknown[], errors: [] as string[], text: '' };
        const subscriber: AgentSubscriberV0 = {
          onEvent: ({ event }) => void seen.types.push(String(event.type)),
          onTextMessageContentEvent: ({ event }) => void (seen.text += event.delta),
          onRunErrorEvent: ({ event }) => void seen.errors.push(event.message),
          onRunFailed: ({ error }) => void seen.failures.push(error),
        };
        await agent.runAgent({ runId, tools: [ASK_USER] }, subscriber);
        return seen;
      };

      const first = await run('run-1');
      expect(first.failures).toEqual([]);
      expect(first.errors).toEqual([]);
      expect(first.types).toEqual(expect.arrayContaining(['REASONING_MESSAGE_CONTENT', 'TOOL_CALL_START', 'TOOL_CALL_END', 'MESSAGES_SNAPSHOT']));
      expect(first.types.at(-1)).toBe('RUN_FINISHED');

      agent.addMessage({ id: 'tool-1', role: 'tool', toolCallId: 'call_ask', content: 'yes' });
      const second = await run('run-2');
      expect(second.failures).toEqual([]);
      expect(second.errors).toEqual([]);
      expect(second.types.at(-1)).toBe('RUN_FINISHED');
      expect(second.text).toBe('You said yes: shipping.');
      // The model's second request answered its call with the client's result, in the same session.
      const last = stack.emulator.requests.filter((r) => r.completion !== undefined).at(-1)?.body as
        { messages: { role: string; tool_call_id?: string }[] } | undefined;
      expect(last?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(last?.messages[2]).toMatchObject({ tool_call_id: 'call_ask' });
      expect(stack.sessions).toHaveLength(1);
    });
  });
});
