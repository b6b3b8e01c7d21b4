import type { ToolContext, ToolHandler, ToolOutcome } from '../../../src/core/plugin/tool-handler.js';
import { awaitsClient } from '../../../src/core/tools/client-answers.js';
import { ClientCalls, clientToolDeclaration, confirmationEvent, handClientResults } from '../../../src/core/tools/client-tool.js';

const ASK = { name: 'ask_user', description: 'Asks the user.', parameters: { type: 'object', properties: { question: { type: 'string' } } } };

function context(toolUseId: string, signal = new AbortController().signal): ToolContext {
  return { toolUseId, sessionId: 's', idempotencyKey: `s:${toolUseId}`, signal, deadline: Date.now() + 1_000 };
}

/** Calls `handler` as the dispatcher would, with use id `id`. */
function call(handler: ToolHandler, id: string, signal?: AbortSignal): Promise<unknown> {
  return Promise.resolve(handler.handle({ question: 'ok?' }, context(id, signal)));
}

describe('ClientCalls', () => {
  describe('.handlers', () => {
    describe('when called with a declaration', () => {
      it('should give a client-answered handler that says what the client declared, and travels back to the same declaration', () => {
        const [handler] = new ClientCalls().handlers([{ ...ASK, timeoutMs: 5_000 }], 'test');
        expect(awaitsClient(handler)).toBe(true);
        expect(handler).toMatchObject({ name: 'ask_user', description: 'Asks the user.', inputSchema: ASK.parameters, timeoutMs: 5_000, source: 'test' });
        expect(clientToolDeclaration(handler!)).toEqual({ ...ASK, timeoutMs: 5_000 });
      });
    });
  });

  describe('.answer', () => {
    describe('when a call waits, and another is answered', () => {
      it('should resolve the waiting call with the outcome once, and report which ids waited', async () => {
        const calls = new ClientCalls();
        const [handler] = calls.handlers([ASK], 'test');
        const running = call(handler!, 'call_1');
        expect(calls.waiting).toEqual(['call_1']);

        expect(calls.answer('call_2', { content: 'no' })).toBe(false);
        expect(calls.answer('call_1', { content: 'yes' })).toBe(true);
        await expect(running).resolves.toEqual({ content: 'yes' });
        expect(calls.waiting).toEqual([]);
        expect(calls.answer('call_1', { content: 'again' })).toBe(false);
      });
    });

    describe('when the waiting call is aborted first', () => {
      it('should reject the call with the abort reason and no longer hold it', async () => {
        const calls = new ClientCalls();
        const [handler] = calls.handlers([ASK], 'test');
        const ctrl = new AbortController();
        const running = call(handler!, 'call_1', ctrl.signal);
        ctrl.abort(new Error('session ended'));
        await expect(running).rejects.toThrow('session ended');
        expect(calls.has('call_1')).toBe(false);
      });
    });
  });
});

describe('handClientResults', () => {
  describe('when one result names a call that waits and one names none', () => {
    it('should throw invalid_options naming the unknown id, and hand nothing', async () => {
      const calls = new ClientCalls();
      const tools = calls.handlers([ASK], 'test');
      const running = call(tools[0]!, 'call_1');
      expect(() =>
        handClientResults(tools, [
          { toolUseId: 'call_1', content: 'yes' },
          { toolUseId: 'call_x', content: 'no' },
        ]),
      ).toThrow(expect.objectContaining({ code: 'invalid_options', message: expect.stringContaining("'call_x'") }));
      expect(calls.waiting).toEqual(['call_1']);

      handClientResults(tools, [{ toolUseId: 'call_1', content: 'failed', isError: true }]);
      await expect(running).resolves.toEqual<ToolOutcome>({ content: 'failed', isError: true });
    });
  });
});

describe('confirmationEvent', () => {
  describe('when called with a deny and its message', () => {
    it('should give the user.tool_confirmation event', () => {
      expect(confirmationEvent({ toolUseId: 'u1', allow: false, denyMessage: 'not now' })).toEqual({
        type: 'user.tool_confirmation',
        tool_use_id: 'u1',
        result: 'deny',
        deny_message: 'not now',
      });
    });
  });
});
