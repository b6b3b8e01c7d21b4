import { AgentRxError } from '../../errors.js';

/** A `store_error` saying what failed and naming the file (and the errno code of `cause`, if any). */
export function storeError(file: string, what: string, cause?: unknown, details?: Record<string, unknown>): AgentRxError {
  // Duck-typed: errors from node:fs may come from another realm (vm contexts), failing instanceof.
  const err = typeof cause === 'object' && cause !== null && 'message' in cause ? (cause as NodeJS.ErrnoException) : undefined;
  const reason = err ? `: ${err.code && !err.message.includes(err.code) ? `${err.code} ` : ''}${err.message}` : '';
  return new AgentRxError('store_error', `${what} (${file})${reason}`, { file, ...details }, cause === undefined ? undefined : { cause });
}
