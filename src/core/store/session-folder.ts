import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AgentRxError } from '../errors.js';
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
