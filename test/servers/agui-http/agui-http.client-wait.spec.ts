import { ClientWait } from '../../../src/servers/agui-http/agui-http.client-wait.js';
import type { AgUiRunRequest } from '../../../src/servers/agui-http/agui-http.input.js';
import type { ThreadSuspension } from '../../../src/servers/agui-http/agui-http.thread-view.js';

const request = (over: Partial<AgUiRunRequest>): AgUiRunRequest => ({ resume: [], toolResults: [], ...over }) as unknown as AgUiRunRequest;

describe('ClientWait', () => {
  describe('when a server tool still runs beside a frontend tool call', () => {
    it('should suspend only once every running tool waits on the client', () => {
      const wait = new ClientWait('t');
      wait.toolStarted('server-1');
      wait.toolStarted('front-1');
      expect(wait.waitForTools(['front-1'])).toBeUndefined();
      expect(wait.suspended).toBe(false);
      wait.toolAnswered('server-1');
      expect(wait.waitForTools(['front-1'])).toEqual({ type: 'success', pendingToolCallIds: ['front-1'] });
      expect(wait.suspended).toBe(true);
      // Already suspended: no second outcome.
      expect(wait.waitForTools(['front-1'])).toBeUndefined();
    });
  });

  describe("when a model turn's tool uses are known before any of them started", () => {
    it('should count each as running from the turn end, and drop what an earlier batch left unanswered', () => {
      const wait = new ClientWait('t');
      wait.toolStarted('stale-1');
      wait.turnEnded(['front-1', 'server-1']);
      wait.toolStarted('front-1');
      expect(wait.waitForTools(['front-1'])).toBeUndefined();
      wait.toolAnswered('server-1');
      expect(wait.waitForTools(['front-1'])).toEqual({ type: 'success', pendingToolCallIds: ['front-1'] });
    });
  });

  describe('when a reader asks before and after the run ended waiting', () => {
    it('should tell each where it ended, once, and forget it when the client answers', () => {
      const wait = new ClientWait('t');
      const early: ThreadSuspension[] = [];
      wait.onSuspended((s) => early.push(s));
      const outcome = wait.waitForConfirmations([{ id: 'u1', name: 'deploy', input: {} }]);
      expect(outcome).toMatchObject({ type: 'interrupt', interrupts: [expect.objectContaining({ id: 'u1' })] });
      wait.endedAt(7, outcome);
      const late: ThreadSuspension[] = [];
      wait.onSuspended((s) => late.push(s));
      expect(early).toEqual([{ seq: 7, outcome }]);
      expect(late).toEqual([{ seq: 7, outcome }]);

      const posted: Record<string, unknown>[][] = [];
      const answer = wait.answer(
        request({ resume: [{ interruptId: 'u1', status: 'resolved', payload: { allow: true } }] as never }),
        undefined,
        (events) => posted.push(events),
        () => undefined,
      );
      expect(wait.suspended).toBe(false);
      answer();
      expect(posted).toHaveLength(1);
      const after: ThreadSuspension[] = [];
      wait.onSuspended((s) => after.push(s));
      expect(after).toEqual([]);
    });
  });

  describe('when the answer is of the other kind', () => {
    it('should refuse tool results for interrupts with invalid_options, and keep waiting', () => {
      const wait = new ClientWait('t');
      wait.waitForConfirmations([{ id: 'u1', name: 'deploy', input: {} }]);
      expect(() =>
        wait.answer(
          request({ toolResults: [{ toolCallId: 'x', content: 'y' }] as never }),
          undefined,
          () => undefined,
          () => undefined,
        ),
      ).toThrow(expect.objectContaining({ code: 'invalid_options', message: expect.stringContaining('waits for answers to its interrupts (u1)') }));
      expect(wait.suspended).toBe(true);
    });
  });
});
