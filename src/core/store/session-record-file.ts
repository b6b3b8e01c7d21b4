import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SESSION_LOG_VERSION, type SessionRecord } from './session-store.js';
import { storeError } from './store-error.js';

/**
 * The field of `record.json` (not of the SessionRecord) naming the ledger epoch: `ledger.jsonl`
 * lines extend this record's ledger only when that file's header carries the same epoch.
 */
export const LEDGER_EPOCH = 'ledgerEpoch';

/** A record as read from `record.json`, with the ledger epoch it was written with ('' for records written before epochs). */
export interface StoredRecord {
  readonly record: SessionRecord;
  readonly epoch: string;
}

/**
 * Reads a session's `record.json`: undefined when there is none; a record that cannot be trusted
 * (not JSON, another version, another session's, no ledger) is a `store_error` naming the file.
 */
export async function readRecord(file: string, sessionId: string): Promise<SessionRecord | undefined> {
  return (await readRecordFile(file, sessionId))?.record;
}

/** `readRecord`, with the ledger epoch the record was written with. */
export async function readRecordFile(file: string, sessionId: string): Promise<StoredRecord | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw storeError(file, `cannot read the record of session '${sessionId}'`, e);
  }
  let record: SessionRecord & { [LEDGER_EPOCH]?: unknown };
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
  const { [LEDGER_EPOCH]: epoch, ...rest } = record;
  return { record: rest, epoch: typeof epoch === 'string' ? epoch : '' };
}

/** How `writeRecord` writes. */
export interface WriteRecordOptions {
  /** The ledger epoch stored beside the record (see `LEDGER_EPOCH`); none: not stored. */
  readonly epoch?: string;
  /**
   * Fsync the folder after the rename (default true). Required when `record.json` is new (its
   * name is not durable before) or when something durable depends on this very version of the
   * record (a new ledger epoch). Without it the write is still atomic — the data is fsynced before
   * the rename, so any crash leaves the old record or the new one, whole — but a power loss (not
   * a process crash) may bring back the previous version.
   */
  readonly syncFolder?: boolean;
}

/**
 * Writes `record.json` atomically: a temp file beside it, fsync, rename over the old one, fsync
 * of the folder (unless `syncFolder` is false). On failure the temp file is removed and the old
 * record is left whole.
 */
export async function writeRecord(file: string, record: SessionRecord, options: WriteRecordOptions = {}): Promise<void> {
  const folder = dirname(file);
  const tmp = `${file}.${randomUUID()}.tmp`;
  try {
    await mkdir(folder, { recursive: true });
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(options.epoch === undefined ? record : { ...record, [LEDGER_EPOCH]: options.epoch }), 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
    if (options.syncFolder !== false) await syncFolder(folder);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw storeError(file, `cannot write the record of session '${record.sessionId}'`, e);
  }
}

/** Fsyncs a folder, making the names created or renamed in it durable. */
export async function syncFolder(folder: string): Promise<void> {
  const dh = await open(folder, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
