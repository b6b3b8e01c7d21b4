import type { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { checkArtifactName } from '../../../core/artifacts/artifact-name.js';
import { artifactNotFound, bytesOf, fixedChunks, readableOf } from '../../../core/artifacts/artifact-bytes.js';
import type { ArtifactBody, ArtifactCallOptions, ArtifactDownload, ArtifactInfo, ArtifactPutOptions, Artifacts } from '../../../core/artifacts/artifacts.js';
import { AgentRxError, isAgentRxError } from '../../../core/errors.js';
import { abortReason } from '../../../core/util/async.js';
import {
  AGENTCORE_CHUNK_BYTES,
  PART_SUFFIX,
  commandFailed,
  parseListing,
  runCommand,
  saysNoSuchFile,
  storageCommands,
  type CommandPlane,
  type CommandTarget,
} from './agentcore-storage-commands.js';
import { loadDataSdk } from './agentcore-sdk.js';
import type { AgentCoreProviderOptions } from './agentcore.config.js';
import { validateRuntimeSessionId } from './runtime-session-id.js';

import { AGENTCORE_DEFAULT_STORAGE_PATH } from './agentcore-storage-limits.js';

export { AGENTCORE_CHUNK_BYTES, AGENTCORE_DEFAULT_STORAGE_PATH, AGENTCORE_MAX_COMMAND_CHARS } from './agentcore-storage-limits.js';

const PROVIDER_ID = 'bedrock-agentcore';

/** `timeout` of each storage command, seconds (a write of one chunk, or a read of a large file). */
const STORAGE_COMMAND_TIMEOUT_S = 120;

/** How `AgentCoreArtifacts` reaches one session's storage. */
export interface AgentCoreStorageOptions extends CommandTarget {
  /** The storage folder (`sessionStoragePath`). */
  readonly folder: string;
  /** Content bytes per write command (default `AGENTCORE_CHUNK_BYTES`; tests use less). */
  readonly chunkBytes?: number;
}

/**
 * The artifacts of one Bedrock AgentCore runtime session: files in the harness's session storage
 * folder (`sessionStoragePath`, default `/mnt/data`), reached through `InvokeAgentRuntimeCommand`
 * shell commands (see `agentcore-storage-commands.ts`).
 *
 * - `list`: the folder's regular files (`ls`), with their size and modification time.
 * - `fetch`: lists the folder first (the size, and `not_found` before any read), then streams
 *   `base64` of the file, decoded as it is read (never held whole).
 * - `put`: the content in base64 chunks of at most 45 KiB each (every command under the 64 KiB
 *   cap), appended to a hidden part file that is renamed into place at the end: readers never see
 *   half a file.
 * - `delete`: `rm`.
 *
 * Names are restricted to `[A-Za-z0-9._-]` (not `.`/`..`), checked before any command. A missing
 * file is `not_found`; another non-zero exit is `command_failed` (with `details.exitCode`).
 */
export class AgentCoreArtifacts implements Artifacts {
  /** The provider id. */
  readonly providerId = PROVIDER_ID;
  /** The runtime session id. */
  readonly sessionId: string;

  constructor(
    private readonly plane: () => Promise<CommandPlane>,
    private readonly o: AgentCoreStorageOptions,
  ) {
    this.sessionId = o.runtimeSessionId;
  }

  /** See the class doc. A folder that does not exist yet holds nothing. */
  async list(opts: ArtifactCallOptions = {}): Promise<ArtifactInfo[]> {
    const out = await runCommand(this.plane, this.o, storageCommands.list(this.o.folder), { signal: signalOf(opts), retry: true });
    if (out.exitCode !== 0) {
      if (saysNoSuchFile(out.stderr)) return [];
      throw commandFailed('listing the session storage', out);
    }
    return parseListing(out.stdout).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** See the class doc. Rejects with `not_found` when the folder has no such file. */
  async fetch(name: string, opts: ArtifactCallOptions = {}): Promise<ArtifactDownload> {
    checkArtifactName(name, 'portable');
    const signal = signalOf(opts);
    const info = (await this.list({ signal })).find((f) => f.name === name);
    if (!info) throw artifactNotFound(name, this.sessionId, PROVIDER_ID);
    const body = readableOf(this.decode(name, signal), (e) =>
      signal.aborted ? abortReason(signal) : isAgentRxError(e) ? e : new AgentRxError('stream_error', String(e)),
    );
    return { name, size: info.size, body };
  }

  /** See the class doc. */
  async put(name: string, body: ArtifactBody, opts: ArtifactPutOptions = {}): Promise<ArtifactInfo> {
    checkArtifactName(name, 'portable');
    const signal = signalOf(opts);
    const part = this.path(`.${name}${PART_SUFFIX}`);
    let size = 0;
    let first = true;
    for await (const chunk of fixedChunks(bytesOf(body), this.o.chunkBytes ?? AGENTCORE_CHUNK_BYTES)) {
      const out = await runCommand(this.plane, this.o, storageCommands.write(part, chunk.toString('base64'), !first), { signal, retry: first });
      if (out.exitCode !== 0) throw commandFailed(`writing ${name} (at byte ${size})`, out);
      first = false;
      size += chunk.length;
      opts.onProgress?.(size);
    }
    const moved = await runCommand(this.plane, this.o, storageCommands.rename(part, this.path(name)), { signal, retry: true });
    if (moved.exitCode !== 0) throw commandFailed(`moving ${name} into place`, moved);
    return { name, size, createdAt: new Date().toISOString() };
  }

  /** See the class doc. Rejects with `not_found` when the folder has no such file. */
  async delete(name: string, opts: ArtifactCallOptions = {}): Promise<void> {
    checkArtifactName(name, 'portable');
    const out = await runCommand(this.plane, this.o, storageCommands.remove(this.path(name)), { signal: signalOf(opts), retry: true });
    if (out.exitCode === 0) return;
    if (saysNoSuchFile(out.stderr)) throw artifactNotFound(name, this.sessionId, PROVIDER_ID);
    throw commandFailed(`deleting ${name}`, out);
  }

  /**
   * Streams the read command's stdout as decoded bytes, reading on only as the consumer pulls;
   * its exit code is checked at the end. A consumer that stops early aborts the command.
   */
  private async *decode(name: string, signal: AbortSignal): AsyncGenerator<Buffer> {
    const stop = new AbortController();
    const pending: Buffer[] = [];
    let wake: (() => void) | undefined;
    let drained: (() => void) | undefined;
    let carry = '';
    const onStdout = async (text: string): Promise<void> => {
      const all = carry + text.replace(/\s+/g, '');
      const whole = all.length - (all.length % 4);
      carry = all.slice(whole);
      if (whole > 0) pending.push(Buffer.from(all.slice(0, whole), 'base64'));
      wake?.();
      if (pending.length > 0 && !stop.signal.aborted) await new Promise<void>((resolve) => (drained = resolve));
    };
    let finished = false;
    const run = runCommand(this.plane, this.o, storageCommands.read(this.path(name)), {
      signal: AbortSignal.any([signal, stop.signal]),
      retry: false,
      onStdout,
    }).finally(() => {
      finished = true;
      wake?.();
    });
    run.catch(() => undefined);
    try {
      for (;;) {
        while (pending.length > 0) yield pending.shift()!;
        drained?.();
        drained = undefined;
        if (finished) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      const out = await run;
      if (out.exitCode !== 0) throw saysNoSuchFile(out.stderr) ? artifactNotFound(name, this.sessionId, PROVIDER_ID) : commandFailed(`reading ${name}`, out);
      if (carry !== '') yield Buffer.from(carry, 'base64');
    } finally {
      if (!finished) stop.abort(new AgentRxError('cancelled', `reading ${name} was abandoned by its reader`));
      drained?.();
    }
  }

  private path(name: string): string {
    return `${this.o.folder}/${name}`;
  }
}

function signalOf(opts: ArtifactCallOptions): AbortSignal {
  return opts.signal ?? new AbortController().signal;
}

/** The contract `agentCoreArtifacts` returns (re-exported for the provider). */
export type { Artifacts };

/**
 * The artifacts of runtime session `sessionId` for the provider configured by `options`: the
 * harness of `handle` (what `provision` returned), else `options.harnessArn`; the storage folder
 * `options.sessionStoragePath`. Throws `invalid_config` without a harness, `invalid_options` for
 * a malformed session id. Makes no call: the SDK client is built at the first command.
 */
export function agentCoreArtifacts(
  options: AgentCoreProviderOptions,
  sessionId: string,
  handle: unknown,
  dataPlane: () => Promise<{ readonly client: BedrockAgentCoreClient }>,
): Artifacts {
  const fromHandle = typeof handle === 'object' && handle !== null ? (handle as { harnessArn?: unknown }).harnessArn : undefined;
  const harnessArn = typeof fromHandle === 'string' ? fromHandle : options.harnessArn;
  if (harnessArn === undefined) {
    throw new AgentRxError('invalid_config', 'bedrock-agentcore artifacts need a harness: set providers.bedrock-agentcore.harnessArn', {
      path: 'providers.bedrock-agentcore.harnessArn',
    });
  }
  const plane = async (): Promise<CommandPlane> => ({ client: (await dataPlane()).client, sdk: await loadDataSdk() });
  return new AgentCoreArtifacts(plane, {
    folder: options.sessionStoragePath ?? AGENTCORE_DEFAULT_STORAGE_PATH,
    harnessArn,
    runtimeSessionId: validateRuntimeSessionId(sessionId),
    ...(options.qualifier !== undefined ? { qualifier: options.qualifier } : {}),
    timeoutSeconds: STORAGE_COMMAND_TIMEOUT_S,
    maxRetries: options.maxRetries,
    retryBaseMs: options.retryBaseMs,
  });
}
