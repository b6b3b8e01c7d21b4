import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AgentRxError } from '../../errors.js';
import { JOURNAL_VERSION } from './journal-lines.js';
import { storeError } from './store-error.js';

/** The folder of `sessionId` in the store `dir` (`encodeURIComponent`); "", "." and ".." are a `store_error`. */
export function folderOf(dir: string, sessionId: string): string {
  if (sessionId === '' || sessionId === '.' || sessionId === '..') {
    throw new AgentRxError('store_error', `invalid session id ${JSON.stringify(sessionId)} for the file store in ${dir}`, { sessionId });
  }
  return join(dir, encodeURIComponent(sessionId));
}

/** The session ids that have a folder in `dir` (none when `dir` does not exist). */
export async function sessionIds(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw storeError(dir, 'cannot list the session store', e);
  }
  const ids: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    try {
      ids.push(decodeURIComponent(entry.name));
    } catch {
      // Not a folder this store made (its name is not URI-encoded).
    }
  }
  return ids;
}

/**
 * The folders to fsync so that `folder` (whose first missing ancestor `mkdir` created as
 * `created`; undefined: it existed) survives a power loss: the parent of each folder created.
 */
export function parentsToSync(folder: string, created: string | undefined): string[] {
  const out: string[] = [];
  for (let f = folder; created !== undefined && f !== dirname(created); f = dirname(f)) out.push(dirname(f));
  return out;
}

/**
 * A session folder without `journal.jsonl` but with the files of the layout before it
 * (`record.json`, `log.jsonl`, `ledger.jsonl`: store version 2) is refused with a `store_error`
 * saying what to do; nothing else is looked at (a new session has no folder yet, or an empty one).
 */
export function refuseOldLayout(folder: string, sessionId: string): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return; // no folder: a new session
  }
  const old = names.filter((n) => n === 'log.jsonl' || n === 'ledger.jsonl' || n === 'record.json');
  if (old.length === 0) return;
  throw storeError(
    join(folder, old[0]!),
    `session '${sessionId}' is stored in the layout of an older agentrx (${old.join(', ')}; store version 2), which this build (journal.jsonl, version ${JOURNAL_VERSION}) does not read; export it with the agentrx that wrote it (agentrx sessions export ${sessionId} -o <file>), or delete the folder ${folder}`,
    undefined,
    { sessionId },
  );
}

/**
 * The store's thread index: `%threads/<sha256 of the thread id>` names the session last saved with
 * that thread id (not a session folder: `%` is never left bare in a folder name the store makes).
 * Written atomically, not synced, once per thread and process: it only speeds up `findByThread`,
 * and a thread without an entry is looked up as new.
 */
export class ThreadIndex {
  /** Thread ids whose entry this process wrote, → the session it names (the newest 1,000). */
  private readonly written = new Map<string, string>();

  constructor(private readonly dir: string) {}

  /** The session id the thread's entry names, or undefined (no entry, or not one for this thread). */
  async find(threadId: string): Promise<string | undefined> {
    let entry: { threadId?: unknown; sessionId?: unknown };
    try {
      entry = JSON.parse(await readFile(this.entry(threadId), 'utf8')) as typeof entry;
    } catch {
      return undefined;
    }
    return entry.threadId === threadId && typeof entry.sessionId === 'string' ? entry.sessionId : undefined;
  }

  /** Writes the entry of the record's thread unless this process already wrote it (failures only cost a lookup). */
  async note(record: { readonly threadId?: string; readonly sessionId: string }): Promise<void> {
    const { threadId, sessionId } = record;
    if (threadId === undefined || threadId === sessionId || this.written.get(threadId) === sessionId) return;
    const file = this.entry(threadId);
    try {
      await mkdir(dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify({ threadId, sessionId }));
      await rename(tmp, file);
    } catch {
      return;
    }
    this.written.set(threadId, sessionId);
    if (this.written.size > 1_000) this.written.delete(this.written.keys().next().value!);
  }

  /** Removes the thread's entry when it names `sessionId` (the session is deleted; a newer session's entry stays). */
  async forget(threadId: string, sessionId: string): Promise<void> {
    if (this.written.get(threadId) === sessionId) this.written.delete(threadId);
    if ((await this.find(threadId)) !== sessionId) return;
    await unlink(this.entry(threadId)).catch(() => undefined);
  }

  private entry(threadId: string): string {
    return join(this.dir, '%threads', createHash('sha256').update(threadId).digest('hex'));
  }
}
