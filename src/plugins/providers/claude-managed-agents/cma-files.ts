import { checkArtifactName } from '../../../core/artifacts/artifact-name.js';
import { artifactNotFound, newestNamed, newestPerName } from '../../../core/artifacts/artifact-bytes.js';
import type { ArtifactBody, ArtifactCallOptions, ArtifactDownload, ArtifactInfo, ArtifactPutOptions, Artifacts } from '../../../core/artifacts/artifacts.js';
import { AgentRxError, isAgentRxError } from '../../../core/errors.js';
import { LazyHttpClient, type HttpClientFactory } from '../../../core/http/http-client-factory.js';
import type { Logger } from '../../../core/logger.js';
import { CmaFilesHttp } from './cma-files-http.js';
import type { WireMap } from './cma-wire.js';
import { cmaApiOrigin, type CmaProviderOptions } from './cma.config.js';

/**
 * The outputs folder of a Claude Managed Agents session: files the agent writes under it are
 * kept by the service as Files API files scoped to the session (`GET /v1/files?scope_id=<id>`),
 * and so are what `artifacts.list()` shows as the session's outputs. Tell the agent (its system
 * prompt) to write what it produces there.
 */
export const CMA_OUTPUTS_FOLDER = '/mnt/session/outputs';

/** Where `put` mounts a file in the session's container by default: `/data/<name>`. */
export const CMA_INPUTS_FOLDER = '/data';

/** The files clients, one per provider options object. */
const clients = new WeakMap<CmaProviderOptions, CmaFilesHttp>();

/** The provider id. */
const PROVIDER_ID = 'claude-managed-agents';

/** One file of the session as the service lists it. */
interface CmaFileEntry extends ArtifactInfo {
  readonly id: string;
  /** The session resource that mounts it (files put into the session), if any. */
  readonly resourceId?: string;
}

/**
 * The artifacts of one Claude Managed Agents session, through the Files API:
 *
 * - `list`: the session's outputs (files scoped to the session, see {@link CMA_OUTPUTS_FOLDER})
 *   and the files put into it (its `file` resources), one per name — the newest when several
 *   files share a name (every upload is kept).
 * - `fetch`: downloads the newest file of the name (`GET /v1/files/{id}/content`), streamed.
 * - `put`: uploads the file (multipart `POST /v1/files`, streamed) and attaches it to the session
 *   at `mountPath` (default `/data/<name>`) with `POST /v1/sessions/{id}/resources`; a failed
 *   attach deletes the upload again.
 * - `delete`: detaches and deletes every file of the name.
 *
 * Names: any one file name (see `checkArtifactName`); checked before any request.
 */
export class CmaArtifacts implements Artifacts {
  /** The provider id. */
  readonly providerId = PROVIDER_ID;

  constructor(
    private readonly http: CmaFilesHttp,
    readonly sessionId: string,
  ) {}

  /** See the class doc. */
  async list(opts: ArtifactCallOptions = {}): Promise<ArtifactInfo[]> {
    return newestPerName(await this.files(signalOf(opts))).map(infoOf);
  }

  /** See the class doc. Rejects with `not_found` when the session has no file of that name. */
  async fetch(name: string, opts: ArtifactCallOptions = {}): Promise<ArtifactDownload> {
    checkArtifactName(name);
    const signal = signalOf(opts);
    const file = newestNamed(await this.files(signal), name);
    if (!file) throw artifactNotFound(name, this.sessionId, PROVIDER_ID);
    try {
      const { body, size } = await this.http.download(file.id, signal);
      return { name, size: size ?? file.size, body };
    } catch (e) {
      throw isAgentRxError(e, 'http_error') && e.details?.['status'] === 404 ? artifactNotFound(name, this.sessionId, PROVIDER_ID) : e;
    }
  }

  /** See the class doc. */
  async put(name: string, body: ArtifactBody, opts: ArtifactPutOptions = {}): Promise<ArtifactInfo> {
    checkArtifactName(name);
    const mountPath = checkMountPath(opts.mountPath ?? `${CMA_INPUTS_FOLDER}/${name}`);
    const signal = signalOf(opts);
    const uploaded = await this.http.upload(name, body, {
      contentType: opts.contentType ?? 'application/octet-stream',
      size: opts.size,
      signal,
      onProgress: opts.onProgress,
    });
    const file = entryOf(uploaded);
    if (!file) throw new AgentRxError('unexpected_response', 'POST /v1/files answered without a file id', { keys: Object.keys(uploaded) });
    try {
      await this.http.addFileResource(this.sessionId, file.id, mountPath, signal);
    } catch (e) {
      // Without the attach the upload is an orphan: remove it (best effort) and report the attach.
      await this.http.deleteFile(file.id, AbortSignal.timeout(10_000)).catch(() => undefined);
      throw e;
    }
    return infoOf(file);
  }

