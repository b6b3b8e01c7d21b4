import type { Command } from 'commander';
import type { Artifacts } from '../../core/artifacts/artifacts.js';
import type { CliIo, CommandContext, RegisterCommand } from '../cli-io.js';

/** Flags every `artifacts` subcommand takes. */
export interface ArtifactsFlags {
  session: string;
  config?: string;
  provider?: string;
}

/**
 * `agentrx artifacts ls|get|put|rm --session <id>`: the files of a provider-side session (Claude
 * Managed Agents, Bedrock AgentCore), through the configured provider (`--config`, `--provider`).
 * `get` and `put` stream to and from files (never holding a file whole), with progress on stderr
 * for files of 1 MB or more.
 */
export const registerArtifactsCommand: RegisterCommand = (program, ctx) => {
  const artifacts = program.command('artifacts').description('list, get, put and remove the files of a host session (its artifacts)');
  common(artifacts.command('ls').description('list the artifacts of the session: name, size, created (one per name, the newest)'))
    .option('--json', 'one JSON object per line')
    .action(async (flags: ArtifactsFlags & { json?: boolean }) => runArtifacts(ctx, flags, (x, a, io) => x.list(a, flags.json === true, io)));
  common(artifacts.command('get').description('write an artifact to stdout or a file').argument('<name>', 'artifact name (agentrx artifacts ls)'))
    .option('-o, --output <file>', 'file to write (default: stdout)')
    .action(async (name: string, flags: ArtifactsFlags & { output?: string }) => runArtifacts(ctx, flags, (x, a, io) => x.get(a, name, flags.output, io)));
  common(artifacts.command('put').description('store a file as an artifact of the session').argument('<file>', 'file to upload'))
    .option('--name <name>', 'artifact name (default: the file name)')
    .action(async (file: string, flags: ArtifactsFlags & { name?: string }) => runArtifacts(ctx, flags, (x, a, io) => x.put(a, file, flags.name, io)));
  common(artifacts.command('rm').description('remove an artifact (every file of that name)').argument('<name>', 'artifact name')).action(
    async (name: string, flags: ArtifactsFlags) => runArtifacts(ctx, flags, (x, a, io) => x.remove(a, name, io)),
  );
};

function common(cmd: Command): Command {
  return cmd
    .requiredOption('--session <id>', 'the provider-side session id (the session id a run printed)')
    .option('-c, --config <file>', 'JSON config file (${VAR} interpolation applies)')
    .option('--provider <id>', 'provider (default: the config file\'s "provider")');
}

/** Loads the subcommands' code (`artifacts.action.ts`), then runs `body` on the session's artifacts there. */
async function runArtifacts(
  ctx: CommandContext,
  flags: ArtifactsFlags,
  body: (action: typeof import('./artifacts.action.js'), a: Artifacts, io: CliIo) => Promise<void>,
): Promise<void> {
  const action = await import('./artifacts.action.js');
  await action.run(ctx, flags, (a, io) => body(action, a, io));
}
