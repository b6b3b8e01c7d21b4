import { toolConfirmationOf } from '../../../src/core/plugin/host-event.js';

describe('toolConfirmationOf', () => {
  describe("when given the caller's confirmation event", () => {
    it('should read the decision, with the deny message only when it is a string', () => {
      expect(toolConfirmationOf({ type: 'user.tool_confirmation', tool_use_id: 'u1', result: 'allow' })).toEqual({ toolUseId: 'u1', allow: true });
      expect(toolConfirmationOf({ type: 'user.tool_confirmation', tool_use_id: 'u2', result: 'deny', deny_message: 'no' })).toEqual({
        toolUseId: 'u2',
        allow: false,
        denyMessage: 'no',
      });
      expect(toolConfirmationOf({ type: 'user.tool_confirmation', tool_use_id: 'u3', result: 'maybe', deny_message: 3 })).toEqual({
        toolUseId: 'u3',
        allow: false,
      });
    });
  });

  describe('when given any other event', () => {
    it('should return undefined', () => {
      expect(toolConfirmationOf({ type: 'user.message', tool_use_id: 'u1', result: 'allow' })).toBeUndefined();
      expect(toolConfirmationOf({ type: 'user.tool_confirmation', result: 'allow' })).toBeUndefined();
    });
  });
});
