import { Command, CommanderError } from 'commander';
import type { CliIo, CommandContext, RegisterCommand } from './cli-io.js';
import { packageVersion } from './version.js';
import { registerArtifactsCommand } from './commands/artifacts.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerEmulateCommand } from './commands/emulate.js';
import { registerProvisionCommands } from './commands/provision.js';
import { registerReplayCommand } from './commands/replay.js';
import { registerRunCommand } from './commands/run.js';
import { registerServeCommand } from './commands/serve.js';
import { registerSessionsCommand } from './commands/sessions.js';
import { registerToolsCommand } from './commands/tools.js';
import { registerWorkerCommand } from './commands/worker.js';
import { registerWorkersCommand } from './commands/workers.js';
import { EXIT_OK, EXIT_USAGE } from './exit-codes.js';

export type { CliIo } from './cli-io.js';
export { DEMO_PROMPT } from './commands/demo.js';

/** The commands, in the order `agentrx --help` lists them. */
const COMMANDS: readonly RegisterCommand[] = [
  registerRunCommand,
  registerToolsCommand,
  registerDemoCommand,
  registerServeCommand,
  registerSessionsCommand,
  registerProvisionCommands,
  registerArtifactsCommand,
  registerEmulateCommand,
  registerReplayCommand,
  registerWorkerCommand,
  registerWorkersCommand,
];

/** What the `agentrx` process adds around the commands (tests and embedders pass none). */
export interface CliHooks {
  /** Runs before a command's action, not for `--help` and `--version` (which load nothing else). */
  beforeCommand?(): Promise<void>;
}

/**
 * The `agentrx` command. Returns the exit code: 0 success, 1 failed run, 2 bad usage or config.
 * Every failure prints one line with the cause and one with a hint.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo = { out: process.stdout, err: process.stderr, env: process.env, cwd: process.cwd() },
  hooks: CliHooks = {},
): Promise<number> {
  let code = EXIT_OK;
  const ctx: CommandContext = {
    io,
    exit: (c) => {
      code = c;
    },
  };
  const program = new Command('agentrx')
    .description('Run LLM agent sessions against any loop host; custom tools run locally.')
    .version(packageVersion(), '-v, --version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out.write(s), writeErr: (s) => io.err.write(s) })
    .showHelpAfterError('(run agentrx --help for usage)');
  // Each command loads its code when it runs (`*.action.ts`): help and version stay light.
  for (const register of COMMANDS) register(program, ctx);
  const { beforeCommand } = hooks;
  if (beforeCommand) program.hook('preAction', () => beforeCommand());

  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help' ? EXIT_OK : EXIT_USAGE;
    }
    throw e;
  }
  return code;
}
