import type { Command } from 'commander';
import { AgentRxError } from '../../core/errors.js';
import type { CliIo, CommandContext, RegisterCommand } from '../cli-io.js';
import { EXIT_FAILED, EXIT_OK, exitCodeFor } from '../exit-codes.js';
import { collect, DEMO_TOOLS_HELP, integerFlag, MODULE_HELP } from '../flags.js';
import { guarded } from '../report.js';
import type { ProvisionFlags, ResourceFamily } from './provision-context.js';
import { digest8, renderPrune, renderVersions } from './provision-render.js';

/** `withProvisioning` of `provision-context.ts`, loaded when a subcommand runs (it builds an instance). */
const withProvisioning: typeof import('./provision-context.js').withProvisioning = async (...args) =>
  (await import('./provision-context.js')).withProvisioning(...args);

/** Help of `--store` on the provisioning commands. */
const PROVISION_STORE_HELP =
  "provision store directory (a file store; default: the config's store section, else $AGENTRX_STATE_DIR, $XDG_STATE_HOME/agentrx or ~/.local/state/agentrx)";

/** The families, in the order `agentrx --help` lists them. */
const FAMILIES: readonly (ResourceFamily & { readonly what: string; readonly remove: string })[] = [
  {
    command: 'agents',
    provider: 'claude-managed-agents',
    kind: 'agent',
    noun: 'agent',
    what: 'Claude Managed Agents agents',
    remove: 'archive',
    defaultBase: (rx) => rx.config.agent.name,
  },
  {
    command: 'environments',
    provider: 'claude-managed-agents',
    kind: 'environment',
    noun: 'environment',
    what: 'Claude Managed Agents environments',
    remove: 'archive',
    defaultBase: (rx) => String((rx.config.providers?.['claude-managed-agents'] as { environmentName?: unknown } | undefined)?.environmentName ?? 'agentrx'),
  },
  {
    command: 'harnesses',
    provider: 'bedrock-agentcore',
    kind: 'harness',
    noun: 'harness',
    what: 'Bedrock AgentCore harnesses',
    remove: 'delete',
    defaultBase: (rx) => rx.config.agent.name,
  },
];

/** `agentrx agents|environments|harnesses ls|provision|tag|prune`: named, tagged versions of provisioned resources. */
export const registerProvisionCommands: RegisterCommand = (program, ctx) => {
  for (const family of FAMILIES) registerFamily(program, ctx, family);
};

/** Adds the config, store and JSON flags every subcommand takes. */
function common(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'JSON config file (${VAR} interpolation applies)')
    .option('--store <dir>', PROVISION_STORE_HELP)
    .option('--json', 'one JSON object per line');
}

function registerFamily(program: Command, ctx: CommandContext, family: (typeof FAMILIES)[number]): void {
  const { io } = ctx;
  const { kind, noun } = family;
  const group = program.command(family.command).description(`list, provision, tag and prune the ${family.what} (named versions of the configured agent)`);
  common(group.command('ls').description(`list the versions of <base> (default: the configured one), newest first: name, id, digest, created, tags, archived`))
    .argument('[base]', `base name of the ${noun}`)
    .action(async (base: string | undefined, flags: ProvisionFlags) => {
      ctx.exit(
        await guarded(io, () =>
          withProvisioning(family, flags, io, async (c) => {
            const name = base ?? family.defaultBase(c.rx);
            const versions = await c.provisioner.list(kind, name, c.signal);
            if (versions.length === 0 && flags.json !== true) io.err.write(`agentrx: no ${noun} versions of '${name}' on the host\n`);
            else renderVersions(versions, flags.json === true, io);
          }),
        ),
      );
    });
  common(group.command('provision').description(`create the ${noun} version of the config (or reuse the stored one) and print it`))
    .option('--module <file>', MODULE_HELP, collect, [])
    .option('--demo-tools', DEMO_TOOLS_HELP)
    .action(async (flags: ProvisionFlags) => {
      ctx.exit(
        await guarded(io, () =>
          withProvisioning(family, flags, io, async (c) => {
            const e = await c.provisioner.ensure(kind, c.spec, c.signal);
            if (flags.json) io.out.write(`${JSON.stringify({ kind, base: e.base, name: e.name, id: e.id, digest: e.digest, created: e.created })}\n`);
            else io.out.write(`${e.created ? 'created' : 'reused'}  ${e.name}  ${e.id}  ${digest8(e.digest)}\n`);
          }),
        ),
      );
    });
  common(group.command('tag').description(`point <base>:<tag> at the stored version <digest> (full, or a unique prefix of 8+ hex digits)`))
    .argument('<ref>', `<base>:<tag>, e.g. support:prod`)
    .argument('<digest>', 'the version (its digest; agentrx ' + family.command + ' ls lists them)')
    .action(async (ref: string, digest: string, flags: ProvisionFlags) => {
      ctx.exit(
        await guarded(io, () =>
          withProvisioning(family, flags, io, async (c) => {
            const at = ref.lastIndexOf(':');
            if (at <= 0) throw new AgentRxError('invalid_options', `${JSON.stringify(ref)} is not a reference: write '<base>:<tag>' (e.g. 'support:prod')`);
            const entry = await c.provisioner.tag(kind, ref.slice(0, at), ref.slice(at + 1), digest);
            if (flags.json) io.out.write(`${JSON.stringify({ ref, name: entry.name, id: entry.id, digest: entry.digest })}\n`);
            else io.out.write(`${ref} → ${entry.name}  ${entry.id}  ${digest8(entry.digest)}\n`);
          }),
        ),
      );
    });
  common(group.command('prune').description(`${family.remove} old versions of <base>: keeps the newest --keep and every tagged one`))
    .argument('[base]', `base name of the ${noun}`)
    .requiredOption('--keep <n>', 'how many of the newest live versions to keep (at least 1)')
    .option('--dry-run', `print what would be ${family.remove}d, ${family.remove} nothing`)
    .action(async (base: string | undefined, flags: ProvisionFlags & { keep: string; dryRun?: boolean }) => {
      ctx.exit(await prune(family, base, flags, io));
    });
}

/** `prune`: the report, then exit 0, or the failure's exit code (after printing what was done before it). */
async function prune(
  family: (typeof FAMILIES)[number],
  base: string | undefined,
  flags: ProvisionFlags & { keep: string; dryRun?: boolean },
  io: CliIo,
): Promise<number> {
  let code = EXIT_OK;
  const status = await guarded(io, () =>
    withProvisioning(family, flags, io, async (c) => {
      const keep = integerFlag('--keep', flags.keep, 1)!;
      const report = await c.provisioner.prune(family.kind, base ?? family.defaultBase(c.rx), { keep, dryRun: flags.dryRun === true }, c.signal);
      renderPrune(report, flags.json === true, family.remove, io);
      if (report.failed) {
        io.err.write(`agentrx: ${family.remove} of ${report.failed.version.name} (${report.failed.version.id}) failed: ${report.failed.error.message}\n`);
        io.err.write(`hint: the versions before it were ${family.remove}d; fix the cause and run agentrx ${family.command} prune again\n`);
        code = Math.max(EXIT_FAILED, exitCodeFor(report.failed.error));
      }
    }),
  );
  return status !== EXIT_OK ? status : code;
}
