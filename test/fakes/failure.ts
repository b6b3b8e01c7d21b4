import { AgentRxError } from '../../src/core/errors.js';

/** The AgentRxError `p` rejects with; fails the test when it resolves or rejects with anything else. */
export async function failure(p: Promise<unknown>): Promise<AgentRxError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AgentRxError);
  return e as AgentRxError;
}
