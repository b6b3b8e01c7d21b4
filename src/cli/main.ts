#!/usr/bin/env node
import 'reflect-metadata';
import { config as rxjsConfig } from 'rxjs';
import { runCli } from './cli.js';

// A reader that went away (`agentrx run --json … | head`) ends the command quietly, as cat does.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

// A stray error in an RxJS subscriber is logged, never fatal.
rxjsConfig.onUnhandledError = (e: unknown) => process.stderr.write(`agentrx: unhandled stream error: ${e instanceof Error ? e.message : String(e)}\n`);

runCli(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`agentrx: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
