import { AgentRx } from '../../../src/agentrx.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server.js';

type Message = { role: string; content?: string | null; tool_call_id?: string };

describeWithRedis('store: { type: "redis" } through AgentRx', () => {
  let server: RedisServer;
  let emu: OpenAiEmulator | undefined;
  const instances: AgentRx[] = [];
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    for (const rx of instances.splice(0)) await rx.stop();
    await emu?.close();
    emu = undefined;
  });

  const instance = (keyPrefix: string): Promise<AgentRx> =>
    AgentRx.create({
      tools: [EchoToolHandler],
      config: {
        provider: 'local',
        logLevel: 'silent',
        consumers: { terminal: false },
        store: { type: 'redis', url: server.url, keyPrefix },
        providers: { local: { baseUrl: emu!.baseUrl, model: 'scripted', maxRetries: 0 } },
      },
    });

  describe('when a Local session with a tool call is resumed by another instance', () => {
    it('should give the model every earlier message, run the tool once and number the log without a gap', async () => {
      emu = await startOpenAiEmulator({
        script: [{ toolCalls: [{ id: 'call_1', name: 'echo', arguments: { text: 'ada' } }] }, { text: 'Done.' }, { text: 'Your name is Ada.' }],
      });
      const prefix = `int-${Date.now()}:`;
      const first = await instance(prefix);
      instances.push(first);
      const r1 = await first.run({ prompt: 'My name is Ada; echo it.' });
      await first.stop();

      const second = await instance(prefix);
      instances.push(second);
      const r2 = await second.run({ sessionId: r1.sessionId, prompt: 'What is my name?' });
      expect(r2.text).toBe('Your name is Ada.');
      const last = emu.requests.filter((r) => r.completion !== undefined).at(-1)!;
      const messages = (last.body as { messages: Message[] }).messages;
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
      expect(EchoToolHandler.calls).toHaveLength(1);
      const log = await second.sessionStore.read(r1.sessionId!, 0, 10_000);
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
      expect(await second.sessionStore.load(r1.sessionId!)).toMatchObject({ status: 'completed', provider: 'local' });
    });
  });

  describe('when the config is wrong', () => {
    it('should list a missing url and a distributed runtime without redis in one invalid_config', async () => {
      await expect(AgentRx.create({ config: { store: { type: 'redis' }, runtime: { mode: 'distributed' } } })).rejects.toMatchObject({
        code: 'invalid_config',
        message: expect.stringContaining('store.url'),
      });
      await expect(AgentRx.create({ config: { runtime: { mode: 'distributed' } } })).rejects.toMatchObject({
        code: 'invalid_config',
        message: expect.stringContaining("needs store.type 'redis'"),
      });
    });

    it('should never show the password of a redis URL', async () => {
      const err = await AgentRx.create({ config: { store: { type: 'redis', url: 'redis://user:hunter2@127.0.0.1:1/0 bad' } } }).catch((e: unknown) => e);
      expect(String((err as Error).message)).not.toContain('hunter2');
    });
  });
});
