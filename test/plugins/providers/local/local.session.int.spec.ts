import { AgentRx } from '../../../../src/agentrx.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../../src/testing/openai-emulator.js';
import { RecordingConsumer } from '../../../../src/testing/recording-consumer.js';
import { AddToolHandler, EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';

describe('LocalAgentProvider through AgentRx', () => {
  let emulator: OpenAiEmulator;
  let rx: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await rx?.stop();
    await emulator?.close();
  });

  describe('.run', () => {
    describe('when every turn asks for two parallel tool calls, over three turns', () => {
      it('should answer every tool_call_id exactly once and return the full transcript', async () => {
        emulator = await startOpenAiEmulator({
          script: [
            { text: 'Turn one.', toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }, { id: 'c2', name: 'add', arguments: { a: 1, b: 2 } }], usage: { prompt_tokens: 10, completion_tokens: 3 } },
            { toolCalls: [{ id: 'c3', name: 'echo', arguments: { text: 'b' } }, { id: 'c4', name: 'add', arguments: { a: 3, b: 4 } }], usage: { prompt_tokens: 20, completion_tokens: 3 } },
            { toolCalls: [{ id: 'c5', name: 'echo', arguments: { text: 'c' } }, { id: 'c6', name: 'add', arguments: { a: 5, b: 6 } }], usage: { prompt_tokens: 30, completion_tokens: 3 } },
            { text: 'All done.', usage: { prompt_tokens: 40, completion_tokens: 2 } },
          ],
        });
        const rec = new RecordingConsumer();
        rx = await AgentRx.create({
          config: { provider: 'local', agent: { systemPrompt: 'Be brief.' }, providers: { local: { baseUrl: emulator.baseUrl, model: 'scripted' } } },
          tools: [EchoToolHandler, AddToolHandler],
          consumers: [rec],
        });
        const result = await rx.run({ prompt: 'go' });

        expect(result).toMatchObject({ terminal: 'end_turn', turns: 4, text: 'All done.', usage: { inputTokens: 100, outputTokens: 11 } });
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['a', 'b', 'c']);
        expect(AddToolHandler.calls).toBe(3);

        const chats = emulator.requests.filter((r) => r.path.endsWith('/chat/completions'));
        expect(chats).toHaveLength(4);
        const last = (chats[3]!.body as { messages: { role: string; tool_call_id?: string; content?: string }[] }).messages;
        const answered = last.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
        expect(answered).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
        expect(last.find((m) => m.tool_call_id === 'c2')!.content).toBe('{"sum":3}');
        expect(last[0]).toEqual({ role: 'system', content: 'Be brief.' });

        const transcript = result.transcript as { role: string }[];
        expect(transcript.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'tool', 'assistant']);
        expect(rec.text).toBe('Turn one.All done.');
        expect(rec.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => (e as { toolCallId: string }).toolCallId)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
      });
    });

    describe('when the session has a turn limit and the provider sets none', () => {
      it('should put the final-turn directive on the call that reaches the session\'s maxTurns', async () => {
        emulator = await startOpenAiEmulator({
          script: [{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'Wrapping up.' }],
        });
        rx = await AgentRx.create({
          config: { provider: 'local', providers: { local: { baseUrl: emulator.baseUrl, model: 'scripted' } }, consumers: { terminal: false } },
          tools: [EchoToolHandler],
        });
        const result = await rx.run({ prompt: 'go', maxTurns: 2 });

        expect(result).toMatchObject({ terminal: 'end_turn', turns: 2, text: 'Wrapping up.' });
        const bodies = emulator.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => (r.body as { messages: { role: string; content?: string }[] }).messages);
        expect(bodies.map((m) => m.at(-1)!.content?.startsWith('FINAL TURN') === true)).toEqual([false, true]);
      });
    });

    describe('when the model sends arguments that are not valid JSON', () => {
      it('should return an is_error result to the model and finish', async () => {
        emulator = await startOpenAiEmulator({ script: [{ toolCalls: [{ id: 'bad', name: 'echo', arguments: '{"text": "unterminated' }] }, { text: 'sorry' }] });
        rx = await AgentRx.create({ config: { providers: { local: { baseUrl: emulator.baseUrl } } }, tools: [EchoToolHandler] });
        const result = await rx.run({ prompt: 'go' });
        expect(result.text).toBe('sorry');
        expect(EchoToolHandler.calls).toHaveLength(0);
        const tool = (emulator.requests.at(-1)!.body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === 'tool')!;
        expect(JSON.parse(tool.content)).toMatchObject({ isError: true, error: expect.stringContaining("invalid arguments for tool 'echo'") });
      });
    });
  });
});

describe('LocalAgentProvider connection reuse', () => {
  describe('when several streamed model calls run one after another', () => {
    it('should reuse one keep-alive connection instead of destroying each response', async () => {
      const http = await import('node:http');
      const emulator = await startOpenAiEmulator({ script: [{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'one' }, { text: 'two' }] });
      // Every agent's connections (the client's pool is not necessarily Node's global agent).
      const agent = http.Agent.prototype as unknown as { createConnection: (...a: unknown[]) => unknown };
      const original = agent.createConnection;
      let connections = 0;
      agent.createConnection = function (this: unknown, ...a: unknown[]) {
        connections++;
        return original.apply(this, a);
      };
      const rx = await AgentRx.create({ config: { providers: { local: { baseUrl: emulator.baseUrl } }, logLevel: 'silent' }, tools: [EchoToolHandler] });
      try {
        await rx.run({ prompt: 'first' });
        await rx.run({ prompt: 'second' });
        expect(emulator.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(3);
        expect(connections).toBe(1);
      } finally {
        agent.createConnection = original;
        await rx.stop();
        await emulator.close();
      }
    });
  });
});
