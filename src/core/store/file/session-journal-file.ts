import { fstatSync, ftruncateSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Subject } from '../../util/rxjs.js';
import { AgentRxError } from '../../errors.js';
import type { SessionEvent } from '../../events/session-event.js';
import { checkHeaderLine, envelopeLine, headerLine, JournalFold, parseLine } from './journal-lines.js';
import type { JournalHooks, JournalIo, NewName } from './journal-io.js';
import { refuseOldLayout } from './session-folder.js';
import { storeError } from './store-error.js';
import { cutTornTail, scanLines, type TornTail } from './journal-scan.js';

/**
 * One session's `journal.jsonl` as this process sees it: the folded record (see `JournalFold`),
 * the byte offset and length of every envelope line (not the envelopes), and the appends not
 * written yet. Writes are synchronous copies (`writeSync`) through `fd` while the store holds the
 * session; `durable` makes them durable with one shared fdatasync (group commit). Every method but
 * `durable` runs under the caller's per-session mutex.
 */
export class SessionJournalFile {
  /** Emits after every append (in-process tails wake up on it). */
  readonly appended = new Subject<void>();
  readonly fold = new JournalFold();
  /** The append fd of a held session (opened by the store). */
  fd: number | undefined;
  /** Names this process created (the file, its folder…) whose folder's fsync makes them durable: synced with the next sync. */
  newNames: NewName[] = [];
  /** The session's folder was just created by this process (no older layout to look for). */
  newFolder = false;
  private loaded = false;
  /** Bytes of complete, valid lines (header included) known to be in the file. */
  private size = 0;
  private lines = 0;
  /** Offset and length (without newline) of the line of seq i + 1. */
  private starts: number[] = [];
  private lens: number[] = [];
  private pending: SessionEvent[] = [];
  private pendingText: string[] = [];
  private pendingBytes = 0;
  /** Bytes known durable. */
  private synced = 0;
  private syncing: Promise<void> | undefined;
  private nextSync: Promise<void> | undefined;
  /** A failed fdatasync: the file's state on disk is unknown, every later sync fails with it. */
  private failure: AgentRxError | undefined;

  constructor(
    readonly file: string,
    private readonly sessionId: string,
    private readonly hooks: JournalHooks,
    private readonly io: JournalIo,
    private readonly bufferBytes: number,
  ) {}

  get isLoaded(): boolean {
    return this.loaded;
  }

  /** Whether appends, writes or a sync are not settled (the view must not be dropped). */
  get busy(): boolean {
    return this.pending.length > 0 || this.syncing !== undefined || this.nextSync !== undefined || this.synced < this.size;
  }

  /** Whether envelopes wait in the buffer. */
  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** Whether bytes were written since the last sync. */
  get unsynced(): boolean {
    return this.synced < this.size;
  }

  /** The highest seq in the file or the buffer. */
  get lastSeq(): number {
    return this.starts.length + this.pending.length;
  }

  /** Bytes written (and whole) in the file. */
  get written(): number {
    return this.size;
  }

  /**
   * Brings the view up to date with the file (first time: full scan; then the bytes appended
   * since). A torn last line is cut when `mayCut` (this process holds the session) or, on the
   * first scan, when no live process owns the session; otherwise left alone (a writer may be
   * finishing it).
   */
  async refresh(mayCut: boolean): Promise<void> {
    let size: number;
    try {
      // Synchronous: a stat of a local file costs less than a threadpool round trip. A folder this
      // process just made (and holds) has no journal yet: nothing to look at.
      const st = this.newFolder && !this.loaded && mayCut ? undefined : statSync(this.file, { throwIfNoEntry: false });
      if (!st && !this.loaded && !this.newFolder) refuseOldLayout(dirname(this.file), this.sessionId);
      size = st?.isFile() ? st.size : 0;
    } catch (e) {
      throw e instanceof AgentRxError ? e : storeError(this.file, 'cannot read the session journal', e);
    }
    if (this.loaded && size === this.size) return;
    if (size < this.size) this.resetFile(); // deleted or replaced by another process
    const first = !this.loaded;
    this.loaded = true;
    if (size === this.size) return;
    const torn = await this.scan(size);
    if (torn && (mayCut || (first && !(await this.hooks.foreignOwner())))) await this.cut(torn);
  }

