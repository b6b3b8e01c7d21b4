/**
 * Iterative walks over JSON values that a model (or a host) produced. `JSON.parse` accepts any
 * nesting, but every recursive walk over the result — `JSON.stringify`, `structuredClone`,
 * class-transformer, class-validator, a hand-written canonicalizer — overflows the stack a few
 * thousand levels down and takes the whole run with it. These helpers never recurse, so they are
 * safe on any input; callers cap the depth they pass on (`MAX_JSON_DEPTH`).
 */

/**
 * The deepest nesting of arrays and objects accepted in model-produced JSON (tool arguments).
 * Real tool inputs stay far below it; anything deeper is refused as bad input (an `is_error`
 * result the model reads) before a recursive walk can meet it.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` nests arrays or objects more than `max` levels deep (`1` and `"a"` are
 * depth 0, `{}` and `[1]` depth 1, `{"a":[]}` depth 2). Iterative; stops at the first path that
 * is too deep.
 */
export function jsonDepthExceeds(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) return true;
    const children: unknown[] = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * A cheap bound for JSON text, checked before parsing or walking it: false when `text` holds at
 * most `max` opening brackets (`{`, `[`) in all, strings included, so that its value cannot nest
 * more than `max` levels deep. True means only "maybe": walk the parsed value
 * (`jsonDepthExceeds`). Allocates nothing; used on every streamed chunk, where the walk would
 * cost an allocation per nested value.
 */
export function jsonTextMayExceed(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let count = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++count > max) return true;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++count > max) return true;
  return false;
}

/** Options of `jsonText`. */
export interface JsonTextOptions {
  /** Sort object keys at every depth (a canonical form: key order does not change the text). */
  readonly sortKeys?: boolean;
}

/** Literal output text on the work stack (as opposed to a value still to serialize). */
class Text {
  constructor(readonly text: string) {}
}

/**
 * `JSON.stringify(value)` for values that came from `JSON.parse`, at any depth: written with an
 * explicit work stack instead of recursion. Like `JSON.stringify`, object members whose value is
 * `undefined`, a function or a symbol are left out and such array elements become `null`; a leaf
 * that `JSON.stringify` cannot write (a bigint) is `null` too. `toJSON` methods are not called
 * (parsed JSON has none).
 */
export function jsonText(value: unknown, options: JsonTextOptions = {}): string {
  const out: string[] = [];
  const work: unknown[] = [value];
  while (work.length > 0) {
    const item = work.pop();
    if (item instanceof Text) {
      out.push(item.text);
    } else if (Array.isArray(item)) {
      out.push('[');
      work.push(new Text(']'));
      for (let i = item.length - 1; i >= 0; i--) {
        const el: unknown = item[i];
        work.push(isWritable(el) ? el : null);
        if (i > 0) work.push(new Text(','));
      }
    } else if (typeof item === 'object' && item !== null) {
      const obj = item as Record<string, unknown>;
      let keys = Object.keys(obj).filter((k) => isWritable(obj[k]));
      if (options.sortKeys) keys = keys.sort();
      out.push('{');
      work.push(new Text('}'));
      for (let i = keys.length - 1; i >= 0; i--) {
        work.push(obj[keys[i]!]);
        work.push(new Text(`${JSON.stringify(keys[i])}:`));
        if (i > 0) work.push(new Text(','));
      }
    } else {
      out.push(leafText(item));
    }
  }
  return out.join('');
}

function isWritable(v: unknown): boolean {
  return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
}

function leafText(v: unknown): string {
  try {
    return (JSON.stringify(v) as string | undefined) ?? 'null';
  } catch {
    return 'null';
  }
}
