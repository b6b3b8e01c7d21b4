import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AgentRxError } from '../errors.js';
import type { LedgerEntry, LedgerState } from '../tools/tool-ledger.js';
import { readRecordFile, syncFolder, writeRecord } from './session-record-file.js';
import { SESSION_LOG_VERSION, type SessionRecord } from './session-store.js';
import { storeError } from './store-error.js';

/** What a ledger file needs from its store. */
export interface LedgerFileHooks {
  /** True when a live process other than this one owns the session (its writer may be mid-write). */
  foreignOwner(): Promise<boolean>;
  /** Reports a repair (a torn last line cut). */
  onRepair(file: string, what: string): void;
}

/** One line of `ledger.jsonl` after the header: when (epoch ms) and the entry written. */
interface LedgerLine {
  readonly t: number;
  readonly e: LedgerEntry;
}

/** What `ledger.jsonl` adds to the record it extends. */
interface LedgerScan {
  readonly entries: LedgerEntry[];
  /** Bytes of the header and the whole valid lines (0: nothing of this epoch). */
  readonly bytes: number;
  readonly lines: number;
  readonly updatedAt: number;
}

const O_APPEND_CREATE_EXCL = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL;

/**
 * A session's record and ledger as the file engine keeps them: `record.json` (the record, its
 * ledger as of the last `save`, and the ledger epoch) plus `ledger.jsonl`, an append-only file of
 * the transitions since: a header `{"version":2,"epoch":…}`, then one `{"t":ms,"e":entry}` per
 * line, the last line per `toolUseId` winning. The lines count only when the header's epoch is
 * the record's: `save` writes a new epoch (durably: folder fsync) before it empties the file, so a
 * crash in between leaves lines that the new record already holds and that are ignored.
 *
 * An instance is the merged view of both files; the engine keeps one per session it holds (it is
 * then the session's only writer) with `ledger.jsonl` open, and uses a fresh one per call
 * otherwise. Every method runs under the caller's per-session mutex.
 */
export class SessionLedgerFile {
  private fh: FileHandle | undefined;
  /** The file exists and its name is durable (created and the folder fsynced, or found on disk). */
  private fileDurable = false;

  private constructor(
    readonly recordFile: string,
    readonly file: string,
    private readonly sessionId: string,
    private readonly hooks: LedgerFileHooks,
    /** The merged record (undefined: none saved). */
    private current: SessionRecord | undefined,
    /** Whether `record.json` exists on disk. */
    private recordExists: boolean,
    private epoch: string,
    /** Lines of `epoch` in `ledger.jsonl` (0: the file is empty, absent or stale). */
    private lines: number,
    private bytes: number,
  ) {}

  /**
   * Reads both files. A torn last line of `ledger.jsonl` is ignored, and cut (and reported) when
   * `mayCut` or no live process owns the session; a corrupt line before the last is a `store_error`.
   */
  static async read(recordFile: string, file: string, sessionId: string, hooks: LedgerFileHooks, mayCut: boolean): Promise<SessionLedgerFile> {
    const stored = await readRecordFile(recordFile, sessionId);
    if (!stored) return new SessionLedgerFile(recordFile, file, sessionId, hooks, undefined, false, '', 0, 0);
    const scan = await scanLedger(file, stored.epoch, hooks, mayCut);
    let record = stored.record;
    if (scan.lines > 0) {
      const ledger = new Map(record.ledger.map((e) => [e.toolUseId, e]));
      for (const e of scan.entries) ledger.set(e.toolUseId, e);
      record = { ...record, ledger: [...ledger.values()], updatedAt: Math.max(record.updatedAt, scan.updatedAt) };
    }
    return new SessionLedgerFile(recordFile, file, sessionId, hooks, record, true, stored.epoch, scan.lines, scan.bytes);
  }

  get record(): SessionRecord | undefined {
    return this.current;
  }

