/** Every error agentrx raises carries one of these codes. */
export type ErrorCode =
  | 'timeout'
  | 'cancelled'
  | 'max_turns_exceeded'
  | 'halted'
  | 'unresolved_requires_action'
  | 'http_error'
  | 'stream_error'
  | 'harness_stream_error'
  | 'early_termination'
  | 'outcome_unsupported'
  | 'invalid_config'
  | 'invalid_options'
  | 'unsupported'
  | 'provider_error'
  | 'duplicate_plugin'
  | 'unknown_plugin'
  | 'session_closed'
  | 'store_error'
  /** Provisioning: a tag that names no version of the base. */
  | 'unknown_tag'
  /** Provisioning: a digest the provision store does not know. */
  | 'unknown_version'
  /** Provisioning: the host answered 409 for a name whose resource is archived. */
  | 'resource_archived'
  /** Provisioning: the host answered 409 for a name it then did not list. */
  | 'name_conflict'
  /** Artifacts: no artifact of that name in the session. */
  | 'not_found'
  /** Artifacts: a name the host cannot store safely (path separators, `.`/`..`, other characters). */
  | 'invalid_name'
  /** Artifacts: a storage command on the host exited non-zero. */
  | 'command_failed'
  /** A host answered with a shape agentrx does not understand. */
  | 'unexpected_response'
  /** Structured output: the final answer did not match `outputSchema`, also after the one retry. */
  | 'output_invalid';

/**
 * Base class of every error agentrx raises. Switch on `code`, never on the message. `details`
 * holds structured, secret-free context (a status code, the raw stop reason, the bad fields).
 */
export class AgentRxError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AgentRxError';
  }
}

/** True when `e` is an AgentRxError, optionally with the given code. */
export function isAgentRxError(e: unknown, code?: ErrorCode): e is AgentRxError {
  return e instanceof AgentRxError && (code === undefined || e.code === code);
}

/** Wraps anything thrown into an AgentRxError (keeps one that already is). */
export function toAgentRxError(e: unknown, fallback: ErrorCode = 'provider_error'): AgentRxError {
  if (e instanceof AgentRxError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new AgentRxError(fallback, message, undefined, { cause: e });
}
