import type { OutputSchema } from '../plugin/session-options.js';
import { compileDeclaration, type InputCheck } from '../tools/tool-input.js';
import { messageOf } from '../util/async.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../util/json-depth.js';

/** A session's compiled `outputSchema`: the JSON Schema a host is sent, and the check of an answer. */
export interface CompiledOutput {
  readonly schema: Record<string, unknown>;
  /** Parses `text` as one JSON object (a ```json fence around it is allowed) and validates it. Never throws. */
  check(text: string): Promise<InputCheck>;
}

/**
 * Compiles `decl` with the tools' input machinery (a DTO class, a JSON Schema or a Standard
 * Schema, of an object). Throws `invalid_options` naming `outputSchema` when it is unusable.
 */
export function compileOutputSchema(decl: OutputSchema): CompiledOutput {
  const compiled = compileDeclaration(typeof decl === 'function' ? { inputType: decl } : { inputSchema: decl }, 'outputSchema', 'invalid_options');
  return {
    schema: compiled.schema,
    check: async (text) => {
      const parsed = parseAnswer(text);
      return parsed.ok ? compiled.check(parsed.value) : parsed;
    },
  };
}

/** What a host without a native form is told with the prompt. */
export function outputInstruction(schema: Readonly<Record<string, unknown>>): string {
  return `Answer with only a JSON object, without any other text, that matches this JSON Schema:\n${JSON.stringify(schema)}`;
}

/** What the model is sent back once when its answer does not match. */
export function outputRetryText(problems: readonly string[]): string {
  return `Your answer does not match the required JSON Schema:\n${problems.map((p) => `- ${p}`).join('\n')}\nAnswer again with only the corrected JSON object.`;
}

function parseAnswer(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; problems: string[] } {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/i.exec(trimmed);
  const body = fenced ? fenced[1]!.trim() : trimmed;
  if (body === '') return { ok: false, problems: ['the answer is empty; it must be a JSON object'] };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    return { ok: false, problems: [`the answer is not JSON (${messageOf(e)})`] };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, problems: [`the answer must be a JSON object; got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`] };
  if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) return { ok: false, problems: [`the answer nests deeper than ${MAX_JSON_DEPTH} levels`] };
  return { ok: true, value: value as Record<string, unknown> };
}
