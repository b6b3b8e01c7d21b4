import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AgentRx } from '../../agentrx.js';
import type { Artifacts } from '../../core/artifacts/artifacts.js';
import type { CliIo, CommandContext } from '../cli-io.js';
import { pathFrom } from '../flags.js';
import { guarded } from '../report.js';
import { mergeConfig, readConfig } from '../run-config.js';
import type { ArtifactsFlags } from './artifacts.js';

/** Files at least this large get progress lines on stderr (1 MB). */
export const PROGRESS_MIN_BYTES = 1024 * 1024;
/** Builds the configured instance (no MCP servers, no modules: only the provider is needed), runs `body`, stops it. */
export async function run(ctx: CommandContext, flags: ArtifactsFlags, body: (a: Artifacts, io: CliIo) => Promise<void>): Promise<void> {
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

export async function list(a: Artifacts, json: boolean, io: CliIo): Promise<void> {
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

export async function get(a: Artifacts, name: string, output: string | undefined, io: CliIo): Promise<void> {
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

export async function put(a: Artifacts, file: string, name: string | undefined, io: CliIo): Promise<void> {
  const path = pathFrom(io.cwd, file);
  const { size } = await stat(path);
  const artifactName = name ?? basename(path);
  const report = progress(`${artifactName}: uploaded`, size, io.err);
  const info = await a.put(artifactName, createReadStream(path), { size, ...(report ? { onProgress: report } : {}) });
  io.err.write(`stored ${info.name} (${info.size} bytes) in ${a.providerId} session ${a.sessionId}\n`);
}

export async function remove(a: Artifacts, name: string, io: CliIo): Promise<void> {
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
