import { AgentRxError } from '../core/errors.js';

/**
 * A whole-number flag: undefined when not given, else an integer from `min` to `max`; anything
 * else is `invalid_options` naming the flag, the value as typed and what it takes.
 */
export function integerFlag(flag: string, value: string | undefined, min: number, max = 2_147_483_647): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\s*-?\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new AgentRxError('invalid_options', `${flag} takes a whole number from ${min} to ${max}; got ${JSON.stringify(value)}`, { flag, value });
  }
  return n;
}
