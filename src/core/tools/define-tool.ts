import { AgentRxError } from '../errors.js';
import type { StandardSchemaV1, ToolContext, ToolHandler, ToolInputSchema, ToolOutput } from '../plugin/tool-handler.js';
import { compileToolInput } from './tool-input.js';

/** The name rule every tool name follows (what the hosts accept). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** What `defineTool` takes: a tool as a plain object, no class and no decorators. */
export interface ToolDefinition<I = Record<string, unknown>> {
  /** Name the model calls it by: `^[a-zA-Z0-9_-]{1,64}$`, unique across tools. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /**
   * The input: a JSON Schema object schema (validated with Ajv; a root schema with `properties`
   * that says nothing about extra fields is closed, like a DTO), or a Standard Schema validator
   * with a JSON Schema converter (zod 4: `z.object({…})`; the handler gets its output). Either
   * way the host gets the schema alone, so every `$ref` must resolve inside it
   * (`#/definitions/…`, `#/$defs/…`); one that does not is an `invalid_config` error.
   */
  readonly inputSchema: ToolInputSchema<I>;
  /**
   * Runs the tool with the validated input. May be async; may throw (the model then gets an
   * `is_error` result). Called at most once per tool-use id; never with invalid input.
   */
  handle(input: I, ctx: ToolContext): ToolOutput | Promise<ToolOutput>;
  /** True when running it twice with the same idempotency key is harmless (re-run after a crash). */
  readonly idempotent?: boolean;
  /** Per-tool timeout (ms), overriding `limits.toolTimeoutMs`. */
  readonly timeoutMs?: number;
  /** True when every call must be allowed by the caller first (the session's `confirmTool`). */
  readonly requireApproval?: boolean;
}

/**
 * A ToolHandler from a plain object, for plain JavaScript and for tools whose schema already
 * exists as JSON Schema or zod: register it like any tool (`AgentRx.create({ tools: [t] })`, or
 * `bind(ToolHandler).toConstantValue(t)`).
 *
 * ```js
 * const lookup = defineTool({
 *   name: 'lookup',
 *   description: 'Looks a word up.',
 *   inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
 *   handle: ({ word }) => dictionary[word] ?? 'not found',
 * });
 * ```
 *
 * Checked at once: throws `invalid_config` for a bad name, a missing description or handler,
 * a bad timeout, or an input schema that cannot be used (see `compileToolInput`). Returns a
 * frozen object.
 */
export function defineTool<S extends StandardSchemaV1>(
  def: ToolDefinition<NonNullable<S['~standard']['types']>['output']> & { readonly inputSchema: S },
): ToolHandler;
export function defineTool<I = Record<string, unknown>>(def: ToolDefinition<I>): ToolHandler;
export function defineTool(def: ToolDefinition<unknown>): ToolHandler {
  const problems: string[] = [];
  const name: unknown = def?.name;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) problems.push(`name must match ${String(TOOL_NAME_PATTERN)}; got ${JSON.stringify(name)}`);
  if (typeof def?.description !== 'string') problems.push('description must be a string');
  if (typeof def?.handle !== 'function') problems.push('handle must be a function (input, ctx) => result');
  if (def?.timeoutMs !== undefined && !(Number.isInteger(def.timeoutMs) && def.timeoutMs > 0))
    problems.push(`timeoutMs must be a positive integer; got ${JSON.stringify(def.timeoutMs)}`);
  if (def?.idempotent !== undefined && typeof def.idempotent !== 'boolean') problems.push('idempotent must be true or false');
  if (def?.requireApproval !== undefined && typeof def.requireApproval !== 'boolean') problems.push('requireApproval must be true or false');
  if (def?.inputSchema === undefined || def.inputSchema === null || typeof def.inputSchema !== 'object')
    problems.push('inputSchema must be a JSON Schema object or a Standard Schema (e.g. a zod object)');
  if (problems.length > 0) {
    throw new AgentRxError('invalid_config', `defineTool(${typeof name === 'string' ? `'${name}'` : '…'}): ${problems.join('; ')}`, { tool: name, problems });
  }
  const handle = def.handle;
  const tool: ToolHandler = Object.freeze({
    name: def.name,
    description: def.description,
    inputSchema: def.inputSchema,
    ...(def.idempotent !== undefined ? { idempotent: def.idempotent } : {}),
    ...(def.timeoutMs !== undefined ? { timeoutMs: def.timeoutMs } : {}),
    ...(def.requireApproval !== undefined ? { requireApproval: def.requireApproval } : {}),
    handle: (input: unknown, ctx: ToolContext) => handle(input, ctx),
  });
  compileToolInput(tool);
  return tool;
}