  /** Buffers envelopes after the last seq (idempotent by seq; a gap is a `store_error`). Returns whether the buffer is full. */
  append(envelopes: readonly SessionEvent[]): boolean {
    let added = false;
    try {
      for (const env of envelopes) {
        const last = this.lastSeq;
        if (env.seq <= last) continue;
        if (env.seq !== last + 1) {
          throw new AgentRxError('store_error', `append of seq ${env.seq} would leave a gap after seq ${last} (${this.file})`, {
            file: this.file,
            seq: env.seq,
            last,
          });
        }
        const line = envelopeLine(env);
        this.pending.push(env);
        this.pendingText.push(line);
        this.pendingBytes += line.length;
        added = true;
      }
    } finally {
      // Tails see what was appended before a gap too.
      if (added) this.appended.next();
    }
    return this.pendingBytes >= this.bufferBytes;
  }

  /**
   * Writes the buffered envelopes, then `extra` (whole lines), in one synchronous write through
   * `fd` (the header first if the file is empty). On failure the file is cut back to its last
   * good size, the buffer kept, and a `store_error` naming the file thrown.
   */
  write(fd: number, extra = ''): void {
    if (this.pending.length === 0 && extra === '') return;
    const head = this.size === 0 ? headerLine(this.sessionId) : '';
    const body = this.pendingText.length === 0 ? extra : this.pendingText.join('') + extra;
    const buf = Buffer.from(head + body, 'utf8');
    let done = 0;
    try {
      while (done < buf.length) done += this.io.writeSync(fd, buf, done, buf.length - done);
    } catch (e) {
      // Nothing half-written: a failed write (disk full…) is cut back to the last whole line.
      try {
        ftruncateSync(fd, this.size);
      } catch {
        // Not a regular file, or the disk is gone: the next scan cuts the torn tail.
      }
      throw storeError(this.file, `cannot write the journal of session '${this.sessionId}'`, e);
    }
    let at = 0; // offsets found in the encoded bytes (no JSON line holds a raw newline), not by each line's UTF-8 length
    if (head) {
      at = buf.indexOf(10) + 1;
      this.lines++;
    }
    for (let i = 0; i < this.pendingText.length; i++) {
      const nl = buf.indexOf(10, at);
      this.starts.push(this.size + at);
      this.lens.push(nl - at);
      at = nl + 1;
    }
    this.lines += this.pendingText.length + (extra === '' ? 0 : 1);
    this.size += buf.length;
    this.pending = [];
    this.pendingText = [];
    this.pendingBytes = 0;
  }

  /**
   * Resolves once the first `upTo` bytes are durable, through `fd`: waits for a sync that started
   * after they were written; every write made while one sync runs shares the next one (group commit).
   */
  durable(fd: number, upTo = this.size): Promise<void> {
    if (this.synced >= upTo) return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    if (!this.nextSync) {
      const after = this.syncing ?? Promise.resolve();
      const run = (): Promise<void> => this.runSync(fd);
      this.nextSync = after.then(run, run);
    }
    return this.nextSync;
  }

  /** Waits for the sync in flight, if any (its failure is reported by `durable`). */
  async settled(): Promise<void> {
    await (this.nextSync ?? this.syncing)?.catch(() => undefined);
  }

  /** Drops buffered envelopes another writer already put in the file; a `store_error` if they no longer follow it. */
  catchUp(): void {
    const fileSeq = this.starts.length;
    const keep = this.pending.findIndex((e) => e.seq > fileSeq);
    const n = keep < 0 ? this.pending.length : keep;
    if (n > 0) {
      this.pending.splice(0, n);
      this.pendingBytes -= this.pendingText.splice(0, n).reduce((sum, l) => sum + l.length, 0);
    }
    const first = this.pending[0];
    if (first && first.seq !== fileSeq + 1) {
      throw new AgentRxError('store_error', `another process wrote the journal up to seq ${fileSeq} while this one buffered seq ${first.seq} (${this.file})`, {
        file: this.file,
      });
    }
  }

