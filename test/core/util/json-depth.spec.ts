import { MAX_JSON_DEPTH, jsonDepthExceeds, jsonText, jsonTextMayExceed } from '../../../src/core/util/json-depth.js';

/** `{"a":{"a":…1…}}`, `depth` objects deep, built without recursion. */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { a: v } : [v];
  return v;
}

describe('jsonDepthExceeds', () => {
  describe('when given leaves, flat and nested values', () => {
    it('should count one level per array or object', () => {
      expect([jsonDepthExceeds(1, 0), jsonDepthExceeds('x', 0), jsonDepthExceeds(null, 0)]).toEqual([false, false, false]);
      expect([jsonDepthExceeds({}, 0), jsonDepthExceeds({}, 1)]).toEqual([true, false]);
      expect([jsonDepthExceeds({ a: [] }, 1), jsonDepthExceeds({ a: [] }, 2)]).toEqual([true, false]);
      expect([jsonDepthExceeds(nested(MAX_JSON_DEPTH)), jsonDepthExceeds(nested(MAX_JSON_DEPTH + 1))]).toEqual([false, true]);
    });
  });

  describe('when one deep branch sits beside shallow ones', () => {
    it('should find it', () => {
      expect(jsonDepthExceeds({ a: 1, b: [1, 2, { c: 3 }], d: { e: nested(10) } }, 10)).toBe(true);
    });
  });

  describe('when the value is nested 100,000 levels deep', () => {
    it('should answer without overflowing the stack', () => {
      expect(jsonDepthExceeds(nested(100_000), MAX_JSON_DEPTH)).toBe(true);
    });
  });
});

describe('jsonTextMayExceed', () => {
  describe('when the value nests deeper than max', () => {
    it('should say maybe for every such text, whatever the key order or spacing', () => {
      for (const depth of [2, 5, MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH + 9]) {
        const value = nested(depth);
        for (const text of [JSON.stringify(value), JSON.stringify(value, null, 2)]) {
          expect(jsonDepthExceeds(JSON.parse(text), depth - 1)).toBe(true);
          expect(jsonTextMayExceed(text, depth - 1)).toBe(true);
        }
      }
    });
  });

  describe('when the text holds at most max brackets', () => {
    it('should answer no, and the walk should agree', () => {
      const chunk = '{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":[1]}"}}]}}]}';
      expect(jsonTextMayExceed(chunk, 9)).toBe(false);
      expect(jsonDepthExceeds(JSON.parse(chunk), 9)).toBe(false);
      expect(jsonTextMayExceed('"plain"', 0)).toBe(false);
      expect(jsonTextMayExceed('{}', 0)).toBe(true);
    });
  });

  describe('when brackets sit inside strings', () => {
    it('should count them too (a maybe that the walk then answers)', () => {
      const text = JSON.stringify({ text: '[[[[{{{{' });
      expect(jsonTextMayExceed(text, 4)).toBe(true);
      expect(jsonDepthExceeds(JSON.parse(text), 4)).toBe(false);
    });
  });
});

describe('jsonText', () => {
  describe('when given what JSON.parse produces', () => {
    it('should write what JSON.stringify writes', () => {
      const values: unknown[] = [1, -0.5, 'a"b\n', true, null, [], {}, [1, 'x', null, [2, [3]]], { b: 1, a: { c: [true, { d: 'é' }] }, '': 0 }, nested(50)];
      for (const v of values) expect(jsonText(v)).toBe(JSON.stringify(v));
    });
  });

  describe('when values JSON cannot hold are inside', () => {
    it('should leave out such members and write such elements as null, like JSON.stringify', () => {
      const v = { a: undefined, b: () => 1, c: [undefined, Symbol('s'), 1], d: 2 };
      expect(jsonText(v)).toBe(JSON.stringify(v));
      expect(jsonText(undefined)).toBe('null');
    });
  });

  describe('when sortKeys is set', () => {
    it('should sort object keys at every depth and keep array order', () => {
      expect(jsonText({ b: 1, a: [{ d: 2, c: undefined }, null, { z: 1, y: 2 }] }, { sortKeys: true })).toBe('{"a":[{"d":2},null,{"y":2,"z":1}],"b":1}');
    });
  });

  describe('when the value is nested 20,000 levels deep', () => {
    it('should write it (JSON.stringify overflows the stack) and JSON.parse should read it back', () => {
      const v = nested(20_000);
      expect(() => JSON.stringify(v)).toThrow(RangeError);
      const text = jsonText(v);
      expect(text).toBe(`${'[{"a":'.repeat(10_000)}1${'}]'.repeat(10_000)}`);
      expect(jsonText(JSON.parse(text))).toBe(text);
    });
  });
});
