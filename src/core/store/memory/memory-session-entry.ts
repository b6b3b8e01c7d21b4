import type { SessionEvent } from '../../events/session-event.js';
import type { SessionRecord, SessionStatus } from '../session-store.js';
import { pack, unpack, type PackedText } from './packed-text.js';
import { logText, parseLog } from './sealed-log.js';

/**
 * A released session's record and log: the record's JSON text, a line break and the log's JSON
 * text (`logText`), packed as one text; either part is empty when there is none. JSON text never
 * holds a raw line break, so the first one divides them. One text rather than two: each `pack`
 * call costs about 0.1 ms of set-up in a running server, as much as packing the whole log.
 */
interface Sealed {
  readonly packed: PackedText;
  /** Envelopes in the log part. */
  readonly count: number;
  /** The record part is not empty. */
  readonly hasRecord: boolean;
}

/** The last sealed text read, unpacked and divided: a reader pages through one log at a time. */
let lastRead: { readonly packed: PackedText; readonly record: string; readonly log: string } | undefined;

/**
 * One session in the memory store: its record, its log and who is using it.
 *
 * While the session is open its record and envelopes are kept as given (the Session hands over
 * immutable ones, and re-reads the record at every checkpoint). Once it is released both are
 * sealed: serialized to JSON once and compressed together (`Sealed`), and parsed again on each
 * read. A five-turn streamed tool session holds about 67 KB of heap as objects and under 4 KB
 * sealed; serializing each envelope as it is appended instead cost about 1 ms of CPU per such
 * session more (a string per envelope, and about 170 bytes of heap over its text each).
 */
export class MemorySessionEntry {
  /** The record as last saved, until the session is released (then in `sealed`); a record saved again after that, until the next release. */
  private live: SessionRecord | undefined;
  /** Of the record, whichever form it is in (for ordering, retention and the thread index). */
  updatedAt = 0;
  status: SessionStatus | undefined;
  threadId: string | undefined;
  /** Envelopes `base + 1 … base + count` as given (older ones were dropped by the log limit); empty while sealed. */
  private log: SessionEvent[] = [];
  /** The record and the log once released; `live`, when set, is the newer record. */
  private sealed: Sealed | undefined;
  base = 0;
  /** Acquired and not released. */
  held = false;
  /** The drains of the tails subscribed now: while there are any, the entry is kept for them. */
  readonly tails = new Set<() => void>();
  /** Released while tails were following it, in a store that keeps nothing once closed: dropped when the last one leaves. */
  closed = false;

  /** Whether a record was saved. */
  get hasRecord(): boolean {
    return this.live !== undefined || this.sealed?.hasRecord === true;
  }

  /** Envelopes in the log. */
  get count(): number {
    return this.sealed ? this.sealed.count : this.log.length;
  }

  /** The highest seq in the log. */
  get lastSeq(): number {
    return this.base + this.count;
  }

  /** What this entry counts against `memoryMaxBytes`: its sealed text (what is kept as given is not counted). */
  get chars(): number {
    return this.sealed?.packed.length ?? 0;
  }

  /** The record (a fresh copy once sealed), or undefined. */
  record(): SessionRecord | undefined {
    if (this.live !== undefined) return this.live;
    return this.sealed?.hasRecord ? (JSON.parse(this.unpacked(this.sealed).record) as SessionRecord) : undefined;
  }

  /** Replaces the record: kept as given until the session is released (`compact`). */
  setRecord(record: SessionRecord): void {
    this.updatedAt = record.updatedAt;
    this.status = record.status;
    this.threadId = record.threadId;
    this.live = record;
  }

  /** The session was released: its record and its log are sealed (again, when one of them changed since). */
  compact(): void {
    if (this.live === undefined && this.log.length === 0) return;
    const old = this.sealed ? this.unpacked(this.sealed) : undefined;
    const record = this.live !== undefined ? JSON.stringify(this.live) : (old?.record ?? '');
    const log = this.log.length > 0 ? logText(this.log) : (old?.log ?? '');
    this.sealed = { packed: pack(`${record}\n${log}`), count: this.count, hasRecord: record !== '' };
    this.live = undefined;
    this.log = [];
  }

  /** Appends envelopes already checked to follow on from `lastSeq`. */
  push(envelopes: readonly SessionEvent[]): void {
    this.unseal();
    for (const env of envelopes) this.log.push(env);
  }

  /** Drops the oldest `count` envelopes (numbering goes on). */
  dropOldest(count: number): void {
    this.unseal();
    this.log = this.log.slice(count);
    this.base += count;
  }

  /** Envelopes at log indexes `from` (included) to `to` (excluded): copies once sealed. */
  slice(from: number, to: number): SessionEvent[] {
    return this.sealed ? this.sealedLog(this.sealed).slice(from, to) : this.log.slice(from, to);
  }

  /** Back to a record and envelopes as objects, to append to the log (a resumed session). */
  private unseal(): void {
    const sealed = this.sealed;
    if (!sealed) return;
    if (this.live === undefined && sealed.hasRecord) this.live = JSON.parse(this.unpacked(sealed).record) as SessionRecord;
    this.log = this.sealedLog(sealed);
    this.sealed = undefined;
  }

  /** The envelopes of the sealed log, parsed. */
  private sealedLog(sealed: Sealed): SessionEvent[] {
    return sealed.count === 0 ? [] : parseLog(this.unpacked(sealed).log);
  }

  /** The sealed text unpacked and divided (the last one read is kept). */
  private unpacked(sealed: Sealed): { readonly record: string; readonly log: string } {
    if (lastRead?.packed !== sealed.packed) {
      const text = unpack(sealed.packed);
      const cut = text.indexOf('\n');
      lastRead = { packed: sealed.packed, record: text.slice(0, cut), log: text.slice(cut + 1) };
    }
    return lastRead;
  }

  /** Tells the tails that envelopes were appended. */
  notify(): void {
    for (const drain of this.tails) drain();
  }
}
