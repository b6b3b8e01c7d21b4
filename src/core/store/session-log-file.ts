import { mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Subject } from 'rxjs';
import { AgentRxError } from '../errors.js';
import type { SessionEvent } from '../events/session-event.js';
import { SESSION_LOG_VERSION } from './session-store.js';
import { storeError } from './store-error.js';

/** The first line of every log file. */
const HEADER = JSON.stringify({ version: SESSION_LOG_VERSION });
/** Bytes read from disk at a time while scanning a log. */
const CHUNK = 1 << 20;

/** How the log decides whether a torn tail may be cut (a live writer in another process may still be finishing it). */
export interface LogFileHooks {
  /** True when a live process other than this one owns the session (its writer may be mid-write). */
  foreignOwner(): Promise<boolean>;
  /** Reports a repair (a torn last line cut). */
  onRepair(file: string, what: string): void;
}

/**
 * One session's `log.jsonl` as this process sees it: a header line `{"version":2}`, then one
 * envelope per line, `seq` 1, 2, 3… Keeps the byte offset of every line (not the envelopes) and
 * the appends not written yet. Every method runs under the caller's per-session mutex.
 */
export class SessionLogFile {
  /** Emits after every append (in-process tails wake up on it). */
  readonly appended = new Subject<void>();
  private loaded = false;
  /** Bytes of complete, valid lines (header included) known to be in the file. */
  private size = 0;
  /** `starts[i]`: byte offset of the line of seq i + 1. */
  private starts: number[] = [];
  private pending: SessionEvent[] = [];
  private pendingLines: string[] = [];
  private pendingBytes = 0;
  /** Bytes were written since the last fsync. */
  private unsynced = false;

  constructor(
    readonly file: string,
    private readonly hooks: LogFileHooks,
    private readonly bufferBytes: number,
  ) {}

  /** Whether the file was scanned since the last reset. */
  get isLoaded(): boolean {
    return this.loaded;
  }

  /** Whether buffered appends wait for a write. */
  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** The highest seq in the file or the buffer. */
  get lastSeq(): number {
    return this.fileSeq + this.pending.length;
  }

  private get fileSeq(): number {
    return this.starts.length;
  }

  /** Brings the view up to date with the file (first access: full scan; later: the bytes appended since). */
  async refresh(): Promise<void> {
    let size: number;
    try {
      const st = await stat(this.file);
      size = st.isFile() ? st.size : 0;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw storeError(this.file, 'cannot read the session log', e);
      size = 0;
    }
    if (this.loaded && size === this.size) return;
    if (size < this.size) this.reset(true); // deleted or replaced by another process
    const first = !this.loaded;
    this.loaded = true;
    if (size === this.size) return;
    const torn = await this.scan(size);
    if (torn && first && !(await this.hooks.foreignOwner())) await this.cut(torn);
  }

  /**
   * Adds envelopes after the last seq (idempotent by seq; a gap is a `store_error`); writes the
   * buffer once it holds `bufferBytes`.
   */
  async append(envelopes: readonly SessionEvent[]): Promise<void> {
    let added = false;
    try {
      for (const env of envelopes) {
        const last = this.lastSeq;
        if (env.seq <= last) continue;
        if (env.seq !== last + 1) {
          throw new AgentRxError('store_error', `append of seq ${env.seq} would leave a gap after seq ${last} (${this.file})`, { file: this.file, seq: env.seq, last });
        }
        const line = JSON.stringify(env) + '\n';
        this.pending.push(env);
        this.pendingLines.push(line);
        this.pendingBytes += line.length;
        added = true;
      }
    } finally {
      // Tails see what was appended before a gap too.
      if (added) this.appended.next();
    }
    if (this.pendingBytes >= this.bufferBytes) await this.write(false);
  }

