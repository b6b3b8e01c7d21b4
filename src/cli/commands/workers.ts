import type { RegisterCommand } from '../cli-io.js';

/** Flags of `agentrx workers`. */
export interface WorkersCommandFlags {
  /** The JSON config file the workers use (its `store` and `runtime` sections are read). */
  readonly configFile: string;
  /** Print the status as one JSON object instead of a table. */
  readonly json?: boolean;
}

/** `agentrx workers`: the worker pool's live workers and queue depth, once. */
export const registerWorkersCommand: RegisterCommand = (program, ctx) => {
  program
    .command('workers')
    .description('list the live workers of the pool (sessions, lease ages, last heartbeat) and the queue depth')
    .requiredOption('-c, --config <file>', 'JSON config file of the workers (store: { type: "redis", url }, runtime.queueName)')
    .option('--json', 'print one JSON object { at, queue, workers } instead of a table')
    .action(async (flags: { config: string; json?: boolean }) => {
      ctx.exit(await (await import('./workers.action.js')).runWorkersCommand({ configFile: flags.config, json: flags.json === true }, ctx.io));
    });
};