  /**
   * Compare-and-set of one entry (see `SessionStore.transition`): appends one line to
   * `ledger.jsonl` in one write, then fdatasync (and, the first time the file is created, an fsync
   * of the folder); a transition to `posted` is left to the next sync. The view changes once the
   * line is written.
   */
  async transition(expected: LedgerState | undefined, entry: LedgerEntry): Promise<boolean> {
    const record = this.current;
    if (!record) throw new AgentRxError('store_error', `session '${this.sessionId}' has no record to hold its ledger; save the record first`, { sessionId: this.sessionId });
    const at = record.ledger.findIndex((e) => e.toolUseId === entry.toolUseId);
    const found = at < 0 ? undefined : record.ledger[at];
    if (found?.state !== expected) return false;
    const now = Date.now();
    const line = JSON.stringify({ t: now, e: entry } satisfies LedgerLine) + '\n';
    const text = this.lines === 0 ? JSON.stringify({ version: SESSION_LOG_VERSION, epoch: this.epoch }) + '\n' + line : line;
    const buf = Buffer.from(text, 'utf8');
    let writing = false;
    try {
      const { fh, created } = await this.handle();
      if (this.lines === 0 && !created) await fh.truncate(0); // a stale file (an older epoch) starts over
      writing = true;
      let done = 0;
      while (done < buf.length) done += (await fh.write(buf, done, buf.length - done)).bytesWritten;
      writing = false;
      // `posted` is made durable by the next sync (see SessionStore.transition): losing it only re-posts a recorded result.
      if (entry.state !== 'posted' || created) await fh.datasync();
      if (created) {
        await syncFolder(dirname(this.file));
        this.fileDurable = true;
      }
    } catch (e) {
      // Cut back to the last whole line; the caller drops this view (it re-reads the files).
      if (writing && this.fh) await this.fh.truncate(this.lines === 0 ? 0 : this.bytes).catch(() => undefined);
      await this.close();
      throw storeError(this.file, `cannot write the ledger of session '${this.sessionId}'`, e);
    }
    this.lines++;
    this.bytes += buf.length;
    const ledger = found ? record.ledger.map((e, i) => (i === at ? entry : e)) : [...record.ledger, entry];
    this.current = { ...record, ledger, updatedAt: now };
    return true;
  }

  /**
   * Writes `record` whole (its ledger replaces the merged one).
   *
   * When `record.json` exists and the ledger is the merged one this view holds (only status,
   * transcript… changed) and `ledger.jsonl` holds less than `compactBytes`, the record is written
   * atomically under the same epoch without the folder fsync and `ledger.jsonl` is kept: every
   * version of `record.json` of one epoch holds the epoch's first ledger plus a prefix of its
   * lines, so whichever version a power loss brings back (the rename may not be durable yet —
   * a process crash cannot undo it), it plus all the lines is the same ledger; only the other
   * fields of the record may be the previous ones.
   *
   * Otherwise (a new file, a ledger the caller changed, or compaction) a new epoch is written with
   * the folder fsynced, then `ledger.jsonl` is emptied (no fsync: its lines are stale by now).
   */
  async save(record: SessionRecord, compactBytes: number): Promise<void> {
    const current = this.current;
    const light = this.recordExists && current !== undefined && sameLedger(current.ledger, record.ledger) && (this.lines === 0 || this.bytes < compactBytes);
    if (light) {
      await writeRecord(this.recordFile, record, { epoch: this.epoch, syncFolder: false });
      this.current = record;
      return;
    }
    const epoch = randomUUID();
    await writeRecord(this.recordFile, record, { epoch });
    this.current = record;
    this.recordExists = true;
    this.epoch = epoch;
    const stale = this.lines > 0;
    this.lines = 0;
    this.bytes = 0;
    if (stale) {
      try {
        const { fh } = await this.handle();
        await fh.truncate(0);
      } catch {
        // Harmless: the lines left are of the old epoch, ignored and truncated by the next transition.
        await this.close();
      }
    }
  }

  /** Empties `ledger.jsonl` when it exists (a `save` without a view: its lines are stale once the record is durable). */
  static async compact(file: string): Promise<void> {
    let fh: FileHandle | undefined;
    try {
      fh = await open(file, 'r+');
      await fh.truncate(0);
    } catch {
      // Absent, or left for the next transition to truncate (its epoch is stale).
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }

  /** Closes `ledger.jsonl` (the view stays usable: the next write reopens it). */
  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    await fh?.close().catch(() => undefined);
  }

