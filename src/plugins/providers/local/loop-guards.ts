import { jsonText } from '../../../core/util/json-depth.js';

/**
 * Loop guards of the `local` provider, for models that follow instructions weakly: a repeated
 * call is answered in history instead of re-run, a tool failing twice in a row earns a corrective
 * user message, and the last allowed model call carries a final-turn directive.
 */

/** Content of the `tool` message that answers a duplicate call (wrapped in `{duplicate, message}`). */
export const DUPLICATE_TOOL_NOTICE =
  'You already called this tool with these exact arguments; the result is unchanged. Do NOT repeat it. ' +
  'If you have enough information, give your final answer now.';

/** The `tool` message content that answers a repeated call (and the result AG-UI shows for it). */
export const DUPLICATE_TOOL_CONTENT = JSON.stringify({ duplicate: true, message: DUPLICATE_TOOL_NOTICE });

/** The user message appended before the model call that reaches `maxTurns`. */
export const FINAL_TURN_DIRECTIVE =
  'FINAL TURN: you are about to reach the maximum number of turns. You MUST produce your final answer now ' +
  'with the information you have already gathered. Do not call any tool.';

/** The user message appended after a tool's second consecutive error result. */
export function correctiveDirective(toolName: string, error: string): string {
  return (
    `STOP — the ${toolName} tool rejected your input again: ${error}. You must change your input to fix THIS ` +
    `specific error before calling ${toolName} again, or answer without it.`
  );
}

/**
 * Dedupe key of a call: its name plus its arguments as canonical JSON (object keys sorted at every
 * depth), so `{"a":1,"b":2}` and `{"b":2, "a":1}` are the same call. Arguments that are not valid
 * JSON are keyed by their raw text.
 */
export function callKey(name: string, args: unknown): string {
  let value: unknown = args;
  if (typeof args === 'string') {
    const trimmed = args.trim();
    if (trimmed === '') value = {};
    else {
      try {
        value = JSON.parse(trimmed);
      } catch {
        return `${name}\u0000raw:${args}`;
      }
    }
  }
  return `${name}\u0000${canonicalJson(value ?? {})}`;
}

/**
 * JSON with object keys sorted at every depth. Iterative (`jsonText`), so arguments nested
 * thousands of levels deep are keyed like any others instead of overflowing the stack: they are
 * refused later, as an `is_error` result, by the depth cap of `toToolUse`.
 */
export function canonicalJson(value: unknown): string {
  return jsonText(value, { sortKeys: true });
}
