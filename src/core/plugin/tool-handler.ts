import type { Artifacts } from '../artifacts/artifacts.js';

/**
 * Extension point for tools that run locally, in the caller's process. The host only sees the
 * name, description, input JSON Schema (generated from `inputType`, or `inputSchema` itself) and
 * the result text.
 */
export const ToolHandler = Symbol('ToolHandler');

/** Per-call context handed to `handle`. */
export interface ToolContext {
  readonly toolUseId: string;
  readonly sessionId: string | undefined;
  /** `${sessionId}:${toolUseId}` — pass it to external systems to make side effects idempotent. */
  readonly idempotencyKey: string;
  /** Fires on timeout, cancel or session end. A handler should stop work when it does. */
  readonly signal: AbortSignal;
  /** Epoch ms after which the result is discarded and an `is_error` timeout result is posted. */
  readonly deadline: number;
  /**
   * The agent's state shared with the client (`SessionOptions.state`, an AG-UI client's `state`),
   * when the session has one. A tool may change it in place; the Session publishes what changed
   * after the tool's result as an `agentrx.state_delta` (AG-UI STATE_DELTA, a JSON Patch).
   */
  readonly state?: Record<string, unknown>;
  /**
   * The session's files on the host (`Artifacts`: list, fetch, put, delete by name), when the
   * provider has session storage and the session has a provider-side id.
   */
  readonly artifacts?: Artifacts;
}

/** What a handler may return: text, a JSON-serializable value, or an explicit result. */
export type ToolOutput = string | number | boolean | Record<string, unknown> | unknown[] | ToolOutcome;

/** An explicit result; `isError: true` tells the model the call failed. */
export interface ToolOutcome {
  readonly content: string;
  readonly isError?: boolean;
}

/** A class whose instances class-validator validates (a DTO with decorators). */
export type InputType<T = unknown> = new () => T;

/**
 * A JSON Schema (draft-07, 2019-09 or 2020-12, chosen by its `$schema`; draft-07 when absent)
 * describing a tool's input object. Validated with Ajv, compiled once per handler. `format` is
 * not checked. Unknown fields: a root object schema with `properties` that says nothing about
 * extra fields (no `additionalProperties`, `patternProperties`, `unevaluatedProperties`,
 * `allOf`/`anyOf`/`oneOf` or `$ref`) is closed (`additionalProperties: false`), like a DTO, and
 * the host is sent the closed schema; a schema that does say is taken as written.
 */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** One problem a Standard Schema validator reports. */
export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[];
}

/** What a Standard Schema validator returns: the (possibly transformed) value, or issues. */
export type StandardSchemaResult<O> = { readonly value: O; readonly issues?: undefined } | { readonly issues: readonly StandardSchemaIssue[] };

/**
 * A Standard Schema validator (https://standardschema.dev: zod ≥ 3.24, valibot, arktype…). Its
 * `~standard.validate` validates every input; the JSON Schema sent to the host comes from the
 * library's own converter, the Standard JSON Schema `~standard.jsonSchema.input` (zod 4 has it).
 * A validator without a converter is refused at registration. Unknown fields follow the
 * validator's own rule (zod's `z.object` strips them, `z.strictObject` rejects them); the handler
 * gets the validated value.
 */
export interface StandardSchemaV1<I = unknown, O = I> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): StandardSchemaResult<O> | Promise<StandardSchemaResult<O>>;
    /** Standard JSON Schema converter; required by agentrx. */
    readonly jsonSchema?: { input(options: { readonly target: string }): Record<string, unknown> };
    readonly types?: { readonly input: I; readonly output: O };
  };
}

/** How a tool declares its input without a class: a JSON Schema or a Standard Schema validator. */
export type ToolInputSchema<I = unknown> = JsonSchema | StandardSchemaV1<unknown, I>;

/**
 * A local tool: a class (`@injectable()`, bound under `ToolHandler` with `bindPlugin` or passed
 * as `tools` to `AgentRx.create`) or a plain object (`defineTool`, passed as `tools` or bound
 * with `toConstantValue`). Its input is declared by exactly one of `inputType` (a class-validator
 * DTO) and `inputSchema` (JSON Schema or Standard Schema); a handler with both or neither is
 * refused at registration (`invalid_config`). Invalid input, a thrown error, a rejected promise,
 * a timeout or a malformed return all become an `is_error` result; a tool never hangs or crashes
 * the session.
 */
export interface ToolHandler<I = unknown> {
  /** Name the model calls it by: `^[a-zA-Z0-9_-]{1,64}$`, unique across tools. */
  readonly name: string;
  readonly description: string;
  /** class-validator DTO; its JSON Schema is sent to the host and every input is validated against it. */
  readonly inputType?: InputType<I>;
  /**
   * The input as JSON Schema or a Standard Schema validator (instead of `inputType`): sent to the
   * host, and every input is validated against it before `handle` runs.
   */
  readonly inputSchema?: ToolInputSchema<I>;
  /**
   * True when every call must be allowed by the caller first (the session's `confirmTool`, or an
   * `agentrx.confirmation_required` event in a live session) before `handle` runs. MCP tools set
   * it from `mcp.servers.<name>.requireApproval`.
   */
  readonly requireApproval?: boolean;
  /**
   * Where the tool comes from, for listings (`agentrx tools`): `mcp:<server>` for an MCP tool.
   * Absent for local tools (then `class` or `schema`, from how the input is declared).
   */
  readonly source?: string;
  /**
   * True when running the tool twice with the same idempotency key is harmless. After a crash
   * between start and recorded result, only idempotent tools are re-run; others get an
   * "outcome unknown" error result.
   */
  readonly idempotent?: boolean;
  /** Per-tool timeout override (ms). */
  readonly timeoutMs?: number;
  /** Runs the tool. May be async; may throw. Called at most once per tool-use id. */
  handle(input: I, ctx: ToolContext): ToolOutput | Promise<ToolOutput>;
}

export function isToolOutcome(v: unknown): v is ToolOutcome {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    typeof (v as ToolOutcome).content === 'string' &&
    Object.keys(v).every((k) => k === 'content' || k === 'isError')
  );
}
