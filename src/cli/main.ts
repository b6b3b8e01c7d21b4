#!/usr/bin/env node
import 'reflect-metadata';
import { config as rxjsConfig } from 'rxjs';
import { runCli } from './cli.js';

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
