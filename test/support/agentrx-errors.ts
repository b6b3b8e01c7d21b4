import { AgentRxError, isAgentRxError, type ErrorCode } from '../../src/core/errors.js';

/** Runs `fn`, which must throw an AgentRxError; returns it (fails the test otherwise). */
export function thrown(fn: () => unknown): AgentRxError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AgentRxError) return e;
    throw e;
  }
  throw new Error('expected an AgentRxError, nothing was thrown');
}

/** The AgentRxError with `code` that `p` rejects with (fails the test if it resolves or rejects with anything else). */
export async function rejectedWith(code: ErrorCode, p: Promise<unknown>): Promise<AgentRxError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isAgentRxError(e, code)) throw new Error(`expected a ${code}, got ${String(e)}`);
  return e;
}
