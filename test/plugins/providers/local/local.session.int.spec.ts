import { AgentRx } from '../../../../src/agentrx.js';
import { ContainerModule } from '../../../../src/core/util/inversify.js';
import { MemorySessionStore } from '../../../../src/core/store/memory/memory-session-store.js';
import { SessionStore } from '../../../../src/core/store/session-store.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../../src/testing/openai-emulator.js';
import { RecordingConsumer } from '../../../../src/testing/recording-consumer.js';
import { AddToolHandler, EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';
import { tempDirSync } from '../../../support/temp-dir.js';

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
            {
              text: 'Turn one.',
              toolCalls: [
                { id: 'c1', name: 'echo', arguments: { text: 'a' } },
                { id: 'c2', name: 'add', arguments: { a: 1, b: 2 } },
              ],
              usage: { prompt_tokens: 10, completion_tokens: 3 },
            },
            {
              toolCalls: [
                { id: 'c3', name: 'echo', arguments: { text: 'b' } },
                { id: 'c4', name: 'add', arguments: { a: 3, b: 4 } },
              ],
              usage: { prompt_tokens: 20, completion_tokens: 3 },
            },
            {
              toolCalls: [
                { id: 'c5', name: 'echo', arguments: { text: 'c' } },
                { id: 'c6', name: 'add', arguments: { a: 5, b: 6 } },
              ],
              usage: { prompt_tokens: 30, completion_tokens: 3 },
            },
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
        expect(transcript.map((m) => m.role)).toEqual([
          'system',
          'user',
          'assistant',
          'tool',
          'tool',
          'assistant',
          'tool',
          'tool',
          'assistant',
          'tool',
          'tool',
          'assistant',
        ]);
        expect(rec.text).toBe('Turn one.All done.');
        expect(rec.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => (e as { toolCallId: string }).toolCallId)).toEqual([
          'c1',
          'c2',
          'c3',
          'c4',
          'c5',
          'c6',
        ]);
      });
    });

    describe('when the session has a turn limit and the provider sets none', () => {
      it("should put the final-turn directive on the call that reaches the session's maxTurns", async () => {
        emulator = await startOpenAiEmulator({
          script: [{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'Wrapping up.' }],
        });
        rx = await AgentRx.create({
          config: { provider: 'local', providers: { local: { baseUrl: emulator.baseUrl, model: 'scripted' } }, consumers: { terminal: false } },
          tools: [EchoToolHandler],
        });
        const result = await rx.run({ prompt: 'go', maxTurns: 2 });

        expect(result).toMatchObject({ terminal: 'end_turn', turns: 2, text: 'Wrapping up.' });
        const bodies = emulator.requests
          .filter((r) => r.path.endsWith('/chat/completions'))
          .map((r) => (r.body as { messages: { role: string; content?: string }[] }).messages);
        expect(bodies.map((m) => m.at(-1)!.content?.startsWith('FINAL TURN') === true)).toEqual([false, true]);
      });
    });

    describe('when the model sends tool arguments nested 5,000 levels deep, and repeats the call', () => {
      it('should answer both with is_error results the model sees and finish the run, streamed and not, with a file store', async () => {
        const deep = `{"text":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`;
        for (const stream of [true, false]) {
          resetFakeTools();
          emulator = await startOpenAiEmulator({
            script: [
              { toolCalls: [{ id: 'deep1', name: 'echo', arguments: deep }] },
              { toolCalls: [{ id: 'deep2', name: 'echo', arguments: deep }] },
              { text: 'sorry' },
            ],
          });
          const rec = new RecordingConsumer();
          // The file store serializes every event and ledger entry: nothing deep may reach it.
          const dir = tempDirSync('agentrx-local-deep-');
          rx = await AgentRx.create({
            config: { logLevel: 'silent', store: { type: 'file', dir }, providers: { local: { baseUrl: emulator.baseUrl, stream } } },
            tools: [EchoToolHandler],
            consumers: [rec],
          });
          const result = await rx.run({ prompt: 'go' }).finally(() => rx!.stop());

          expect([stream, result.terminal, result.text]).toEqual([stream, 'end_turn', 'sorry']);
          expect(EchoToolHandler.calls).toHaveLength(0);
          const tools = (emulator.requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; content: string }[] }).messages.filter(
            (m) => m.role === 'tool',
          );
          expect(tools.map((m) => m.tool_call_id)).toEqual(['deep1', 'deep2']);
          // The first is refused as bad input; the repeat is caught by the duplicate guard (its key is built iteratively).
          expect(JSON.parse(tools[0]!.content)).toMatchObject({ isError: true, error: expect.stringContaining('nested deeper than 64 levels') });
          expect(JSON.parse(tools[1]!.content)).toMatchObject({ duplicate: true });
          // Streamed, the repeat's arguments went out as it streamed: its duplicate notice closes it as its result.
          expect(rec.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => (e as { toolCallId: string }).toolCallId)).toEqual(
            stream ? ['deep1', 'deep2'] : ['deep1'],
          );
          rx = undefined;
          await emulator.close();
        }
      });
    });

    describe('when the server reuses a tool-call id in a later turn', () => {
      it('should run each call once with its own arguments and answer each with its own result', async () => {
        emulator = await startOpenAiEmulator({
          script: [
            { toolCalls: [{ id: 'call_0', name: 'echo', arguments: { text: 'first' } }] },
            { toolCalls: [{ id: 'call_0', name: 'echo', arguments: { text: 'second' } }] },
            { text: 'Done.' },
          ],
        });
        const rec = new RecordingConsumer();
        rx = await AgentRx.create({
          config: { logLevel: 'silent', providers: { local: { baseUrl: emulator.baseUrl } } },
          tools: [EchoToolHandler],
          consumers: [rec],
        });
        const result = await rx.run({ prompt: 'go' });

        expect(result.text).toBe('Done.');
        expect(EchoToolHandler.calls.map((c) => [c.input.text, c.ctx.toolUseId])).toEqual([
          ['first', 'call_0'],
          ['second', 'call_0#2.0'],
        ]);
        const last = (emulator.requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; content: string }[] }).messages;
        expect(last.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual([
          ['call_0', 'FIRST'],
          ['call_0', 'SECOND'],
        ]);
        expect(
          rec.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => [(e as { toolCallId: string }).toolCallId, (e as { content: string }).content]),
        ).toEqual([
          ['call_0', 'FIRST'],
          ['call_0#2.0', 'SECOND'],
        ]);
      });
    });

    describe('when the server gives two calls of one batch the same id, with different arguments', () => {
      it("should run both, each once with its own arguments, and pair the answers with the model's id in call order", async () => {
        emulator = await startOpenAiEmulator({
          script: [
            {
              toolCalls: [
                { id: 'same', name: 'echo', arguments: { text: 'left' } },
                { id: 'same', name: 'echo', arguments: { text: 'right' } },
              ],
            },
            { text: 'Both done.' },
          ],
        });
        rx = await AgentRx.create({ config: { logLevel: 'silent', providers: { local: { baseUrl: emulator.baseUrl } } }, tools: [EchoToolHandler] });
        const result = await rx.run({ prompt: 'go' });

        expect(result.text).toBe('Both done.');
        expect(EchoToolHandler.calls.map((c) => [c.input.text, c.ctx.toolUseId]).sort()).toEqual([
          ['left', 'same'],
          ['right', 'same#1.1'],
        ]);
        const last = (emulator.requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; content: string }[] }).messages;
        expect(last.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual([
          ['same', 'LEFT'],
          ['same', 'RIGHT'],
        ]);
      });
    });

    describe('when a run stops with a reused id unanswered and another instance resumes it', () => {
      it("should derive the same tool-use id, replay that call's own recorded result and not run it again", async () => {
        emulator = await startOpenAiEmulator({
          script: [
            { toolCalls: [{ id: 'call_0', name: 'echo', arguments: { text: 'first' } }] },
            { toolCalls: [{ id: 'call_0', name: 'echo', arguments: { text: 'second' } }] },
            { text: 'Resumed.' },
            { text: 'Went on.' },
          ],
          // The model call after the second tool fails for good: its result is in the ledger, not in the transcript.
          faults: { 2: { kind: 'status', status: 400 } },
        });
        const store = new MemorySessionStore();
        const make = (): Promise<AgentRx> =>
          AgentRx.create({
            modules: [new ContainerModule((options) => void options.bind(SessionStore).toConstantValue(store))],
            config: { logLevel: 'silent', consumers: { terminal: false }, providers: { local: { baseUrl: emulator.baseUrl, maxRetries: 0 } } },
            tools: [EchoToolHandler],
          });
        const first = await make();
        rx = first;
        const live = first.start({ prompt: 'go' });
        await expect(live.result).rejects.toMatchObject({ code: 'http_error' });
        const sessionId = live.sessionId!;
        live.close();
        await first.stop();
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['first', 'second']);
        expect((await store.load(sessionId))!.ledger.map((e) => [e.toolUseId, e.result?.content])).toEqual([
          ['call_0', 'FIRST'],
          ['call_0#2.0', 'SECOND'],
        ]);

        rx = await make();
        const result = await rx.run({ sessionId, prompt: 'go on' });

        // The redrive answers the owed call first, then the prompt is sent.
        expect(result.text).toBe('Went on.');
        expect(EchoToolHandler.calls).toHaveLength(2);
        const resumed = (emulator.requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; content: string }[] }).messages;
        expect(resumed.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual([
          ['call_0', 'FIRST'],
          ['call_0', 'SECOND'],
        ]);
      });
    });

    describe('when the model sends arguments that are not valid JSON', () => {
      it('should return an is_error result to the model and finish', async () => {
        emulator = await startOpenAiEmulator({
          script: [{ toolCalls: [{ id: 'bad', name: 'echo', arguments: '{"text": "unterminated' }] }, { text: 'sorry' }],
        });
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
      const emulator = await startOpenAiEmulator({
        script: [{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'one' }, { text: 'two' }],
      });
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
