import { IsOptional, IsString } from 'class-validator';
import { injectable } from '../../../src/core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { postJson, runInput, sseEvents, startStack, type Stack } from './agui-http.fixtures.js';

class BumpInput {
  @IsOptional()
  @IsString()
  note?: string;
}

/** Adds one to the client's `count` (its shared state). */
@injectable()
class BumpTool implements ToolHandler<BumpInput> {
  readonly name = 'bump';
  readonly description = 'Adds one to the counter.';
  readonly inputType = BumpInput;
  handle(_input: BumpInput, ctx: ToolContext): string {
    ctx.state!['count'] = (ctx.state!['count'] as number) + 1;
    return 'bumped';
  }
}

type WireMessage = {
  role: string;
  content?: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
};

/** The messages of the emulator's last chat-completion request. */
function lastModelRequest(stack: Stack): WireMessage[] {
  const last = stack.emulator.requests.filter((r) => r.completion !== undefined).at(-1)!;
  return (last.body as { messages: WireMessage[] }).messages;
}

describe('AG-UI endpoint: the conversation comes from the client', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('when a thread the server does not know arrives with history and context', () => {
    it('should give the model the whole conversation as messages, and the context with the new message', async () => {
      stack = await startStack({ script: [{ text: 'Your name is Ada.' }] });
      const reply = await postJson(
        stack.endpoint,
        runInput({
          threadId: 'known-elsewhere',
          messages: [
            { id: 's1', role: 'system', content: 'Be brief.' },
            { id: 'u1', role: 'user', content: 'My name is Ada.' },
            { id: 'a1', role: 'assistant', content: 'Hello Ada.' },
            {
              id: 'a2',
              role: 'assistant',
              content: '',
              toolCalls: [{ id: 'call_9', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } }],
            },
            { id: 't1', role: 'tool', toolCallId: 'call_9', content: '12:00' },
            { id: 'r1', role: 'reasoning', content: 'not for the model' },
            { id: 'u2', role: 'user', content: 'What is my name?' },
          ],
          context: [{ description: 'user timezone', value: 'Europe/Paris' }],
        }),
      );
      expect(sseEvents(reply.text).at(-1)!.type).toBe('RUN_FINISHED');
      const messages = lastModelRequest(stack);
      expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'assistant', 'tool', 'user']);
      expect(messages[1]!.content).toBe('My name is Ada.');
      expect(messages[3]!.tool_calls).toEqual([{ id: 'call_9', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } }]);
      expect(messages[4]).toMatchObject({ tool_call_id: 'call_9', content: '12:00' });
      expect(messages[5]!.content).toContain('What is my name?');
      expect(messages[5]!.content).toContain('<context>');
      expect(messages[5]!.content).toContain('user timezone: Europe/Paris');
      expect(stack.sessions).toHaveLength(1);
    });
  });

  describe('when the history is not a conversation the server can carry', () => {
    it('should answer 400 naming each problem, and start nothing', async () => {
      stack = await startStack({ script: [{ text: 'never' }] });
      const reply = await postJson(
        stack.endpoint,
        runInput({
          messages: [
            { id: 't0', role: 'tool', toolCallId: 'call_unknown', content: 'orphan' },
            { id: 'a1', role: 'assistant', content: 'x', toolCalls: [{ id: 7 }] },
            { id: 'u2', role: 'user', content: 'go' },
          ],
          context: [{ description: 'no value' }],
        }),
      );
      expect(reply.status).toBe(400);
      expect(reply.json.problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^context\[0\]: must be \{ description, value \}/),
          expect.stringMatching(/^messages\[0\]\.toolCallId: "call_unknown" answers no tool call/),
          expect.stringMatching(/^messages\[1\]\.toolCalls\[0\]: must be/),
        ]),
      );
      expect(stack.sessions).toHaveLength(0);
    });
  });

  describe('when a thread continues on the same server', () => {
    it('should send only the new message: the session already holds the conversation', async () => {
      stack = await startStack({ script: [{ text: 'Hello Ada.' }, { text: 'Your name is Ada.' }] });
      await postJson(stack.endpoint, runInput({ threadId: 'live', runId: 'r1', messages: [{ id: 'u1', role: 'user', content: 'My name is Ada.' }] }));
      await postJson(
        stack.endpoint,
        runInput({
          threadId: 'live',
          runId: 'r2',
          messages: [
            { id: 'u1', role: 'user', content: 'My name is Ada.' },
            { id: 'a1', role: 'assistant', content: 'Hello Ada.' },
            { id: 'u2', role: 'user', content: 'What is my name?' },
          ],
        }),
      );
      expect(lastModelRequest(stack).map((m) => [m.role, m.content])).toEqual([
        ['user', 'My name is Ada.'],
        ['assistant', 'Hello Ada.'],
        ['user', 'What is my name?'],
      ]);
      expect(stack.sessions).toHaveLength(1);
    });
  });

  describe('when more threads are idle than maxIdleThreads', () => {
    it('should close the least recently used one and resume its stored session on its next run', async () => {
      stack = await startStack({ script: [{ text: 'Hello Ada.' }, { text: 'Hello Bob.' }, { text: 'Your name is Ada.' }], handler: { maxIdleThreads: 1 } });
      const ada = [{ id: 'u1', role: 'user', content: 'My name is Ada.' }];
      await postJson(stack.endpoint, runInput({ threadId: 'ada', runId: 'r1', messages: ada }));
      // Ada's thread is the least recently used idle one once Bob's run ends: its session closes.
      await postJson(stack.endpoint, runInput({ threadId: 'bob', runId: 'r2', messages: [{ id: 'u1', role: 'user', content: 'My name is Bob.' }] }));
      expect(stack.server.handler.threadCount).toBe(1);

      // Sent at once: the run waits for the closing session and resumes it.
      const next = await postJson(
        stack.endpoint,
        runInput({
          threadId: 'ada',
          runId: 'r3',
          messages: [...ada, { id: 'a1', role: 'assistant', content: 'Hello Ada.' }, { id: 'u2', role: 'user', content: 'What is my name?' }],
        }),
      );
      expect(sseEvents(next.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', threadId: 'ada', runId: 'r3' });
      expect(lastModelRequest(stack).map((m) => [m.role, m.content])).toEqual([
        ['user', 'My name is Ada.'],
        ['assistant', 'Hello Ada.'],
        ['user', 'What is my name?'],
      ]);
      expect(stack.sessions.map((s) => s.threadId)).toEqual(['ada', 'bob', 'ada']);
      expect(stack.sessions[2]!.session.sessionId).toBe(stack.sessions[0]!.session.sessionId);
      expect(await stack.sessions[0]!.session.closed).toBeUndefined();
    });
  });
});

