import { AgentRx } from '../../../../src/agentrx.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../../src/testing/openai-emulator.js';
import { EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';

// The memory store under a whole AgentRx instance: what a finished Local session leaves behind.

describe('the memory store under AgentRx', () => {
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;

  beforeEach(async () => {
    resetFakeTools();
    emulator = await startOpenAiEmulator({
      script: [{ text: 'Echoing.', toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'Done.' }],
    });
  });
  afterEach(async () => {
    await rx?.stop();
    await emulator?.close();
  });

  const create = async (store: Record<string, unknown>): Promise<AgentRx> =>
    AgentRx.create({
      config: { provider: 'local', store, consumers: { terminal: false }, providers: { local: { baseUrl: emulator!.baseUrl, model: 'scripted' } } },
      tools: [EchoToolHandler],
    });

  describe('when a session with a tool call has run, by default', () => {
    it('should keep its record (ledger included) and its log', async () => {
      rx = await create({ type: 'memory' });
      const result = await rx.run({ prompt: 'go' });

      const [record] = await rx.sessionStore.list();
      expect(result).toMatchObject({ terminal: 'end_turn', text: 'Done.' });
      expect(record).toMatchObject({ sessionId: result.sessionId, status: 'completed', ledger: [{ toolUseId: 'c1', state: 'posted' }] });
      const log = await rx.sessionStore.read(result.sessionId!, 0);
      expect(log.at(-1)!.raw.type).toBe('agentrx.run_finished');
    });
  });

  describe("when a session with a tool call has run, with memoryKeep 'none'", () => {
    it('should have run the tool once and keep nothing of the session', async () => {
      rx = await create({ type: 'memory', memoryKeep: 'none' });
      const result = await rx.run({ prompt: 'go' });

      expect(result).toMatchObject({ terminal: 'end_turn', text: 'Done.' });
      expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['a']);
      expect(await rx.sessionStore.list()).toEqual([]);
      expect(await rx.sessionStore.lastSeq(result.sessionId!)).toBe(0);
    });
  });
});
