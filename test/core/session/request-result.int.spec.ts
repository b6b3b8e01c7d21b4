import { AgentRx } from '../../../src/agentrx.js';
import { ScriptedProvider, ev } from '../../../src/testing/scripted-provider.js';
import { EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';

async function create(provider: ScriptedProvider): Promise<AgentRx> {
  return AgentRx.create({
    defaults: false,
    providers: [provider],
    tools: [EchoToolHandler],
    config: { provider: provider.id, logLevel: 'silent', consumers: { terminal: false } },
  });
}

describe('SessionResult of a request', () => {
  let rx: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await rx?.stop();
    rx = undefined;
  });

  describe('when the request takes several tool turns', () => {
    it('should list every turn’s tool uses and texts, with the last turn’s text as the answer', async () => {
      rx = await create(
        new ScriptedProvider({
          mode: 'streaming',
          turns: [
            {
              events: [
                ev.text('a1', 'one '),
                ev.toolUse('u1', 'echo', { text: 'x' }),
                ev.serverToolUse('s1', 'web_search', { q: 'a' }),
                ev.idle('i1', 'requires_action', ['u1']),
              ],
            },
            { events: [ev.text('a2', 'two '), ev.toolUse('u2', 'echo', { text: 'y' }), ev.idle('i2', 'requires_action', ['u2'])] },
            { events: [ev.text('a3', 'three'), ev.idle('i3', 'end_turn')] },
          ],
        }),
      );
      const result = await rx.run({ prompt: 'go' });
      expect(result.customToolUses.map((u) => [u.id, u.input])).toEqual([
        ['u1', { text: 'x' }],
        ['u2', { text: 'y' }],
      ]);
      expect(result.serverToolUses.map((u) => u.id)).toEqual(['s1']);
      expect(result.texts).toEqual(['one ', 'two ', 'three']);
      expect(result.text).toBe('three');
    });
  });

  describe('when a streaming session is resumed without a prompt and the host stays silent', () => {
    it('should end with timeout after timeoutMs, counted from the call', async () => {
      rx = await create(new ScriptedProvider({ mode: 'streaming', turns: [] }));
      const t0 = Date.now();
      await expect(rx.run({ sessionId: 'sess-silent', timeoutMs: 100 })).rejects.toMatchObject({ code: 'timeout', message: expect.stringContaining('100 ms') });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    });
  });
});
