import { createRequire } from 'node:module';

/** What Ajv needs of a compiled `pattern` (its `code.regExp` engine). */
interface RegExpLike {
  test(s: string): boolean;
}

type Re2 = { compile(pattern: string, flags?: number): { matcher(input: string): { find(): boolean } } };

let re2: Re2 | undefined;

/**
 * The regular-expression engine of tool input schemas (`pattern`, `patternProperties`): RE2
 * (`re2js`, linear time in the input), so a pattern like `^(a+)+$` cannot stall the process on a
 * crafted input the way a backtracking engine does. A pattern RE2 does not support (lookaround,
 * backreferences) falls back to the JavaScript engine, which backtracks: keep such patterns simple.
 */
export const linearRegExp = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    re2 ??= (createRequire(import.meta.url)('re2js') as { RE2JS: Re2 }).RE2JS;
    let compiled: ReturnType<Re2['compile']>;
    try {
      compiled = re2.compile(pattern);
    } catch {
      return new RegExp(pattern, flags);
    }
    return { test: (s: string) => compiled.matcher(s).find() };
  },
  // Ajv names the engine in standalone code (not used here, but its type asks for it).
  { code: 'require("re2js").RE2JS' },
);
