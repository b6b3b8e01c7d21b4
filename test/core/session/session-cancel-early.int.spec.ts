import { AgentRx } from '../../../src/agentrx.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';

describe('a session cancelled before it opened', () => {
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;
  afterEach(async () => {
    await rx?.stop();
    await emulator?.close();
    rx = emulator = undefined;
  });

  it('should reject its result with cancelled, close, let the instance stop, and send nothing to the host', async () => {
    emulator = await startOpenAiEmulator({ script: [{ text: 'never' }] });
    rx = await AgentRx.create({
      config: { provider: 'local', logLevel: 'silent', consumers: { terminal: false }, providers: { local: { baseUrl: emulator.baseUrl, model: 'scripted' } } },
    });
    const s = rx.start({ prompt: 'hello' });
    s.cancel();
    await expect(s.result).rejects.toMatchObject({ code: 'cancelled' });
    await s.closed;
    await rx.stop();
    rx = undefined;
    expect(emulator.requests.filter((r) => r.completion !== undefined)).toHaveLength(0);
  });
});