  /** See the class doc. Rejects with `not_found` when the session has no file of that name. */
  async delete(name: string, opts: ArtifactCallOptions = {}): Promise<void> {
    checkArtifactName(name);
    const signal = signalOf(opts);
    const named = (await this.files(signal)).filter((f) => f.name === name);
    if (named.length === 0) throw artifactNotFound(name, this.sessionId, PROVIDER_ID);
    for (const f of named) {
      if (f.resourceId !== undefined) await this.http.deleteResource(this.sessionId, f.resourceId, signal).catch(ignore404);
      await this.http.deleteFile(f.id, signal).catch(ignore404);
    }
  }

  /** The session-scoped files, then the mounted ones (metadata looked up by id; a gone file is skipped). */
  private async files(signal: AbortSignal): Promise<CmaFileEntry[]> {
    const scoped = (await this.http.listSessionFiles(this.sessionId, signal)).map(entryOf).filter((f): f is CmaFileEntry => f !== undefined);
    const known = new Map(scoped.map((f) => [f.id, f]));
    const resources = await this.http.listResources(this.sessionId, signal);
    for (const r of resources) {
      if (r['type'] !== 'file' || typeof r['file_id'] !== 'string') continue;
      const resourceId = typeof r['id'] === 'string' ? r['id'] : undefined;
      const had = known.get(r['file_id']);
      if (had) {
        known.set(had.id, { ...had, ...(resourceId !== undefined ? { resourceId } : {}) });
        continue;
      }
      const meta = await this.http.getFile(r['file_id'], signal).catch((e: unknown) => {
        if (isAgentRxError(e, 'http_error') && e.details?.['status'] === 404) return undefined;
        throw e;
      });
      const entry = meta && entryOf(meta);
      if (entry) known.set(entry.id, { ...entry, ...(resourceId !== undefined ? { resourceId } : {}) });
    }
    return [...known.values()];
  }
}

/**
 * The artifacts of `sessionId` on the provider configured by `options` (the HTTP client is made
 * once per options object, through the injected factory). Throws `invalid_config` without an
 * API key.
 */
export function cmaArtifacts(options: CmaProviderOptions | undefined, factory: HttpClientFactory, logger: Logger, sessionId: string): Artifacts {
  if (!options || !options.apiKey || typeof options.apiKey.reveal !== 'function' || options.apiKey.isEmpty) {
    throw new AgentRxError('invalid_config', "claude-managed-agents artifacts need providers['claude-managed-agents'].apiKey in the agentrx config");
  }
  let http = clients.get(options);
  if (!http) {
    const instance = new LazyHttpClient(factory, {
      baseURL: cmaApiOrigin(options.baseUrl),
      headers: { 'x-api-key': options.apiKey.reveal(), 'anthropic-version': options.anthropicVersion },
      timeoutMs: options.requestTimeoutMs,
    });
    http = new CmaFilesHttp(instance, factory, options, logger);
    clients.set(options, http);
  }
  return new CmaArtifacts(http, sessionId);
}

function entryOf(m: WireMap): CmaFileEntry | undefined {
  if (typeof m['id'] !== 'string' || typeof m['filename'] !== 'string') return undefined;
  const size = m['size_bytes'];
  return {
    id: m['id'],
    name: m['filename'],
    size: typeof size === 'number' ? size : 0,
    ...(typeof m['created_at'] === 'string' ? { createdAt: m['created_at'] } : {}),
  };
}

function infoOf(f: CmaFileEntry): ArtifactInfo {
  return { name: f.name, size: f.size, id: f.id, ...(f.createdAt !== undefined ? { createdAt: f.createdAt } : {}) };
}

function checkMountPath(path: string): string {
  // eslint-disable-next-line no-control-regex -- the point is to find control characters
  if (!path.startsWith('/') || path.split('/').some((p) => p === '..' || p === '.') || /[\u0000-\u001f]/.test(path)) {
    throw new AgentRxError('invalid_options', `mountPath ${JSON.stringify(path)} must be an absolute path without "." or ".." segments`);
  }
  return path;
}

function ignore404(e: unknown): void {
  if (!(isAgentRxError(e, 'http_error') && e.details?.['status'] === 404)) throw e;
}

function signalOf(opts: ArtifactCallOptions): AbortSignal {
  return opts.signal ?? new AbortController().signal;
}
