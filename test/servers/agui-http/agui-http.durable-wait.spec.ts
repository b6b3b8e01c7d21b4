import { awaitsClient } from '../../../src/core/tools/client-answers.js';
import { ClientTools } from '../../../src/servers/agui-http/agui-http.client-tools.js';
import { ClientWait } from '../../../src/servers/agui-http/agui-http.client-wait.js';
import { resolveAgUiHttpOptions } from '../../../src/servers/agui-http/agui-http.config.js';
import { confirmationDecision } from '../../../src/servers/agui-http/agui-http.interrupts.js';

const ASK = { name: 'ask_user', description: 'Ask.', parameters: { type: 'object', properties: {} } };

describe('ClientTools (durable waits)', () => {
  describe('.tools', () => {
    it("should give the session tools that wait on the client, with the endpoint's wait time as their timeout", () => {
      const [tool] = new ClientTools([ASK], 123_000).tools;
      expect(awaitsClient(tool)).toBe(true);
      expect(tool).toMatchObject({ name: 'ask_user', timeoutMs: 123_000 });
    });
  });

  describe('.answeredByClient', () => {
    it("should drop the session's echo of a result the client sent through the stored session, once", () => {
      const tools = new ClientTools([ASK], 1_000);
      tools.answeredByClient(['c1']);
      expect(tools.clientAnswered('c1')).toBe(true);
      expect(tools.clientAnswered('c1')).toBe(false);
      expect(tools.clientAnswered('c2')).toBe(false);
    });
  });
});

describe('ClientWait (durable waits)', () => {
  describe('when every frontend call the run ended on gets a result without the client (its wait timed out)', () => {
    it('should end the suspension: the thread no longer waits, and a reconnect is not told it does', () => {
      const wait = new ClientWait('t');
      wait.toolStarted('c1');
      wait.toolStarted('c2');
      expect(wait.waitForTools(['c1', 'c2'])).toEqual({ type: 'success', pendingToolCallIds: ['c1', 'c2'] });
      wait.endedAt(7, { type: 'success', pendingToolCallIds: ['c1', 'c2'] });
      wait.toolAnswered('c1');
      expect(wait.suspended).toBe(true);
      wait.toolAnswered('c2');
      expect(wait.suspended).toBe(false);
      const seen: number[] = [];
      wait.onSuspended((s) => seen.push(s.seq));
      expect(seen).toEqual([]);
    });
  });

  describe('when a tool the suspension does not wait for gets its result', () => {
    it('should keep waiting', () => {
      const wait = new ClientWait('t');
      wait.toolStarted('c1');
      wait.waitForTools(['c1']);
      wait.toolAnswered('server-tool');
      expect(wait.suspended).toBe(true);
    });
  });
});

describe('resolveAgUiHttpOptions (clientWaitMs)', () => {
  it('should default to 10 minutes and refuse less than a second', () => {
    expect(resolveAgUiHttpOptions().clientWaitMs).toBe(600_000);
    expect(resolveAgUiHttpOptions({ clientWaitMs: 5_000 }).clientWaitMs).toBe(5_000);
    expect(() => resolveAgUiHttpOptions({ clientWaitMs: 10 })).toThrow(/clientWaitMs/);
  });
});

describe('confirmationDecision', () => {
  it("should allow only a resolved answer that allows, and deny a dismissed one with the dismissal's message", () => {
    expect(confirmationDecision({ interruptId: 'a', status: 'resolved', payload: { allow: true } })).toEqual({ toolUseId: 'a', allow: true });
    expect(confirmationDecision({ interruptId: 'b', status: 'resolved', payload: { allow: false, denyMessage: 'no' } })).toEqual({
      toolUseId: 'b',
      allow: false,
      denyMessage: 'no',
    });
    expect(confirmationDecision({ interruptId: 'c', status: 'cancelled' })).toMatchObject({
      toolUseId: 'c',
      allow: false,
      denyMessage: expect.stringMatching(/dismissed/),
    });
  });
});
