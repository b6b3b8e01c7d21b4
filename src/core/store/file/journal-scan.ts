import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { AgentRxError } from '../../errors.js';
import { lineShapeProblem } from './journal-shape.js';
import { storeError } from './store-error.js';

/** How much of a journal is read at a time. */
const CHUNK = 1 << 20;

/** An incomplete or unparsable last line of a journal: where it starts, its length and its line number. */
export interface TornTail {
  readonly at: number;
  readonly bytes: number;
  readonly line: number;
}

/**
 * Reads a journal's complete lines from `offset` up to `size`, handing each to `accept` (which
 * folds it, or returns why it does not parse). A line that does not parse is a torn tail when it is
 * the last one, and a `store_error` when more lines follow it (the journal cannot be trusted past
 * it). A line that is JSON but not of a journal line's shape (a line edited by hand: a record
 * field of the wrong type, a ledger that is not a list) is a `store_error` naming the file and the
 * line wherever it is (no crash leaves one), as is anything `accept` throws that is not an
 * AgentRxError. Returns the torn tail, if any: it is left out of what was accepted, so a later
 * scan looks at it again. `nextLine` gives the number of the next line to accept.
 */
export async function scanLines(
  fh: FileHandle,
  file: string,
  offset: number,
  size: number,
  nextLine: () => number,
  accept: (text: string, offset: number, bytes: number) => string | undefined,
): Promise<TornTail | undefined> {
  let carry = Buffer.alloc(0);
  let bad: { at: number; line: number; reason: string } | undefined;
  while (offset + carry.length < size) {
    const want = Math.min(CHUNK, size - offset - carry.length);
    const chunk = Buffer.alloc(want);
    const { bytesRead } = await fh.read(chunk, 0, want, offset + carry.length);
    if (bytesRead === 0) break;
    let buf = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    let nl: number;
    while ((nl = buf.indexOf(10)) >= 0) {
      if (bad)
        throw storeError(
          file,
          `line ${bad.line} is corrupt (${bad.reason}) and is followed by more lines; the journal cannot be trusted past line ${bad.line - 1}`,
          undefined,
          { line: bad.line },
        );
      const reason = acceptChecked(file, buf.toString('utf8', 0, nl), offset, nl, nextLine(), accept);
      if (reason) bad = { at: offset, line: nextLine(), reason };
      offset += nl + 1;
      buf = buf.subarray(nl + 1);
    }
    carry = Buffer.from(buf);
  }
  if (bad) return { at: bad.at, bytes: size - bad.at, line: bad.line };
  if (carry.length > 0) return { at: offset, bytes: carry.length, line: nextLine() };
  return undefined;
}

/** `accept(text, …)` after the shape check of a line past the header; what either finds wrong is a `store_error` naming `line`. */
function acceptChecked(
  file: string,
  text: string,
  offset: number,
  bytes: number,
  line: number,
  accept: (text: string, offset: number, bytes: number) => string | undefined,
): string | undefined {
  const shape = offset === 0 ? undefined : lineShapeProblem(text);
  if (shape) throw storeError(file, `line ${line} ${shape}; fix or remove the line, or delete the session`, undefined, { line });
  try {
    return accept(text, offset, bytes);
  } catch (e) {
    if (e instanceof AgentRxError) throw e;
    throw storeError(file, `line ${line} cannot be read (${e instanceof Error ? e.message : String(e)})`, undefined, { line });
  }
}

/** Truncates `file` at the start of its torn tail (a crash mid-write). */
export async function cutTornTail(file: string, torn: TornTail): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(file, 'r+');
    await fh.truncate(torn.at);
  } catch (e) {
    throw storeError(file, `cannot cut the torn last line ${torn.line}`, e);
  } finally {
    await fh?.close().catch(() => undefined);
  }
}
