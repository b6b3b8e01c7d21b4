import type { PriorMessage } from '../../../src/core/model.js';
import { NO_RESULT_CONTENT, repairHistory } from '../../../src/servers/agui-http/agui-http.history-repair.js';

const call = (id: string, name = 'lookup'): { id: string; name: string; arguments: string } => ({ id, name, arguments: '{}' });
const noResult = (toolCallId: string): PriorMessage => ({ role: 'tool', toolCallId, content: NO_RESULT_CONTENT });

describe('repairHistory', () => {
  describe('when every call is answered right after its message', () => {
    it('should return the conversation unchanged', () => {
      const history: PriorMessage[] = [
        { role: 'user', content: 'look up a and b' },
        { role: 'assistant', content: '', toolCalls: [call('a'), call('b')] },
        { role: 'tool', toolCallId: 'a', content: 'A' },
        { role: 'tool', toolCallId: 'b', content: 'B' },
        { role: 'assistant', content: 'A and B.' },
      ];
      expect(repairHistory(history)).toEqual(history);
    });
  });

  describe('when a call has no tool message', () => {
    it('should close it with a "no result" tool message after the answered ones, in call order', () => {
      const history: PriorMessage[] = [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'Looking.', toolCalls: [call('a'), call('b'), call('c')] },
        { role: 'tool', toolCallId: 'b', content: 'B' },
        { role: 'user', content: 'never mind' },
      ];
      expect(repairHistory(history)).toEqual([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'Looking.', toolCalls: [call('a'), call('b'), call('c')] },
        noResult('a'),
        { role: 'tool', toolCallId: 'b', content: 'B' },
        noResult('c'),
        { role: 'user', content: 'never mind' },
      ]);
      expect(JSON.parse(NO_RESULT_CONTENT)).toEqual({ error: 'No result was recorded for this tool call.', isError: true });
    });

    it("should leave the last message's calls open when the run brings their results", () => {
      const history: PriorMessage[] = [
        { role: 'assistant', content: '', toolCalls: [call('old')] },
        { role: 'user', content: 'ask me' },
        { role: 'assistant', content: '', toolCalls: [call('ask', 'ask_user')] },
      ];
      expect(repairHistory(history, true)).toEqual([history[0], noResult('old'), history[1], history[2]]);
    });
  });

  describe('when a tool message comes after another message, or twice', () => {
    it('should move it up to its call and leave the second answer out', () => {
      const history: PriorMessage[] = [
        { role: 'assistant', content: '', toolCalls: [call('a')] },
        { role: 'user', content: 'meanwhile' },
        { role: 'tool', toolCallId: 'a', content: 'late A' },
        { role: 'tool', toolCallId: 'a', content: 'A again' },
      ];
      expect(repairHistory(history)).toEqual([history[0], { role: 'tool', toolCallId: 'a', content: 'late A' }, history[1]]);
    });
  });

  describe('when a model used one id for two calls', () => {
    it('should pair the tool messages with those calls in order', () => {
      const history: PriorMessage[] = [
        { role: 'assistant', content: '', toolCalls: [call('x'), call('x')] },
        { role: 'tool', toolCallId: 'x', content: 'first' },
      ];
      expect(repairHistory(history)).toEqual([history[0], history[1], noResult('x')]);
    });
  });
});
