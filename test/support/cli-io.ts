/** The I/O a CLI test hands `runCli`: in-memory stdout/stderr it can read back. */
import { PassThrough } from 'node:stream';
import type { CliIo } from '../../src/cli/cli-io.js';
import type { SessionStore } from '../../src/core/store/session-store.js';

export interface TestIo extends CliIo {
  readonly out: PassThrough;
  /** Everything written to stdout so far, as text. */
  stdout(): string;
  /** Everything written to stdout so far, as bytes (binary output such as an artifact's content). */
  stdoutBytes(): Buffer;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** The first complete line on stdout (e.g. the address a serving command prints). */
  readonly firstLine: Promise<string>;
}

export interface TestIoOptions {
  readonly cwd?: string;
  /** The command's environment (nothing of the test process's environment is passed). */
  readonly env?: Record<string, string>;
  readonly signal?: AbortSignal;
  readonly store?: SessionStore;
}

/** A fresh {@link TestIo}: `cwd` defaults to the process's, `env` to empty. */
export function testIo(opts: TestIoOptions = {}): TestIo {
  const out = new PassThrough();
  const err = new PassThrough();
  const chunks = { out: [] as Buffer[], err: [] as Buffer[] };
  const stdoutBytes = (): Buffer => Buffer.concat(chunks.out);
  let seen: ((line: string) => void) | undefined;
  const firstLine = new Promise<string>((resolve) => (seen = resolve));
  out.on('data', (c: Buffer) => {
    chunks.out.push(c);
    const text = seen && stdoutBytes().toString();
    if (text?.includes('\n')) {
      seen?.(text.slice(0, text.indexOf('\n')));
      seen = undefined;
    }
  });
  err.on('data', (c: Buffer) => chunks.err.push(c));
  return {
    out,
    err,
    env: opts.env ?? {},
    cwd: opts.cwd ?? process.cwd(),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.store ? { store: opts.store } : {}),
    stdout: () => stdoutBytes().toString(),
    stdoutBytes,
    stderr: () => Buffer.concat(chunks.err).toString(),
    firstLine,
  };
}
