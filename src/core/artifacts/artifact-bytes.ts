import { Readable } from 'node:stream';
import { AgentRxError } from '../errors.js';
import type { ArtifactBody, ArtifactInfo, Artifacts, ArtifactCallOptions } from './artifacts.js';

/** Byte plumbing shared by the artifacts implementations and their callers. */

/** True when `body` can be sent again after a failed attempt (bytes or text; a stream cannot). */
export function isReplayable(body: ArtifactBody): body is string | Uint8Array {
  return typeof body === 'string' || body instanceof Uint8Array;
}

/** The length of a replayable body in bytes. */
export function byteLengthOf(body: string | Uint8Array): number {
  return typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
}

/** The bytes of `body` as an async iterable of Buffers (a string as UTF-8; nothing is copied whole). */
export async function* bytesOf(body: ArtifactBody): AsyncGenerator<Buffer> {
  if (typeof body === 'string') {
    yield Buffer.from(body, 'utf8');
    return;
  }
  if (body instanceof Uint8Array) {
    yield Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    return;
  }
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
    yield typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }
}

/**
 * Re-slices a byte stream into pieces of exactly `size` bytes (the last one shorter; one empty
 * piece for an empty stream), copying only the bytes of the piece being filled.
 */
export async function* fixedChunks(source: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let filled = 0;
  let any = false;
  for await (let buf of source) {
    while (buf.length > 0) {
      const take = Math.min(size - filled, buf.length);
      parts.push(buf.subarray(0, take));
      filled += take;
      buf = buf.subarray(take);
      if (filled === size) {
        any = true;
        yield parts.length === 1 ? parts[0]! : Buffer.concat(parts, filled);
        parts = [];
        filled = 0;
      }
    }
  }
  if (filled > 0 || !any) yield Buffer.concat(parts, filled);
}

/**
 * The newest of `files` named `name` (latest `createdAt`; among equal or missing times, the one
 * listed last), or undefined.
 */
export function newestNamed<T extends ArtifactInfo>(files: readonly T[], name: string): T | undefined {
  let best: T | undefined;
  for (const f of files) {
    if (f.name !== name) continue;
    if (!best || (f.createdAt ?? '') >= (best.createdAt ?? '')) best = f;
  }
  return best;
}

/** One entry per name (the newest, see `newestNamed`), sorted by name. */
export function newestPerName<T extends ArtifactInfo>(files: readonly T[]): T[] {
  const names = [...new Set(files.map((f) => f.name))].sort();
  return names.map((n) => newestNamed(files, n)!);
}

/** The `not_found` error of `name` in `sessionId`. */
export function artifactNotFound(name: string, sessionId: string, providerId: string): AgentRxError {
  return new AgentRxError(
    'not_found',
    `no artifact named ${JSON.stringify(name)} in ${providerId} session ${sessionId} (agentrx artifacts ls --session ${sessionId} lists them)`,
    { name, sessionId, providerId },
  );
}

/**
 * Fetches the artifact `name` and reads it whole into one Buffer: for small files. Stream
 * `fetch(name).body` instead for large ones.
 */
export async function readArtifact(artifacts: Artifacts, name: string, opts?: ArtifactCallOptions): Promise<Buffer> {
  const { body } = await artifacts.fetch(name, opts);
  const parts: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer | string>) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(parts);
}

/** A Readable over `chunks` that errors with `toError(e)` when reading them fails. */
export function readableOf(chunks: AsyncIterable<Buffer>, toError: (e: unknown) => Error): Readable {
  async function* guarded(): AsyncGenerator<Buffer> {
    try {
      yield* chunks;
    } catch (e) {
      throw toError(e);
    }
  }
  return Readable.from(guarded(), { objectMode: false });
}
