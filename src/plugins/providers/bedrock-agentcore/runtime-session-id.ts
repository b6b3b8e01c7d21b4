import { randomUUID } from 'node:crypto';
import { AgentRxError } from '../../../core/errors.js';

/**
 * The `X-Amzn-Bedrock-AgentCore-Runtime-Session-Id` value: the key under which the harness keeps
 * the conversation. 33–100 characters of `[a-zA-Z0-9][a-zA-Z0-9-_]*`.
 */
export const RUNTIME_SESSION_ID = /^[a-zA-Z0-9][a-zA-Z0-9_-]{32,99}$/;

/** A fresh, valid runtime session id: `agentrx-<uuid>` (44 characters). */
export function newRuntimeSessionId(): string {
  return `agentrx-${randomUUID()}`;
}

/**
 * Returns `id` when it is a valid runtime session id; otherwise throws `invalid_options` saying
 * what is wrong (length or characters), with the length but never the value's characters beyond
 * a short prefix.
 */
export function validateRuntimeSessionId(id: unknown): string {
  if (typeof id !== 'string') throw new AgentRxError('invalid_options', 'bedrock-agentcore: the session id must be a string');
  if (RUNTIME_SESSION_ID.test(id)) return id;
  const shown = id.length > 12 ? `${id.slice(0, 12)}…` : id;
  const why =
    id.length < 33 || id.length > 100
      ? `it has ${id.length} characters, 33-100 are required`
      : /^[a-zA-Z0-9]/.test(id)
        ? 'it may contain only letters, digits, - and _'
        : 'it must start with a letter or a digit';
  throw new AgentRxError(
    'invalid_options',
    `bedrock-agentcore: invalid runtime session id '${shown}': ${why} (pattern [a-zA-Z0-9][a-zA-Z0-9-_]*, 33-100 characters)`,
    {
      length: id.length,
    },
  );
}
