import type { ToolUse } from '../../../src/core/model.js';
import type { RecoveryEvent } from '../../../src/core/session/host-event-drafts.js';
import { awaitingConfirmation, pendingToolUses } from '../../../src/core/session/host-history.js';

const use = (id: string): ToolUse => ({ id, name: 'echo', input: {} });
const caller = (id: string): RecoveryEvent => ({ kind: 'tool_use', runBy: 'caller', use: use(id) });
const host = (id: string): RecoveryEvent => ({ kind: 'tool_use', runBy: 'host', use: use(id) });

describe('pendingToolUses', () => {
  describe('when turn ends name some uses and results answer some', () => {
    it('should return the named, unanswered caller uses in call order, each once', () => {
      const history: RecoveryEvent[] = [
        caller('a'),
        caller('b'),
        caller('c'),
        caller('a'),
        host('h'),
        { kind: 'tool_answered', toolUseId: 'b', by: 'result' },
        { kind: 'turn_end', requiresAction: { toolUseIds: ['c', 'b', 'a', 'h'] } },
      ];
      expect(pendingToolUses(history).map((u) => u.id)).toEqual(['a', 'c']);
    });
  });

  describe('when a requires_action turn end names no ids', () => {
    it('should take it as naming every use before it, not those after', () => {
      const history: RecoveryEvent[] = [caller('a'), { kind: 'turn_end', requiresAction: {} }, caller('b')];
      expect(pendingToolUses(history).map((u) => u.id)).toEqual(['a']);
    });
  });

  describe('when no turn end asks for action', () => {
    it('should return nothing (a use no turn asked for is not answered)', () => {
      expect(pendingToolUses([caller('a'), { kind: 'turn_end' }])).toEqual([]);
    });
  });
});

describe('awaitingConfirmation', () => {
  describe('when some named host-run uses were confirmed', () => {
    it('should return the unconfirmed ones in the named order, each once, never a caller use', () => {
      const history: RecoveryEvent[] = [
        host('h1'),
        host('h2'),
        caller('c1'),
        { kind: 'tool_answered', toolUseId: 'h1', by: 'confirmation' },
        { kind: 'tool_answered', toolUseId: 'h2', by: 'result' },
      ];
      expect(awaitingConfirmation(history, ['c1', 'h2', 'h1', 'h2', 'ghost']).map((u) => u.id)).toEqual(['h2']);
    });
  });
});
