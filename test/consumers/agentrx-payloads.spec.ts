import { hostToolResultOf, isHostToolResultEvent, isToolResultEvent, runOutcomeOf, toolResultOf, turnSnapshotOf } from '../../src/consumers/agentrx-payloads.js';
import type { ToolCallResultEvent } from '../../src/core/events/agui-event.js';
import type { HostToolResultEvent, ToolResultEvent } from '../../src/core/events/session-event.js';

const toolResult: ToolResultEvent = {
  type: 'agentrx.tool_result',
  toolUse: { id: 't1', name: 'lookup', input: { q: 'x' } },
  result: { toolUseId: 't1', content: 'boom', isError: true },
  replayed: true,
  durationMs: 42,
};
const resultEvent = (rawEvent?: unknown): ToolCallResultEvent => ({ type: 'TOOL_CALL_RESULT', messageId: 't1:result', toolCallId: 't1', content: 'boom', role: 'tool', ...(rawEvent !== undefined ? { rawEvent } : {}) });

describe('toolResultOf', () => {
  describe('when the TOOL_CALL_RESULT carries the verbatim agentrx.tool_result', () => {
    it('should return it, typed', () => {
      const raw = toolResultOf(resultEvent(toolResult));
      expect(raw).toBe(toolResult);
      expect([raw?.toolUse.name, raw?.result.isError, raw?.replayed, raw?.durationMs]).toEqual(['lookup', true, true, 42]);
    });
  });

  describe('when it carries nothing, another event, or a partial one', () => {
    it('should return undefined', () => {
      const { result: _result, ...withoutResult } = toolResult;
      const cases: unknown[] = [
        undefined,
        { type: 'agent.tool_result', tool_use_id: 't1' },
        withoutResult,
        { ...toolResult, result: { toolUseId: 't1', content: 'boom', isError: 'yes' } },
        { ...toolResult, toolUse: { id: 't1', name: 'lookup' } },
        { ...toolResult, durationMs: '42' },
        'agentrx.tool_result',
      ];
      expect(cases.map((raw) => toolResultOf(resultEvent(raw)))).toEqual(cases.map(() => undefined));
      expect(cases.some(isToolResultEvent)).toBe(false);
    });
  });
});

describe('hostToolResultOf', () => {
  const hostResult: HostToolResultEvent = { type: 'agentrx.host_tool_result', toolUse: { id: 't1' }, result: { content: 'boom', isError: true } };

  describe('when the TOOL_CALL_RESULT carries the verbatim agentrx.host_tool_result', () => {
    it('should return it, typed', () => {
      expect(hostToolResultOf(resultEvent(hostResult))?.result.isError).toBe(true);
      expect(hostToolResultOf(resultEvent({ ...hostResult, toolUse: { id: 't1', name: 'web_search' } }))?.toolUse.name).toBe('web_search');
    });
  });

  describe('when it carries nothing, a local result, or a partial one', () => {
    it('should return undefined', () => {
      const cases: unknown[] = [
        undefined,
        toolResult,
        { ...hostResult, result: { content: 'boom' } },
        { ...hostResult, toolUse: { id: 't1', name: 7 } },
        { ...hostResult, toolUse: 't1' },
      ];
      expect(cases.map((raw) => hostToolResultOf(resultEvent(raw)))).toEqual(cases.map(() => undefined));
      expect(cases.some(isHostToolResultEvent)).toBe(false);
      expect(toolResultOf(resultEvent(hostResult))).toBeUndefined();
    });
  });
});

describe('runOutcomeOf', () => {
  describe('when RUN_FINISHED.result is what toAgUi builds', () => {
    it('should return its fields', () => {
      const result = { terminal: 'end_turn', stopReason: { type: 'end_turn' }, turns: 2, usage: { inputTokens: 30, outputTokens: 12 } };
      expect(runOutcomeOf({ type: 'RUN_FINISHED', threadId: 't', runId: 'r', result })).toEqual(result);
    });
  });

  describe('when fields are missing or malformed', () => {
    it('should return only the well-formed ones', () => {
      expect(runOutcomeOf({ type: 'RUN_FINISHED', threadId: 't', runId: 'r' })).toEqual({});
      expect(runOutcomeOf({ type: 'RUN_FINISHED', threadId: 't', runId: 'r', result: { terminal: 3, turns: '2', usage: { inputTokens: -1, outputTokens: 2 }, stopReason: 'stop' } })).toEqual({ stopReason: 'stop' });
    });
  });
});

describe('turnSnapshotOf', () => {
  describe('when the turn end\'s CUSTOM value is what toAgUi builds', () => {
    it('should return its fields', () => {
      const snapshot = { turn: 3, terminal: 'requires_action', stopReason: 'tool_use', usage: { inputTokens: 5, outputTokens: 1 } };
      expect(turnSnapshotOf({ type: 'CUSTOM', name: 'agentrx.turn_end', value: snapshot })).toEqual(snapshot);
    });
  });

  describe('when fields are missing or malformed', () => {
    it('should return only the well-formed ones', () => {
      expect(turnSnapshotOf({ type: 'CUSTOM', name: 'agentrx.turn_end', value: null })).toEqual({});
      expect(turnSnapshotOf({ type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn: 0, terminal: 'end_turn', usage: { inputTokens: 1, outputTokens: Infinity } } })).toEqual({ terminal: 'end_turn' });
      expect(turnSnapshotOf({ type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn: 1.5 } })).toEqual({});
    });
  });
});
