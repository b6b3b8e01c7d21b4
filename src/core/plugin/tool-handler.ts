/**
 * Extension point for tools that run locally, in the caller's process. The host only sees the
 * name, description, input JSON Schema (generated from `inputType`) and the result text.
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
}

/** What a handler may return: text, a JSON-serializable value, or an explicit result. */
export type ToolOutput = string | number | boolean | Record<string, unknown> | unknown[] | ToolOutcome;

/** An explicit result; `isError: true` tells the model the call failed. */
export interface ToolOutcome {
  readonly content: string;
  readonly isError?: boolean;
}

/** A class whose instances class-validator validates (a DTO with decorators). */
export type InputType<T = object> = new () => T;

/**
 * A local tool. `@injectable()`; bound under `ToolHandler` with `bindPlugin` (or passed as `tools`
 * to `AgentRx.create`). Invalid input, a thrown error, a rejected promise, a timeout or a
 * malformed return all become an `is_error` result; a tool never hangs or crashes the session.
 */
export interface ToolHandler<I extends object = any> {
  /** Name the model calls it by: `^[a-zA-Z0-9_-]{1,64}$`, unique across tools. */
  readonly name: string;
  readonly description: string;
  /** class-validator DTO; its JSON Schema is sent to the host and every input is validated against it. */
  readonly inputType: InputType<I>;
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
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as ToolOutcome).content === 'string' &&
    Object.keys(v).every((k) => k === 'content' || k === 'isError');
}
