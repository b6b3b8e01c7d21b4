import { IsInt, Max, Min } from '../util/class-validator.js';
import { CoerceNumber } from './config-section.js';

/** Largest accepted `timeouts.*` value: a Node timer longer than 2^31 - 1 ms fires after 1 ms. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** A timeout option: a positive integer of milliseconds, at most `MAX_TIMEOUT_MS` (numeric strings accepted). */
export function TimeoutMs(): PropertyDecorator {
  const decorators = [CoerceNumber(), IsInt(), Min(1), Max(MAX_TIMEOUT_MS)];
  return (target, key) => decorators.forEach((d) => d(target, key));
}
