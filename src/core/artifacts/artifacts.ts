import type { Readable } from 'node:stream';

/**
 * The files of one provider-side session, by name: what a caller puts in for the agent to read,
 * and what the agent leaves behind. One contract for every host that has session storage (Claude
 * Managed Agents through its Files API, Bedrock AgentCore through the harness's session storage);
 * a provider exposes it with `AgentProvider.artifacts(sessionId, handle?)`, a tool reaches it as
 * `ToolContext.artifacts`, a program as `AgentRx.artifacts(sessionId)`, a shell as
 * `agentrx artifacts ls|get|put|rm`.
 *
 * Every method takes an optional AbortSignal (aborting it aborts the request or command in flight
 * and rejects with `cancelled`) and rejects with an `AgentRxError`:
 * - `invalid_name`: a name the host cannot store safely (empty, `.`/`..`, a path separator, a
 *   control character, or a character outside the host's set) — refused before any request;
 * - `not_found`: no artifact of that name in the session;
 * - `command_failed`: a storage command on the host exited non-zero (AgentCore);
 * - `unexpected_response`: the host answered with a shape agentrx does not understand;
 * - `http_error`: the host refused the request or could not be reached (after the provider's
 *   retries), with `details.status` when it answered.
 *
 * Names are plain file names (no folders). When the host holds several files of one name (the
 * Files API keeps every upload), the newest is the artifact of that name.
 */
export interface Artifacts {
  /** The provider-side session these artifacts belong to. */
  readonly sessionId: string;
  /** The id of the provider (`claude-managed-agents`, `bedrock-agentcore`). */
  readonly providerId: string;

  /** The session's artifacts, one per name (the newest of each), sorted by name. */
  list(opts?: ArtifactCallOptions): Promise<ArtifactInfo[]>;

  /**
   * Opens the artifact `name` for reading. Resolves once the host answered; the bytes then flow
   * through `body` (a Node Readable: pipe it, iterate it, or `readArtifact` it whole). A failure
   * while reading (a drop, the signal) errors `body` with an `AgentRxError`.
   */
  fetch(name: string, opts?: ArtifactCallOptions): Promise<ArtifactDownload>;

  /**
   * Stores `body` as the artifact `name` (replacing the session's view of an older one of that
   * name) and resolves with what was stored. A stream body is read once, as it is sent (never
   * held whole); bytes, a string or a file path's stream all work. See the provider for where the
   * agent sees the file (CMA: mounted at `/data/<name>` by default; AgentCore: in the session
   * storage folder).
   */
  put(name: string, body: ArtifactBody, opts?: ArtifactPutOptions): Promise<ArtifactInfo>;

  /** Removes the artifact `name` (every file of that name). Rejects with `not_found` when there is none. */
  delete(name: string, opts?: ArtifactCallOptions): Promise<void>;
}

/** One artifact as `list` and `put` describe it. */
export interface ArtifactInfo {
  /** The file name. */
  readonly name: string;
  /** Size in bytes. */
  readonly size: number;
  /** When the host created (or last wrote) it, ISO 8601, when the host says. */
  readonly createdAt?: string;
  /** The host's id of the file (the Files API `file_…` id), when it has one. */
  readonly id?: string;
}

/** An opened artifact (`fetch`). */
export interface ArtifactDownload {
  /** The artifact's name. */
  readonly name: string;
  /** Its size in bytes, when known before reading (progress). */
  readonly size?: number;
  /** The bytes. The caller must consume or destroy it. */
  readonly body: Readable;
}

/** What `put` accepts: bytes, text (UTF-8), or a stream of bytes (a Readable or any async iterable). */
export type ArtifactBody = string | Uint8Array | Readable | AsyncIterable<Uint8Array | string>;

/** Options of every artifacts call. */
export interface ArtifactCallOptions {
  /** Aborts the call (and an open download's body). */
  readonly signal?: AbortSignal;
}

/** Options of `put`. */
export interface ArtifactPutOptions extends ArtifactCallOptions {
  /** Length of a stream body in bytes, when known (sent as the upload's length; progress). */
  readonly size?: number;
  /** MIME type of the content (default `application/octet-stream`). */
  readonly contentType?: string;
  /**
   * Where the agent sees the file, for hosts that mount inputs (Claude Managed Agents: default
   * `/data/<name>`). Ignored by hosts whose storage is one folder (AgentCore).
   */
  readonly mountPath?: string;
  /** Called as bytes go out (bytes sent so far): for progress reports. Must not throw. */
  readonly onProgress?: (sentBytes: number) => void;
}
