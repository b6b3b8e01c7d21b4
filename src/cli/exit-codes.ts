import type { AgentRxError } from '../core/errors.js';

/** Exit code of a command that did its work. */
export const EXIT_OK = 0;
/** Exit code of a run (or a command) that failed while working. */
export const EXIT_FAILED = 1;
/** Exit code of bad usage or set-up: options, config, a missing optional package, an unreachable Redis. */
export const EXIT_USAGE = 2;

/** True for a Redis store that cannot be reached or whose URL is malformed: the config's problem. */
export function isRedisUnreachable(err: AgentRxError): boolean {
  return err.code === 'store_error' && /cannot connect to Redis|invalid Redis URL/.test(err.message);
}

/**
 * The exit code of a command's failure: {@link EXIT_USAGE} for what the user fixes before running
 * again (flags, config, a missing optional package named in `details.package`, an unreachable
 * Redis), {@link EXIT_FAILED} for the rest.
 */
export function exitCodeFor(err: AgentRxError): number {
  const usage =
    err.code === 'invalid_config' ||
    err.code === 'invalid_options' ||
    err.code === 'unknown_plugin' ||
    err.code === 'duplicate_plugin' ||
    err.code === 'outcome_unsupported' ||
    typeof err.details?.['package'] === 'string' ||
    isRedisUnreachable(err);
  return usage ? EXIT_USAGE : EXIT_FAILED;
}
