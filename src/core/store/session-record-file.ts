import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SESSION_LOG_VERSION, type SessionRecord } from './session-store.js';
import { storeError } from './store-error.js';

/**
 * Reads a session's `record.json`: undefined when there is none; a record that cannot be trusted
 * (not JSON, another version, another session's, no ledger) is a `store_error` naming the file.
 */
export async function readRecord(file: string, sessionId: string): Promise<SessionRecord | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw storeError(file, `cannot read the record of session '${sessionId}'`, e);
  }
  let record: SessionRecord;
  try {
    record = JSON.parse(text) as SessionRecord;
  } catch (e) {
    throw storeError(file, `the record of session '${sessionId}' is not valid JSON (${(e as Error).message})`);
  }
  const version = (record as { version?: unknown } | null)?.version;
  if (typeof version === 'number' && version > SESSION_LOG_VERSION) {
    throw storeError(file, `the record was written by a newer agentrx (version ${version}; this build reads version ${SESSION_LOG_VERSION}); upgrade agentrx to open it`);
  }
  if (version !== SESSION_LOG_VERSION) throw storeError(file, `not a version-${SESSION_LOG_VERSION} session record (version ${JSON.stringify(version)})`);
  if (record.sessionId !== sessionId) throw storeError(file, `the record holds session '${String(record.sessionId)}', not '${sessionId}' as its folder says`);
  if (!Array.isArray(record.ledger)) throw storeError(file, `the record of session '${sessionId}' has no ledger array`);
  return record;
}

/**
 * Writes `record.json` atomically: a temp file beside it, fsync, rename over the old one, fsync
 * of the folder. On failure the temp file is removed and the old record is left whole.
 */
export async function writeRecord(file: string, record: SessionRecord): Promise<void> {
  const folder = dirname(file);
  const tmp = `${file}.${randomUUID()}.tmp`;
  try {
    await mkdir(folder, { recursive: true });
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(record), 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
    const dh = await open(folder, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw storeError(file, `cannot write the record of session '${record.sessionId}'`, e);
  }
}
