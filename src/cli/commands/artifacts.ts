import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { AgentRx } from '../../agentrx.js';
import type { Artifacts } from '../../core/artifacts/artifacts.js';
import type { CliIo, CommandContext, RegisterCommand } from '../cli-io.js';
import { pathFrom } from '../flags.js';
import { guarded } from '../report.js';
import { mergeConfig, readConfig } from '../run-config.js';

/** Files at least this large get progress lines on stderr (1 MB). */
export const PROGRESS_MIN_BYTES = 1024 * 1024;

/** Flags every `artifacts` subcommand takes. */
interface ArtifactsFlags {
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
    .action(async (flags: ArtifactsFlags & { json?: boolean }) => run(ctx, flags, (a, io) => list(a, flags.json === true, io)));
  common(artifacts.command('get').description('write an artifact to stdout or a file').argument('<name>', 'artifact name (agentrx artifacts ls)'))
    .option('-o, --output <file>', 'file to write (default: stdout)')
    .action(async (name: string, flags: ArtifactsFlags & { output?: string }) => run(ctx, flags, (a, io) => get(a, name, flags.output, io)));
  common(artifacts.command('put').description('store a file as an artifact of the session').argument('<file>', 'file to upload'))
    .option('--name <name>', 'artifact name (default: the file name)')
    .action(async (file: string, flags: ArtifactsFlags & { name?: string }) => run(ctx, flags, (a, io) => put(a, file, flags.name, io)));
  common(artifacts.command('rm').description('remove an artifact (every file of that name)').argument('<name>', 'artifact name')).action(
    async (name: string, flags: ArtifactsFlags) => run(ctx, flags, (a, io) => remove(a, name, io)),
  );
};

function common(cmd: Command): Command {
  return cmd
    .requiredOption('--session <id>', 'the provider-side session id (the session id a run printed)')
    .option('-c, --config <file>', 'JSON config file (${VAR} interpolation applies)')
    .option('--provider <id>', 'provider (default: the config file\'s "provider")');
}

/** Builds the configured instance (no MCP servers, no modules: only the provider is needed), runs `body`, stops it. */
async function run(ctx: CommandContext, flags: ArtifactsFlags, body: (a: Artifacts, io: CliIo) => Promise<void>): Promise<void> {
  const { io } = ctx;
  ctx.exit(
    await guarded(io, async () => {
      const base = flags.config ? await readConfig(flags.config, io) : {};
      const config = mergeConfig(base, { provider: flags.provider });
      delete config['mcp'];
      delete config['modules'];
      const rx = await AgentRx.create({ config, env: io.env });
      try {
        await body(rx.artifacts(flags.session), io);
      } finally {
        await rx.stop();
      }
    }),
  );
}

async function list(a: Artifacts, json: boolean, io: CliIo): Promise<void> {
  const files = await a.list();
  if (json) {
    for (const f of files) io.out.write(`${JSON.stringify(f)}\n`);
    return;
  }
  if (files.length === 0) {
    io.err.write(`no artifacts in ${a.providerId} session ${a.sessionId}\n`);
    return;
  }
  const width = Math.max(...files.map((f) => f.name.length));
  for (const f of files) io.out.write(`${f.name.padEnd(width)}  ${String(f.size).padStart(12)}  ${f.createdAt ?? ''}\n`.replace(/ +\n$/, '\n'));
}

async function get(a: Artifacts, name: string, output: string | undefined, io: CliIo): Promise<void> {
  const { body, size } = await a.fetch(name);
  const counted = withProgress(body, `${name}: downloaded`, size, io.err);
  if (output === undefined) {
    await copyTo(counted, io.out);
    return;
  }
  const path = pathFrom(io.cwd, output);
  try {
    await pipeline(counted, createWriteStream(path));
  } catch (e) {
    await unlink(path).catch(() => undefined);
    throw e;
  }
  io.err.write(`wrote ${name} to ${output}\n`);
}

async function put(a: Artifacts, file: string, name: string | undefined, io: CliIo): Promise<void> {
  const path = pathFrom(io.cwd, file);
  const { size } = await stat(path);
  const artifactName = name ?? basename(path);
  const report = progress(`${artifactName}: uploaded`, size, io.err);
  const info = await a.put(artifactName, createReadStream(path), { size, ...(report ? { onProgress: report } : {}) });
  io.err.write(`stored ${info.name} (${info.size} bytes) in ${a.providerId} session ${a.sessionId}\n`);
}

async function remove(a: Artifacts, name: string, io: CliIo): Promise<void> {
  await a.delete(name);
  io.err.write(`removed ${name} from ${a.providerId} session ${a.sessionId}\n`);
}

/** Writes `body` to `out` without ending it (stdout stays open), honouring backpressure. */
async function copyTo(body: Readable, out: Writable): Promise<void> {
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (!out.write(chunk)) await once(out, 'drain');
  }
}

/** `body` with progress lines on `err` when it is large (see `progress`); read once, as it flows. */
function withProgress(body: Readable, label: string, size: number | undefined, err: Writable): Readable {
  const report = progress(label, size, err);
  if (!report) return body;
  return Readable.from(
    (async function* () {
      let seen = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        report((seen += chunk.length));
        yield chunk;
      }
    })(),
  );
}

/**
 * A progress reporter for a transfer of `size` bytes: a line on `err` at every further tenth
 * (`<label> 3.0 of 10.0 MB (30%)`); undefined below {@link PROGRESS_MIN_BYTES} or when the size
 * is unknown.
 */
export function progress(label: string, size: number | undefined, err: Writable): ((bytes: number) => void) | undefined {
  if (size === undefined || size < PROGRESS_MIN_BYTES) return undefined;
  let shown = 0;
  const mb = (n: number): string => (n / (1024 * 1024)).toFixed(1);
  return (bytes) => {
    const tenth = Math.floor((bytes / size) * 10);
    if (tenth <= shown) return;
    shown = tenth;
    err.write(`${label} ${mb(bytes)} of ${mb(size)} MB (${Math.min(100, tenth * 10)}%)\n`);
  };
}
