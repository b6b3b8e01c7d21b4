import { confirmationAnswers, confirmationInterrupts } from '../../../src/servers/agui-http/agui-http.interrupts.js';
import type { ToolUse } from '../../../src/core/model.js';

const deploy: ToolUse = { id: 'u1', name: 'deploy', input: { env: 'prod' } };
const wipe: ToolUse = { id: 'u2', name: 'wipe', input: {} };
const waiting = new Map([
  [deploy.id, deploy],
  [wipe.id, wipe],
]);

describe('confirmationInterrupts', () => {
  it('should ask one interrupt per tool use, named by its id, with the answer it expects', () => {
    expect(confirmationInterrupts([deploy])).toEqual([
      {
        id: 'u1',
        reason: 'tool_confirmation',
        message: `Allow the agent to run 'deploy' with {"env":"prod"}?`,
        toolCallId: 'u1',
        responseSchema: expect.objectContaining({ required: ['allow'] }),
      },
    ]);
  });
});

describe('confirmationAnswers', () => {
  describe('when every waiting interrupt is answered, in any of the accepted forms', () => {
    it('should allow only a resolved true or { allow: true }, and pass a deny message or a dismissal on', () => {
      expect(
        confirmationAnswers('t', waiting, [
          { interruptId: 'u1', status: 'resolved', payload: true },
          { interruptId: 'u2', status: 'resolved', payload: { allow: false, denyMessage: 'not today' } },
        ]),
      ).toEqual([
        { type: 'user.tool_confirmation', tool_use_id: 'u1', result: 'allow' },
        { type: 'user.tool_confirmation', tool_use_id: 'u2', result: 'deny', deny_message: 'not today' },
      ]);
      expect(
        confirmationAnswers('t', waiting, [
          { interruptId: 'u1', status: 'cancelled', payload: { allow: true } },
          { interruptId: 'u2', status: 'resolved', payload: 'yes' },
        ]),
      ).toEqual([
        { type: 'user.tool_confirmation', tool_use_id: 'u1', result: 'deny', deny_message: 'the user dismissed the request to run this tool' },
        { type: 'user.tool_confirmation', tool_use_id: 'u2', result: 'deny' },
      ]);
    });
  });

  describe('when the entries do not answer exactly what waits', () => {
    it('should refuse an unknown id and a missing answer with invalid_options naming them', () => {
      expect(() => confirmationAnswers('t', waiting, [{ interruptId: 'u9', status: 'resolved' }])).toThrow(
        expect.objectContaining({ code: 'invalid_options', message: 'resume: u9 is not an interrupt thread t waits for (waiting: u1, u2)' }),
      );
      expect(() => confirmationAnswers('t', waiting, [{ interruptId: 'u1', status: 'resolved', payload: true }])).toThrow(
        expect.objectContaining({ code: 'invalid_options', message: 'resume: every pending interrupt needs an answer; missing u2' }),
      );
    });
  });
});
