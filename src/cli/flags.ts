import { isAbsolute, resolve } from 'node:path';
import { AgentRxError } from '../core/errors.js';

/** Help of `--module`, the same on every command that loads the user's plugins. */
export const MODULE_HELP = 'an ES module exporting tools, modules and/or consumers to load (repeatable; the config\'s "modules" adds more)';

/** Help of `--demo-tools`, the same on every command that can offer them. */
export const DEMO_TOOLS_HELP = 'also offer the demo tools get_time, calculate and read_file (which reads files under the working folder)';

/** Help of `--store`, the same on every command that reads or writes the session store. */
export const STORE_HELP = 'session store directory (default: $AGENTRX_STATE_DIR, else $XDG_STATE_HOME/agentrx, else ~/.local/state/agentrx)';

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

/** Commander's collector of a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * A path flag as the user meant it: an absolute path as typed, a relative one from the working
 * folder (`cwd` of the invocation, not the process's: tests and embedders pass their own).
 */
export function pathFrom(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}