  /** The open `ledger.jsonl`, for appends; `created` when this call created it (its name is not durable yet). */
  private async handle(): Promise<{ fh: FileHandle; created: boolean }> {
    if (this.fh) return { fh: this.fh, created: !this.fileDurable };
    let created = false;
    try {
      this.fh = await open(this.file, O_APPEND_CREATE_EXCL, 0o666);
      created = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      this.fh = await open(this.file, 'a');
      this.fileDurable = true; // found on disk (a crash before its folder fsync is harmless: no line of it was acknowledged)
    }
    if (created) this.fileDurable = false;
    return { fh: this.fh, created };
  }
}

/** Same entries in the same order (entries are immutable: compared by reference). */
function sameLedger(a: readonly LedgerEntry[], b: readonly LedgerEntry[]): boolean {
  return a === b || (a.length === b.length && a.every((e, i) => e === b[i]));
}

/** Reads `ledger.jsonl`: the lines of `epoch` (none when the file is absent or of another epoch). */
async function scanLedger(file: string, epoch: string, hooks: LedgerFileHooks, mayCut: boolean): Promise<LedgerScan> {
  const none: LedgerScan = { entries: [], bytes: 0, lines: 0, updatedAt: 0 };
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return none;
    throw storeError(file, 'cannot read the session ledger', e);
  }
  if (buf.length === 0) return none;
  const entries: LedgerEntry[] = [];
  let offset = 0;
  let lineNo = 1;
  let updatedAt = 0;
  let torn: { at: number; line: number; reason: string } | undefined;
  while (offset < buf.length) {
    const nl = buf.indexOf(10, offset);
    const end = nl < 0 ? buf.length : nl;
    const text = buf.subarray(offset, end).toString('utf8');
    if (torn) throw storeError(file, `line ${torn.line} is corrupt (${torn.reason}) and is followed by more lines; the ledger cannot be trusted past line ${torn.line - 1}`, undefined, { line: torn.line });
    const reason = nl < 0 ? 'no end of line' : undefined;
    let value: unknown;
    let bad = reason;
    if (!bad) {
      try {
        value = JSON.parse(text);
      } catch (e) {
        bad = (e as Error).message;
      }
    }
    if (!bad && lineNo === 1) {
      const header = value as { version?: unknown; epoch?: unknown } | null;
      if (typeof header?.version !== 'number') bad = 'not a ledger header';
      else if (header.version > SESSION_LOG_VERSION) {
        throw storeError(file, `the ledger was written by a newer agentrx (version ${header.version}; this build reads version ${SESSION_LOG_VERSION}); upgrade agentrx to open it`, undefined, { line: 1 });
      } else if (header.epoch !== epoch) return none; // superseded by a later save of the record
    } else if (!bad) {
      const line = value as Partial<LedgerLine> | null;
      const e = line?.e;
      if (typeof e?.toolUseId !== 'string' || typeof e.state !== 'string') bad = 'not a ledger entry';
      else {
        entries.push(e);
        if (typeof line!.t === 'number') updatedAt = Math.max(updatedAt, line!.t);
      }
    }
    if (bad) torn = { at: offset, line: lineNo, reason: bad };
    offset = end + 1;
    lineNo++;
  }
  if (torn) {
    if (mayCut || !(await hooks.foreignOwner())) {
      try {
        const fh = await open(file, 'r+');
        try {
          await fh.truncate(torn.at);
          await fh.sync();
        } finally {
          await fh.close();
        }
      } catch (e) {
        throw storeError(file, `cannot cut the torn last line ${torn.line}`, e);
      }
      hooks.onRepair(file, `cut a torn last line ${torn.line} (${buf.length - torn.at} bytes) left by a crash`);
    }
    if (torn.line === 1) return none;
    return { entries, bytes: torn.at, lines: entries.length, updatedAt };
  }
  return { entries, bytes: buf.length, lines: entries.length, updatedAt };
}
