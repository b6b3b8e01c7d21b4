import { ChunkAccumulator, type WireMap } from '../../../../src/plugins/providers/local/chat-stream.js';
import { LocalCallIds } from '../../../../src/plugins/providers/local/local-call-ids.js';
import { LocalStreamCalls, type LocalToolCallDelta } from '../../../../src/plugins/providers/local/local-stream-calls.js';

/** A `chat.completion.chunk` with these tool-call deltas. */
function chunk(toolCalls: WireMap[], id = 'chatcmpl-1'): WireMap {
  return { id, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: null }] };
}

/** Feeds chunks through an accumulator and the stream namer, as the provider does; returns every named fragment. */
function stream(callIds: LocalCallIds, chunks: WireMap[]): { deltas: LocalToolCallDelta[]; acc: ChunkAccumulator } {
  const acc = new ChunkAccumulator();
  const calls = new LocalStreamCalls(callIds);
  const deltas: LocalToolCallDelta[] = [];
  for (const c of chunks) deltas.push(...(calls.deltas(c, acc.add(c)) ?? []));
  return { deltas, acc };
}

const history = (...assistantCallIds: string[][]): WireMap[] =>
  assistantCallIds.map((ids) => ({
    role: 'assistant',
    content: null,
    tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
  }));

describe('LocalStreamCalls', () => {
  describe('.deltas', () => {
    describe('when a call streams with its id and name on its first fragment', () => {
      it('should name every fragment with the call id, the name only on the first, the chunk id as parent, and skip later empty ones', () => {
        const { deltas } = stream(new LocalCallIds(), [
          chunk([{ index: 0, id: 'c1', type: 'function', function: { name: 'echo', arguments: '' } }]),
          chunk([{ index: 0, function: { arguments: '{"text":' } }]),
          chunk([{ index: 0, function: { arguments: '' } }]),
          chunk([{ index: 0, function: { arguments: '"x"}' } }]),
        ]);
        expect(deltas).toEqual([
          { toolUseId: 'c1', name: 'echo', argsDelta: '', parentMessageId: 'chatcmpl-1' },
          { toolUseId: 'c1', argsDelta: '{"text":', parentMessageId: 'chatcmpl-1' },
          { toolUseId: 'c1', argsDelta: '"x"}', parentMessageId: 'chatcmpl-1' },
        ]);
      });
    });

    describe('when the model reuses ids the session already used, and within the answer', () => {
      it('should name the calls exactly as the turn end will (LocalCallIds.sync)', () => {
        const before = history(['dup'], ['x']);
        const streaming = LocalCallIds.fromHistory(before);
        const { deltas, acc } = stream(streaming, [
          chunk([{ index: 0, id: 'dup', function: { name: 'echo', arguments: '{}' } }]),
          chunk([{ index: 1, id: 'x', function: { name: 'echo', arguments: '{}' } }]),
          chunk([{ index: 2, id: 'dup', function: { name: 'echo', arguments: '{}' } }]),
        ]);
        const answered = LocalCallIds.fromHistory(before).sync([...before, acc.result(() => 'fresh').message]);
        expect(answered).toEqual(['dup#3.0', 'x#3.1', 'dup#3.2']);
        expect([...new Set(deltas.map((d) => d.toolUseId))]).toEqual(answered);
        // Previewing takes nothing: the registry still gives the same ids afterwards.
        expect(streaming.sync([...before, acc.result(() => 'fresh').message])).toEqual(answered);
      });
    });

    describe("when a call's position or id is not settled at its first fragment", () => {
      it('should not stream it (the turn end announces it whole), and still stream the calls that are settled', () => {
        const { deltas } = stream(new LocalCallIds(), [
          // Index 1 before index 0: its position is not settled yet.
          chunk([{ index: 1, id: 'late', function: { name: 'echo', arguments: '{"a":' } }]),
          chunk([{ index: 0, id: 'early', function: { name: 'echo', arguments: '{}' } }]),
          chunk([{ index: 1, function: { arguments: '1}' } }]),
          // Index 3 with no index 2: a gap.
          chunk([{ index: 3, id: 'gap', function: { name: 'echo', arguments: '{}' } }]),
          // No id on the first fragment (the accumulator would invent one at the end).
          chunk([{ index: 2, function: { name: 'echo', arguments: '{' } }]),
          chunk([{ index: 2, id: 'named-late', function: { arguments: '}' } }]),
          // No name on the first fragment.
          chunk([{ index: 4, id: 'nameless', function: { arguments: '{}' } }]),
        ]);
        expect([...new Set(deltas.map((d) => d.toolUseId))]).toEqual(['early']);
      });
    });
  });
});

describe('LocalCallIds', () => {
  describe('.preview', () => {
    describe("when called for the next message's calls", () => {
      it('should give the ids sync will give, without taking them', () => {
        const before = history(['a', 'b'], ['a']);
        const ids = LocalCallIds.fromHistory(before);
        expect(ids.preview(['a', 'c', 'c'])).toEqual(['a#3.0', 'c', 'c#3.2']);
        expect(ids.preview(['a', 'c', 'c'])).toEqual(['a#3.0', 'c', 'c#3.2']);
        expect(ids.sync([...before, ...history(['a', 'c', 'c'])])).toEqual(['a#3.0', 'c', 'c#3.2']);
      });
    });
  });
});
