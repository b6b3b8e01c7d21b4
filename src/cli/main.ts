#!/usr/bin/env node
import { packageVersion } from './version.js';

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

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  // What commander would print, without loading it and the commands' declarations.
  process.stdout.write(`${packageVersion()}\n`);
} else {
  import('./cli.js')
    .then(({ runCli }) => runCli(process.argv, undefined, { beforeCommand }))
    .then(
      (code) => {
        process.exitCode = code;
      },
      (e: unknown) => {
        process.stderr.write(`agentrx: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exitCode = 1;
      },
    );
}
