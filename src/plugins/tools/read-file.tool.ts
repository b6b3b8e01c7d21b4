import { constants as fsConstants } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { IsNotEmpty, IsString, MaxLength } from '../../core/util/class-validator.js';
import { JSONSchema } from '../../core/util/class-validator.js';
import { inject, injectable } from '../../core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../core/plugin/tool-handler.js';
import { ReadFileOptions, resolveReadFileOptions } from './tools.config.js';

/** Input of `read_file`. */
export class ReadFileInput {
  /** Path relative to the configured root, e.g. `src/index.ts`. */
  @JSONSchema({ description: 'Path of the file relative to the project root, e.g. "src/index.ts".' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(4096)
  path!: string;
}

/** Bytes read per `read` call; the signal is checked between chunks. */
const CHUNK_BYTES = 64 * 1024;

/**
 * `read_file`: returns the text of a UTF-8 file under the configured root
 * ({@link ReadFileOptions}). Read-only, so idempotent.
 *
 * Returns the file's text as a plain string. A file longer than `maxBytes` is not an error: the
 * first `maxBytes` (cut back to a whole UTF-8 character) are returned followed by a line
 * `[truncated: showing the first N of M bytes]`.
 *
 * Throws an Error with a clear message (the core reports it as an `is_error` result) for an
 * absolute path, a path whose `..` segments leave the root, a path or symlink whose real location
 * is outside the root, a missing file, a directory or other non-regular file, a binary file (one
 * containing a NUL byte) and an aborted signal. Messages name the requested relative path, never
 * the root's absolute location.
 */
@injectable()
export class ReadFileToolHandler implements ToolHandler<ReadFileInput> {
  readonly name = 'read_file';
  readonly description =
    'Reads a UTF-8 text file. The path is relative to the project root; absolute paths and paths ' +
    'leaving the root are refused. Long files are truncated with a note saying so.';
  readonly inputType = ReadFileInput;
  readonly idempotent = true;

  private readonly options: Required<ReadFileOptions>;

  constructor(@inject(ReadFileOptions) options: ReadFileOptions) {
    this.options = resolveReadFileOptions(options);
  }

  async handle(input: ReadFileInput, ctx: ToolContext): Promise<string> {
    const { signal } = ctx;
    const requested = input.path;
    signal.throwIfAborted();
    if (requested.includes('\0')) throw new Error('path must not contain a NUL character');
    if (path.isAbsolute(requested) || path.win32.isAbsolute(requested)) {
      throw new Error(`'${requested}' is an absolute path; give a path relative to the root directory`);
    }

    const root = this.options.root;
    const lexical = path.resolve(root, requested);
    if (!isInside(root, lexical)) throw new Error(`'${requested}' leaves the root directory`);

    const realRoot = await fs.realpath(root).catch(() => {
      throw new Error('the root directory of read_file does not exist or is not accessible');
    });
    signal.throwIfAborted();
    const real = await fs.realpath(lexical).catch((e: unknown) => {
      throw fsError(e, requested);
    });
    signal.throwIfAborted();
    if (!isInside(realRoot, real)) throw new Error(`'${requested}' resolves to a location outside the root directory`);

    // stat before open: opening a FIFO for reading would block until a writer appears.
    const stats = await fs.stat(real).catch((e: unknown) => {
      throw fsError(e, requested);
    });
    signal.throwIfAborted();
    if (stats.isDirectory()) throw new Error(`'${requested}' is a directory, not a file`);
    if (!stats.isFile()) throw new Error(`'${requested}' is not a regular file`);

    // O_NOFOLLOW/O_NONBLOCK: if the checked path was swapped for a symlink or a FIFO since, fail instead of following or blocking.
    const flags = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);
    const handle = await fs.open(real, flags).catch((e: unknown) => {
      throw fsError(e, requested);
    });
    try {
      const opened = await handle.stat();
      if (!opened.isFile()) throw new Error(`'${requested}' is not a regular file`);
      const { maxBytes } = this.options;
      // One byte more than allowed tells whether the file is longer, whatever its size was at stat time.
      const buffer = Buffer.alloc(maxBytes + 1);
      let length = 0;
      while (length < buffer.length) {
        signal.throwIfAborted();
        const { bytesRead } = await handle.read(buffer, length, Math.min(CHUNK_BYTES, buffer.length - length), length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      signal.throwIfAborted();
      const truncated = length > maxBytes;
      const end = truncated ? utf8Boundary(buffer, maxBytes) : length;
      const bytes = buffer.subarray(0, end);
      if (bytes.includes(0)) throw new Error(`'${requested}' looks like a binary file; read_file returns text only`);
      const text = bytes.toString('utf8');
      if (!truncated) return text;
      const total = Math.max(opened.size, length);
      return `${text}\n[truncated: showing the first ${end} of ${total} bytes]`;
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
}

/** True when `target` is `root` itself or below it. Both must be absolute. */
function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/** The largest end ≤ `end` that does not split a UTF-8 sequence of `buffer`. */
function utf8Boundary(buffer: Buffer, end: number): number {
  let lead = end;
  // Step back over at most 3 continuation bytes (10xxxxxx) to the lead byte of the last sequence.
  while (lead > 0 && end - lead < 3 && (buffer[lead - 1]! & 0xc0) === 0x80) lead--;
  if (lead === 0) return end;
  const first = buffer[lead - 1]!;
  const size = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  // The sequence starting at lead-1 is complete only if it ends at or before `end`.
  return lead - 1 + size <= end ? end : lead - 1;
}

/** A readable Error for an fs failure on `requested`. */
function fsError(e: unknown, requested: string): Error {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new Error(`'${requested}' does not exist`);
    case 'EACCES':
    case 'EPERM':
      return new Error(`permission denied reading '${requested}'`);
    case 'ELOOP':
      return new Error(`'${requested}' is a symlink loop or was replaced by a symlink`);
    default:
      return new Error(`cannot read '${requested}' (${code ?? 'unknown error'})`);
  }
}
