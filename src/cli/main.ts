#!/usr/bin/env node
import { runCli } from './cli.js';

// A reader that went away (`agentrx run --json … | head`) ends the command quietly, as cat does.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

/** Before a command runs: a stray error in an RxJS subscriber is logged, never fatal. */
async function beforeCommand(): Promise<void> {
  const { config } = await import('../core/util/rxjs.js');
  config.onUnhandledError = (e: unknown) => process.stderr.write(`agentrx: unhandled stream error: ${e instanceof Error ? e.message : String(e)}\n`);
}

runCli(process.argv, undefined, { beforeCommand }).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`agentrx: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