  /**
   * Writes the buffered envelopes in one write (the header first if the file is empty), fsyncs
   * when `sync`. On failure the file is cut back to its last good size and the buffer kept.
   */
  async write(sync: boolean): Promise<void> {
    if (this.pending.length === 0 && (!sync || !this.unsynced)) return;
    let fh: FileHandle | undefined;
    let writing = false;
    try {
      if (this.pending.length > 0) await mkdir(dirname(this.file), { recursive: true });
      fh = await open(this.file, this.pending.length > 0 ? 'a' : 'r+');
      const st = await fh.stat();
      const onDisk = st.isFile() ? st.size : 0;
      if (onDisk !== this.size && this.pending.length > 0) {
        // Another writer, a deletion, or a torn tail: catch up, then cut what is not a valid line.
        await fh.close();
        fh = undefined;
        await this.refresh();
        this.dropWritten();
        fh = await open(this.file, 'a');
        const now = await fh.stat();
        if (now.isFile() && now.size > this.size) await this.cut({ at: this.size, bytes: now.size - this.size, line: this.fileSeq + 2 }, fh);
      }
      if (this.pending.length > 0) {
        const text = (this.size === 0 ? HEADER + '\n' : '') + this.pendingLines.join('');
        const buf = Buffer.from(text, 'utf8');
        writing = true;
        await this.writeAll(fh, buf);
        writing = false;
        let at = this.size + (this.size === 0 ? Buffer.byteLength(HEADER) + 1 : 0);
        for (const line of this.pendingLines) {
          this.starts.push(at);
          at += Buffer.byteLength(line);
        }
        this.size = at;
        this.pending = [];
        this.pendingLines = [];
        this.pendingBytes = 0;
        this.unsynced = true;
      }
      if (sync) {
        // fdatasync: appends change the size, which it makes durable too; only the times are left out.
        await fh.datasync();
        this.unsynced = false;
      }
    } catch (e) {
      // Nothing half-written: a failed write (disk full…) is cut back to the last whole line.
      if (fh && writing) await fh.truncate(this.size).catch(() => undefined);
      throw e instanceof AgentRxError ? e : storeError(this.file, sync ? 'cannot write and sync the session log' : 'cannot write the session log', e);
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }

  /** Up to `limit` envelopes after `afterSeq`: from the file, then from the buffer, gap-free. */
  async read(afterSeq: number, limit: number): Promise<SessionEvent[]> {
    const from = Math.max(0, Math.floor(afterSeq));
    const out: SessionEvent[] = [];
    if (limit <= 0) return out;
    const fileSeq = this.fileSeq;
    if (from < fileSeq) {
      const to = Math.min(fileSeq, from + limit);
      const start = this.starts[from]!;
      const end = to < fileSeq ? this.starts[to]! : this.size;
      const buf = Buffer.alloc(end - start);
      let fh: FileHandle | undefined;
      try {
        fh = await open(this.file, 'r');
        let got = 0;
        while (got < buf.length) {
          const { bytesRead } = await fh.read(buf, got, buf.length - got, start + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        if (got < buf.length) throw new Error(`the file ended at byte ${start + got}, expected ${end}`);
      } catch (e) {
        throw storeError(this.file, 'cannot read the session log', e);
      } finally {
        await fh?.close().catch(() => undefined);
      }
      const lines = buf.toString('utf8').split('\n');
      for (let i = 0; i < to - from; i++) out.push(JSON.parse(lines[i]!) as SessionEvent);
    }
    let last = out.length > 0 ? out[out.length - 1]!.seq : from;
    for (const env of this.pending) {
      if (out.length >= limit) break;
      if (env.seq <= last) continue;
      if (env.seq !== last + 1) break;
      out.push(env);
      last = env.seq;
    }
    return out;
  }

  /** Forgets what is known of the file (and the buffer too unless `keepPending`). */
  reset(keepPending = false): void {
    this.loaded = false;
    this.size = 0;
    this.starts = [];
    if (keepPending) return;
    this.unsynced = false;
    this.pending = [];
    this.pendingLines = [];
    this.pendingBytes = 0;
  }

  /** Drops buffered envelopes another writer already put in the file. */
  private dropWritten(): void {
    const keep = this.pending.findIndex((e) => e.seq > this.fileSeq);
    const n = keep < 0 ? this.pending.length : keep;
    if (n === 0) return;
    this.pending.splice(0, n);
    const gone = this.pendingLines.splice(0, n);
    this.pendingBytes -= gone.reduce((sum, l) => sum + l.length, 0);
    const first = this.pending[0];
    if (first && first.seq !== this.fileSeq + 1) {
      throw new AgentRxError('store_error', `another process wrote the log up to seq ${this.fileSeq} while this one buffered seq ${first.seq} (${this.file})`, { file: this.file });
    }
  }

  /**
   * Reads the file from `this.size` to `size`, validating each complete line (the header, then
   * seq after seq). Returns the torn tail (an incomplete or unparsable last line) if any; it is
   * left out of `size`, so a later scan looks at it again.
   */
  private async scan(size: number): Promise<{ at: number; bytes: number; line: number } | undefined> {
    let fh: FileHandle | undefined;
    try {
      fh = await open(this.file, 'r');
    } catch (e) {
      throw storeError(this.file, 'cannot read the session log', e);
    }
    try {
      let offset = this.size;
      let carry = Buffer.alloc(0);
      let lineNo = this.fileSeq + (this.size > 0 ? 2 : 1);
      let bad: { at: number; line: number; reason: string } | undefined;
      while (offset + carry.length < size) {
        const want = Math.min(CHUNK, size - offset - carry.length);
        const chunk = Buffer.alloc(want);
        const { bytesRead } = await fh.read(chunk, 0, want, offset + carry.length);
        if (bytesRead === 0) break;
        let buf = Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
        let nl: number;
        while ((nl = buf.indexOf(10)) >= 0) {
          const line = buf.subarray(0, nl).toString('utf8');
          if (bad) {
            throw storeError(this.file, `line ${bad.line} is corrupt (${bad.reason}) and is followed by more lines; the log cannot be trusted past line ${bad.line - 1}`, undefined, { line: bad.line });
          }
          const reason = this.accept(line, offset, lineNo);
          if (reason) bad = { at: offset, line: lineNo, reason };
          offset += nl + 1;
          lineNo++;
          buf = buf.subarray(nl + 1);
        }
        carry = Buffer.from(buf);
      }
      if (bad) return { at: bad.at, bytes: size - bad.at, line: bad.line };
      if (carry.length > 0) return { at: offset, bytes: carry.length, line: lineNo };
      return undefined;
    } catch (e) {
      throw e instanceof AgentRxError ? e : storeError(this.file, 'cannot read the session log', e);
    } finally {
      await fh.close().catch(() => undefined);
    }
  }

  /**
   * Takes one complete line at `offset`: the header, or the envelope of the next seq. Returns why
   * it does not parse (possibly a torn line, decided by what follows); throws a `store_error` for
   * what is wrong whatever follows (a newer version, a seq out of order, not a session log).
   */
  private accept(line: string, offset: number, lineNo: number): string | undefined {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      return (e as Error).message;
    }
    if (offset === 0) {
      const version = (value as { version?: unknown } | null)?.version;
      if (typeof version !== 'number') throw storeError(this.file, `line 1 is not a session log header ({"version":${SESSION_LOG_VERSION}}); this is not an agentrx v${SESSION_LOG_VERSION} session log`, undefined, { line: 1 });
      if (version > SESSION_LOG_VERSION) {
        throw storeError(this.file, `the log was written by a newer agentrx (log version ${version}; this build reads version ${SESSION_LOG_VERSION}); upgrade agentrx to open it`, undefined, { line: 1, version });
      }
      if (version !== SESSION_LOG_VERSION) throw storeError(this.file, `unsupported log version ${version} (this build reads version ${SESSION_LOG_VERSION})`, undefined, { line: 1, version });
      this.size = offset + Buffer.byteLength(line) + 1;
      return undefined;
    }
    const seq = (value as { seq?: unknown } | null)?.seq;
    if (typeof seq !== 'number') return 'no seq';
    const expected = this.fileSeq + 1;
    if (seq !== expected) {
      throw storeError(this.file, `line ${lineNo} holds seq ${seq} where seq ${expected} was expected (a ${seq > expected ? 'gap' : 'repeat'} in the log)`, undefined, { line: lineNo, seq, expected });
    }
    this.starts.push(offset);
    this.size = offset + Buffer.byteLength(line) + 1;
    return undefined;
  }

  /** Truncates a torn tail (a crash mid-write) and reports it. */
  private async cut(torn: { at: number; bytes: number; line: number }, handle?: FileHandle): Promise<void> {
    let fh = handle;
    try {
      fh ??= await open(this.file, 'r+');
      await fh.truncate(torn.at);
      await fh.sync();
    } catch (e) {
      throw storeError(this.file, `cannot cut the torn last line ${torn.line}`, e);
    } finally {
      if (!handle) await fh?.close().catch(() => undefined);
    }
    this.hooks.onRepair(this.file, `cut a torn last line ${torn.line} (${torn.bytes} bytes) left by a crash`);
  }

  private async writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
    let done = 0;
    while (done < buf.length) {
      const { bytesWritten } = await fh.write(buf, done, buf.length - done);
      done += bytesWritten;
    }
  }
}
