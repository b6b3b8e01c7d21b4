import { isAbsolute, join, resolve } from 'node:path';

/** Where the CLI keeps sessions, and why it is there (for messages). */
export interface StoreLocation {
  readonly dir: string;
  /** `--store`, `AGENTRX_STATE_DIR`, `XDG_STATE_HOME` or `HOME`. */
  readonly from: string;
}

/**
 * The CLI's session store directory: `--store <dir>`, else `$AGENTRX_STATE_DIR`, else
 * `$XDG_STATE_HOME/agentrx`, else `$HOME/.local/state/agentrx` (`%USERPROFILE%` on Windows).
 * Undefined when none of them is set. Relative paths are taken from `cwd`. Only the given
 * environment is read, so tests never touch the real home directory.
 */
export function storeLocation(flag: string | undefined, env: Readonly<Record<string, string | undefined>>, cwd: string): StoreLocation | undefined {
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(cwd, p));
  const set = (v: string | undefined): v is string => v !== undefined && v !== '';
  if (set(flag)) return { dir: abs(flag), from: '--store' };
  if (set(env['AGENTRX_STATE_DIR'])) return { dir: abs(env['AGENTRX_STATE_DIR']), from: 'AGENTRX_STATE_DIR' };
  if (set(env['XDG_STATE_HOME'])) return { dir: join(abs(env['XDG_STATE_HOME']), 'agentrx'), from: 'XDG_STATE_HOME' };
  const home = env['HOME'] ?? env['USERPROFILE'];
  if (set(home)) return { dir: join(abs(home), '.local', 'state', 'agentrx'), from: 'HOME' };
  return undefined;
}