  /** Up to `limit` envelopes after `afterSeq`: from the file, then from the buffer, gap-free. */
  async read(afterSeq: number, limit: number): Promise<SessionEvent[]> {
    const from = Math.max(0, Math.floor(afterSeq));
    const out: SessionEvent[] = [];
    if (limit <= 0) return out;
    const fileSeq = this.starts.length;
    if (from < fileSeq) {
      const to = Math.min(fileSeq, from + limit);
      const base = this.starts[from]!;
      const buf = Buffer.alloc(this.starts[to - 1]! + this.lens[to - 1]! - base);
      let fh: FileHandle | undefined;
      try {
        fh = await open(this.file, 'r');
        let got = 0;
        while (got < buf.length) {
          const { bytesRead } = await fh.read(buf, got, buf.length - got, base + got);
          if (bytesRead === 0) throw new Error(`the file ended at byte ${base + got}, expected ${base + buf.length}`);
          got += bytesRead;
        }
      } catch (e) {
        throw storeError(this.file, 'cannot read the session journal', e);
      } finally {
        await fh?.close().catch(() => undefined);
      }
      for (let i = from; i < to; i++) {
        const at = this.starts[i]! - base;
        out.push((JSON.parse(buf.toString('utf8', at, at + this.lens[i]!)) as { e: SessionEvent }).e);
      }
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
    this.resetFile();
    this.loaded = false;
    this.newFolder = false;
    if (keepPending) return;
    this.pending = [];
    this.pendingText = [];
    this.pendingBytes = 0;
  }

  private resetFile(): void {
    this.fold.reset();
    this.size = 0;
    this.lines = 0;
    this.synced = 0;
    this.starts = [];
    this.lens = [];
    this.failure = undefined;
  }

  private async runSync(fd: number): Promise<void> {
    this.nextSync = undefined; // writes from now on wait for the sync after this one
    if (this.failure) throw this.failure;
    const target = this.size;
    const names = this.newNames;
    this.newNames = [];
    const sync = (async () => {
      try {
        await Promise.all([this.io.fdatasync(fd), ...names.map((f) => this.hooks.syncFolder(f))]);
        // A journal deleted under an open session (its folder removed) syncs fine but holds nothing.
        if (fstatSync(fd).nlink === 0) throw new Error('the file was deleted while the session was open');
      } catch (e) {
        this.failure = storeError(
          this.file,
          `cannot sync the journal of session '${this.sessionId}'; its state on disk is unknown until the session is opened again`,
          e,
        );
        throw this.failure;
      }
      this.synced = Math.max(this.synced, target);
    })();
    this.syncing = sync;
    try {
      await sync;
    } finally {
      if (this.syncing === sync) this.syncing = undefined;
    }
  }

  /**
   * Reads the file from `this.size` to `size`, validating and folding each complete line.
   * Returns the torn tail (an incomplete or unparsable last line) if any; it is left out of
   * `size`, so a later scan looks at it again.
   */
  private async scan(size: number): Promise<TornTail | undefined> {
    let fh: FileHandle | undefined;
    try {
      fh = await open(this.file, 'r');
    } catch (e) {
      throw storeError(this.file, 'cannot read the session journal', e);
    }
    try {
      let offset = this.size;
      if (offset > 0) {
        // Appended to, or rewritten in place by another process? What came before must end a line.
        const before = Buffer.alloc(1);
        await fh.read(before, 0, 1, offset - 1);
        if (before[0] !== 10) {
          this.resetFile();
          offset = 0;
        }
      }
      return await scanLines(
        fh,
        this.file,
        offset,
        size,
        () => this.lines + 1,
        (text, at, bytes) => this.accept(text, at, bytes),
      );
    } catch (e) {
      throw e instanceof AgentRxError ? e : storeError(this.file, 'cannot read the session journal', e);
    } finally {
      await fh.close().catch(() => undefined);
    }
  }

  /**
   * Takes one complete line at `offset` (`bytes` long): the header, or the next line. Returns why
   * it does not parse (possibly a torn line, decided by what follows); throws a `store_error` for
   * what is wrong whatever follows (a newer version, a seq out of order, a line that cannot fold).
   */
  private accept(text: string, offset: number, bytes: number): string | undefined {
    const lineNo = this.lines + 1;
    if (offset === 0) {
      const reason = checkHeaderLine(text, this.file, this.sessionId);
      if (reason) return reason;
    } else {
      const line = parseLine(text);
      if (typeof line === 'string') return line;
      if ('e' in line) {
        const expected = this.starts.length + 1;
        if (line.e.seq !== expected) {
          throw storeError(
            this.file,
            `line ${lineNo} holds seq ${line.e.seq} where seq ${expected} was expected (a ${line.e.seq > expected ? 'gap' : 'repeat'} in the log)`,
            undefined,
            { line: lineNo, seq: line.e.seq, expected },
          );
        }
        this.starts.push(offset);
        this.lens.push(bytes);
      } else {
        const wrong = this.fold.apply(line);
        if (wrong) throw storeError(this.file, `line ${lineNo} cannot be applied (${wrong})`, undefined, { line: lineNo });
      }
    }
    this.lines++;
    this.size = offset + bytes + 1;
    this.synced = this.size; // what was on disk before this process looked is taken as durable
    return undefined;
  }

  /** Truncates a torn tail (a crash mid-write) and reports it (made durable by the next sync). */
  private async cut(torn: TornTail): Promise<void> {
    await cutTornTail(this.file, torn);
    this.hooks.onRepair(this.file, `cut a torn last line ${torn.line} (${torn.bytes} bytes) left by a crash`);
  }
}