describe('AG-UI endpoint: the client state is the agent state', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('when a run carries state and a tool changes it', () => {
    it('should send STATE_SNAPSHOT of the client state at the run start and the change as STATE_DELTA', async () => {
      stack = await startStack({ script: [{ toolCalls: [{ id: 'c1', name: 'bump', arguments: {} }] }, { text: 'Bumped.' }], tools: [BumpTool] });
      const reply = await postJson(stack.endpoint, runInput({ threadId: 'stateful', state: { count: 1, theme: 'dark' } }));
      const events = sseEvents(reply.text).filter((e) => e.type === 'STATE_SNAPSHOT' || e.type === 'STATE_DELTA');
      expect(events).toEqual([
        expect.objectContaining({ type: 'STATE_SNAPSHOT', snapshot: { count: 1, theme: 'dark' } }),
        expect.objectContaining({ type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/count', value: 2 }] }),
      ]);
    });
  });

  describe('when the state is not an object', () => {
    it('should answer 400 naming it', async () => {
      stack = await startStack({ script: [{ text: 'never' }] });
      const reply = await postJson(stack.endpoint, runInput({ state: [1, 2] }));
      expect(reply.status).toBe(400);
      expect(reply.json.problems).toEqual([expect.stringMatching(/^state: must be a JSON object/)]);
    });
  });
});
