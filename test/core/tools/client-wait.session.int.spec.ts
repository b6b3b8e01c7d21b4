import { jest } from '@jest/globals';
import { AgentRx } from '../../../src/agentrx.js';
import type { ToolContext } from '../../../src/core/plugin/tool-handler.js';
import type { ClientToolHandler } from '../../../src/core/tools/client-answers.js';
import { ScriptedProvider, ev } from '../../../src/testing/scripted-provider.js';

/** A tool its client answers (as an AG-UI page's frontend tool): each call waits for `answer`. */
function clientTool(timeoutMs: number): ClientToolHandler & { answer(content: string): void; readonly asked: Promise<string> } {
  let answer: (content: string) => void = () => undefined;
  let called: (id: string) => void = () => undefined;
  const asked = new Promise<string>((resolve) => (called = resolve));
  return {
    name: 'ask_user',
    description: 'Asks the user.',
    inputSchema: { type: 'object', properties: { question: { type: 'string' } } },
    awaitsClient: true,
    timeoutMs,
    asked,
    answer: (content) => answer(content),
    handle: (_input: unknown, ctx: ToolContext) =>
      new Promise<string>((resolve, reject) => {
        answer = resolve;
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        called(ctx.toolUseId);
      }),
  };
}

const script = (): ScriptedProvider =>
  new ScriptedProvider({
    turns: [
      { events: [ev.toolUse('u1', 'ask_user', { question: 'ok?' }), ev.idle('i1', 'requires_action', ['u1'])] },
      { events: [ev.text('t2', 'Done.'), ev.idle('i2', 'end_turn')] },
    ],
  });

describe('a session whose tool waits on its client', () => {
  let rx: AgentRx | undefined;
  afterEach(async () => {
    jest.useRealTimers();
    await rx?.stop();
    rx = undefined;
  });

  describe('when the client answers after longer than the run timeout, within the wait time', () => {
    it('should not time the run out while the call waits, and finish with the answer', async () => {
      const tool = clientTool(600_000);
      const provider = script();
      rx = await AgentRx.create({
        defaults: false,
        providers: [provider],
        tools: [tool],
        config: { provider: provider.id, logLevel: 'silent', consumers: { terminal: false }, limits: { runTimeoutMs: 1_000 } },
      });
      jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
      const s = rx.start({ prompt: 'go' });
      let settled = false;
      void s.result.then(
        () => (settled = true),
        () => (settled = true),
      );
      expect(await tool.asked).toBe('u1');
      await jest.advanceTimersByTimeAsync(60_000);
      expect(settled).toBe(false);

      tool.answer('yes');
      await expect(s.result).resolves.toMatchObject({ text: 'Done.' });
      expect(provider.inputs.at(-1)).toMatchObject({ kind: 'resume', results: [expect.objectContaining({ toolUseId: 'u1', content: 'yes' })] });
      s.close();
      await jest.advanceTimersByTimeAsync(1_000);
      await s.closed;
    });
  });

  describe('when nothing waits on the client and the host does not answer', () => {
    it('should time the run out after the run timeout, as before', async () => {
      const provider = new ScriptedProvider({ turns: [{ events: [ev.text('t1', 'thinking'), ev.idle('i1', 'end_turn')], hang: true }] });
      rx = await AgentRx.create({
        defaults: false,
        providers: [provider],
        config: { provider: provider.id, logLevel: 'silent', consumers: { terminal: false }, limits: { runTimeoutMs: 1_000 } },
      });
      jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
      const s = rx.start({ prompt: 'go' });
      const failed = expect(s.result).rejects.toMatchObject({ code: 'timeout' });
      await jest.advanceTimersByTimeAsync(1_000);
      await failed;
    });
  });

  describe("when the client's answers come without a session to resume, or malformed", () => {
    it('should refuse them with invalid_options before anything starts', async () => {
      const provider = script();
      rx = await AgentRx.create({
        defaults: false,
        providers: [provider],
        config: { provider: provider.id, logLevel: 'silent', consumers: { terminal: false } },
      });
      expect(() => rx!.start({ prompt: 'go', clientAnswers: { toolResults: [{ toolUseId: 'u1', content: 'yes' }] } })).toThrow(
        expect.objectContaining({ code: 'invalid_options', message: expect.stringContaining('clientAnswers: needs sessionId') }),
      );
      await expect(rx.placement.open({ sessionId: 'nope', clientAnswers: { toolResults: [{ toolUseId: 'u1', content: 'yes' }] } })).rejects.toMatchObject({
        code: 'invalid_options',
        message: expect.stringMatching(/u1: no tool use waits on the client with that id \(waiting on the client: nothing\)/),
      });
      expect(provider.inputs).toEqual([]);
    });
  });
});
