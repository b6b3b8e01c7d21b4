import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import type { SessionStore } from '../core/store/session-store.js';

/** Streams and environment of one CLI invocation (tests pass their own). */
export interface CliIo {
  readonly out: Writable & { isTTY?: boolean };
  readonly err: Writable;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Stops a long-running command (`serve`) when aborted, like SIGINT/SIGTERM do (tests, embedding). */
  readonly signal?: AbortSignal;
  /**
   * The session store to use instead of the file store in the state directory (tests, embedding):
   * `run` binds it, the `sessions` commands read it.
   */
  readonly store?: SessionStore;
}

/**
 * What a command gets when it is registered: the I/O of this invocation, and where its action
 * leaves the exit code (commander ignores an action's return value, so the program reads it here).
 */
export interface CommandContext {
  readonly io: CliIo;
  /** Records the exit code of the command that ran. */
  exit(code: number): void;
}

/** A command module's entry: adds its command (with flags, help and action) to `parent`. */
export type RegisterCommand = (parent: Command, ctx: CommandContext) => void;
