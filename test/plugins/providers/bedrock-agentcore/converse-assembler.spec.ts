import fc from 'fast-check';
import type { RawEvent } from '../../../../src/core/model.js';
import { ConverseAssembler, decodeToolUse } from '../../../../src/plugins/providers/bedrock-agentcore/converse-assembler.js';

const start = (index: number, toolUseId: string, name: string, type?: string): RawEvent => ({
  contentBlockStart: { contentBlockIndex: index, start: { toolUse: { toolUseId, name, ...(type ? { type } : {}) } } },
});
const input = (index: number, fragment: string): RawEvent => ({ contentBlockDelta: { contentBlockIndex: index, delta: { toolUse: { input: fragment } } } });
const text = (t: string, index = 0): RawEvent => ({ contentBlockDelta: { contentBlockIndex: index, delta: { text: t } } });
const stop = (index: number): RawEvent => ({ contentBlockStop: { contentBlockIndex: index } });

function fold(events: readonly RawEvent[]): ConverseAssembler {
  const a = new ConverseAssembler();
  for (const e of events) a.add(e);
  return a;
}

describe(ConverseAssembler.name, () => {
  describe('.add', () => {
    describe('when a contentBlockIndex is reused for a new toolUseId', () => {
      it('should open a new block and route later deltas to it', () => {
        const a = fold([
          start(0, 'A', 'echo'),
          input(0, '{"text":'),
          input(0, '"a"}'),
          stop(0),
          start(0, 'B', 'add'),
          input(0, '{"a":1,'),
          input(0, '"b":2}'),
          stop(0),
          { messageStop: { stopReason: 'tool_use' } },
        ]);
        expect(a.customToolUses()).toEqual([
          { id: 'A', name: 'echo', input: { text: 'a' } },
          { id: 'B', name: 'add', input: { a: 1, b: 2 } },
        ]);
      });
    });

    describe('when two blocks interleave their deltas on different indices', () => {
      it('should join each block from its own fragments', () => {
        const a = fold([start(1, 'A', 'echo'), start(2, 'B', 'echo'), input(2, '{"text"'), input(1, '{"text"'), input(1, ':"one"}'), input(2, ':"two"}')]);
        expect(a.customToolUses().map((u) => u.input)).toEqual([{ text: 'one' }, { text: 'two' }]);
      });
    });

    describe('when the same toolUseId is started again', () => {
      it('should collapse it into one block, in first-seen order', () => {
        const a = fold([
          start(0, 'A', 'echo'),
          input(0, '{"text":"x"'),
          start(1, 'B', 'echo'),
          input(1, '{}'),
          start(2, 'A', 'echo'),
          input(2, '{"text":"y"}'),
        ]);
        expect(a.customToolUses()).toEqual([
          { id: 'A', name: 'echo', input: { text: 'y' } },
          { id: 'B', name: 'echo', input: {} },
        ]);
      });
    });

    describe('when the input is empty, invalid JSON, or not an object', () => {
      it('should give {} for empty input and inputError otherwise', () => {
        const a = fold([start(0, 'E', 't'), start(1, 'I', 't'), input(1, '{"x":'), start(2, 'N', 't'), input(2, '[1,2]')]);
        const [empty, invalid, array] = a.customToolUses();
        expect(empty).toEqual({ id: 'E', name: 't', input: {} });
        expect(invalid).toMatchObject({ id: 'I', input: {}, inputError: expect.stringContaining('not valid JSON') });
        expect(array).toMatchObject({ id: 'N', input: {}, inputError: 'Tool input must be a JSON object, got an array.' });
      });
    });

    describe('when a tool use ran on the harness', () => {
      it('should report server_tool_use/mcp_tool_use types and answered uses as server tool uses', () => {
        const a = fold([
          start(0, 'S', 'browser', 'server_tool_use'),
          start(1, 'M', 'search', 'mcp_tool_use'),
          start(2, 'R', 'code'),
          { messageStart: { role: 'user' } },
          { contentBlockStart: { contentBlockIndex: 0, start: { toolResult: { toolUseId: 'R', status: 'success' } } } },
          { messageStart: { role: 'assistant' } },
          start(0, 'C', 'echo', 'tool_use'),
        ]);
        expect(a.serverToolUses().map((u) => u.id)).toEqual(['S', 'M', 'R']);
        expect(a.customToolUses().map((u) => u.id)).toEqual(['C']);
      });
    });

    describe('when text streams in several messages and usage in several metadata events', () => {
      it('should concatenate assistant text and sum the usage', () => {
        const a = fold([
          { messageStart: { role: 'assistant' } },
          text('Hello, '),
          text('world.'),
          { messageStop: { stopReason: 'tool_use' } },
          { metadata: { usage: { inputTokens: 10, outputTokens: 4, totalTokens: 14 } } },
          { messageStart: { role: 'assistant' } },
          text(' Bye.'),
          { messageStop: { stopReason: 'end_turn' } },
          { metadata: { usage: { inputTokens: 20, outputTokens: 2, totalTokens: 22 } } },
        ]);
        expect(a.text).toBe('Hello, world. Bye.');
        expect(a.stopReason).toBe('end_turn');
        expect(a.complete).toBe(true);
        expect(a.usage).toEqual({ inputTokens: 30, outputTokens: 6 });
      });
    });

    describe('when events are malformed or unknown', () => {
      it('should ignore them without throwing', () => {
        const a = fold([
          {},
          { contentBlockDelta: null },
          { contentBlockStart: { contentBlockIndex: 'x' } },
          input(9, '{"orphan":1}'),
          { metadata: { usage: { inputTokens: -3, outputTokens: 'many' } } },
          { hookEvent: {} },
        ]);
        expect(a.customToolUses()).toEqual([]);
        expect(a.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
        expect(a.complete).toBe(false);
        expect(a.stopReason).toBeUndefined();
      });
    });
  });

  describe('property: any split of the input into fragments', () => {
    it('should assemble the same tool uses as the unsplit input', () => {
      const obj = fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.boolean()), { maxKeys: 5 });
      fc.assert(
        fc.property(fc.array(obj, { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { maxLength: 12 }), (inputs, cuts) => {
          const jsons = inputs.map((o) => JSON.stringify(o));
          const events: RawEvent[] = [];
          jsons.forEach((j, i) => events.push(start(i, `id${i}`, 'tool')));
          // Fragments of every block, interleaved round-robin across blocks.
          const pieces = jsons.map((j) => {
            const points = [...new Set(cuts.map((c) => c % (j.length + 1)))].sort((x, y) => x - y);
            const out: string[] = [];
            let prev = 0;
            for (const p of [...points, j.length]) {
              if (p > prev) out.push(j.slice(prev, p));
              prev = Math.max(prev, p);
            }
            return out;
          });
          const longest = Math.max(...pieces.map((p) => p.length));
          for (let k = 0; k < longest; k++) pieces.forEach((p, i) => p[k] !== undefined && events.push(input(i, p[k]!)));
          const uses = fold(events).customToolUses();
          expect(uses.map((u) => u.input)).toEqual(inputs);
          expect(uses.map((u) => u.id)).toEqual(jsons.map((_j, i) => `id${i}`));
        }),
      );
    });
  });
});

describe('decodeToolUse', () => {
  it('should truncate long invalid input in the error', () => {
    const use = decodeToolUse('x', 'echo', `{"text":"${'a'.repeat(500)}`);
    expect(use.inputError!.length).toBeLessThan(320);
  });
});
