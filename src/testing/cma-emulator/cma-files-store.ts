import type { CmaEmulatorState } from './cma-state.js';

/**
 * The Files API side of the Claude Managed Agents emulator: the files it holds (every upload is a
 * new file, names may repeat), the `file` resources mounted into sessions, the fault plan of the
 * files routes, and a small `multipart/form-data` reader for uploads.
 */

/** A status answer of a files route (`body` replaces the default error body). */
export interface CmaFilesStatusFault {
  readonly kind: 'status';
  readonly status: number;
  readonly retryAfter?: number | string;
  readonly body?: unknown;
}

/** A download that is slow: its headers wait `headerDelayMs`; then, after `stallAfterBytes` bytes, the rest waits `stallMs`. */
export interface CmaFilesSlowFault {
  readonly kind: 'slow';
  readonly headerDelayMs?: number;
  readonly stallAfterBytes?: number;
  readonly stallMs?: number;
}

/** What goes wrong on the files routes, by 0-based request index per kind. */
export interface CmaFilesFaultPlan {
  /** `GET /v1/files` (list) requests: a status, or `no_data` (200 with a body that has no `data`). */
  readonly list?: Readonly<Record<number, CmaFilesStatusFault | { readonly kind: 'no_data' }>>;
  /** `GET /v1/files/{id}/content` requests: a status, or a slow answer. */
  readonly download?: Readonly<Record<number, CmaFilesStatusFault | CmaFilesSlowFault>>;
  /** `POST /v1/files` requests (answered without storing). */
  readonly upload?: Readonly<Record<number, CmaFilesStatusFault>>;
}

/** One stored file. */
export interface CmaStoredFile {
  readonly id: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly bytes: Buffer;
  readonly createdAt: string;
  /** The session it is scoped to (an output of that session), if any. */
  readonly scope?: string;
}

/** One `file` resource of a session. */
export interface CmaFileResource {
  readonly id: string;
  readonly fileId: string;
  readonly mountPath: string;
  readonly createdAt: string;
}

/** The files of one emulator. */
export interface CmaFilesStore {
  readonly files: Map<string, CmaStoredFile>;
  /** `file` resources by session id. */
  readonly resources: Map<string, CmaFileResource[]>;
  readonly counters: { list: number; download: number; upload: number };
}

const stores = new WeakMap<CmaEmulatorState, CmaFilesStore>();

/** The files store of the emulator whose state is `state` (made on first use). */
export function filesOf(state: CmaEmulatorState): CmaFilesStore {
  let s = stores.get(state);
  if (!s) {
    s = { files: new Map(), resources: new Map(), counters: { list: 0, download: 0, upload: 0 } };
    stores.set(state, s);
  }
  return s;
}

/**
 * Stores `bytes` as a file scoped to session `sessionId`, as the service does with what the agent
 * writes under its outputs folder; returns the file id.
 */
export function writeSessionOutput(
  state: CmaEmulatorState,
  sessionId: string,
  filename: string,
  bytes: Uint8Array,
  mimeType = 'application/octet-stream',
): string {
  const id = state.newResourceId('file');
  filesOf(state).files.set(id, { id, filename, mimeType, bytes: Buffer.from(bytes), createdAt: state.now(), scope: sessionId });
  state.changed();
  return id;
}

/** The metadata object of `f`, shaped like the service's (`BetaFileMetadata`). */
export function fileObject(f: CmaStoredFile): Record<string, unknown> {
  return {
    id: f.id,
    type: 'file',
    filename: f.filename,
    mime_type: f.mimeType,
    size_bytes: f.bytes.length,
    created_at: f.createdAt,
    downloadable: true,
    scope: f.scope !== undefined ? { id: f.scope, type: 'session' } : null,
  };
}

/** The `file` resource object of `r` (`BetaManagedAgentsFileResource`). */
export function resourceObject(r: CmaFileResource): Record<string, unknown> {
  return { id: r.id, type: 'file', file_id: r.fileId, mount_path: r.mountPath, created_at: r.createdAt, updated_at: r.createdAt };
}

/** One part of a multipart body. */
export interface MultipartPart {
  readonly name: string;
  readonly filename?: string;
  readonly contentType?: string;
  readonly data: Buffer;
}

/** The parts of a `multipart/form-data` body, or undefined when `contentType` has no boundary or the body is malformed. */
export function parseMultipart(contentType: string | undefined, body: Buffer): MultipartPart[] | undefined {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  if (!m || !/^multipart\/form-data/i.test(contentType ?? '')) return undefined;
  const delimiter = Buffer.from(`--${m[1] ?? m[2]}`);
  const parts: MultipartPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) return undefined;
  for (;;) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') return parts;
    const headEnd = body.indexOf('\r\n\r\n', start);
    if (headEnd < 0) return undefined;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headEnd + 4);
    if (next < 0) return undefined;
    const head = body.subarray(start + 2, headEnd).toString('utf8');
    const disposition = /content-disposition:([^\r\n]*)/i.exec(head)?.[1] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) return undefined;
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    const type = /content-type:\s*([^\r\n]*)/i.exec(head)?.[1]?.trim();
    parts.push({ name, data: body.subarray(headEnd + 4, next), ...(filename !== undefined ? { filename } : {}), ...(type ? { contentType: type } : {}) });
    at = next + 2;
  }
}
