import type { SessionEvent } from '../../events/session-event.js';
import type { SessionRecord, SessionStatus } from '../session-store.js';
import { pack, unpack, type PackedText } from './packed-text.js';
import { parseLog, sealLog } from './sealed-log.js';

/** The last sealed log read, unpacked: a reader pages through one log at a time. */
let lastRead: { readonly packed: PackedText; readonly text: string } | undefined;

/**
 * One session in the memory store: its record, its log and who is using it.
 *
 * While the session is open its record and envelopes are kept as given (the Session hands over
 * immutable ones, and re-reads the record at every checkpoint). Once it is released both are
 * sealed: serialized to JSON once and compressed (`pack`; the log in `sealLog`'s form), and parsed
 * again on each read. A five-turn streamed tool session holds about 67 KB of heap as objects and
 * 4 KB sealed; serializing each envelope as it is appended instead cost about 1 ms of CPU per
 * such session more (a string per envelope, and about 170 bytes of heap over its text each).
 */
export class MemorySessionEntry {
  /** The record as last saved, until the session is released; then undefined. */
  private live: SessionRecord | undefined;
  /** The record's JSON text, packed, once the session was released (until it is saved again), else undefined. */
  private text: PackedText | undefined;
  /** Of the record, whichever form it is in (for ordering, retention and the thread index). */
  updatedAt = 0;
  status: SessionStatus | undefined;
  threadId: string | undefined;
  /** Envelopes `base + 1 … base + count` as given (older ones were dropped by the log limit); empty while sealed. */
  private log: SessionEvent[] = [];
  /** The sealed log: the JSON text of its envelopes' array, packed, and how many there are. */
  private sealed: { readonly packed: PackedText; readonly count: number } | undefined;
  base = 0;
  /** Acquired and not released. */
  held = false;
  /** The drains of the tails subscribed now: while there are any, the entry is kept for them. */
  readonly tails = new Set<() => void>();
  /** Released while tails were following it, in a store that keeps nothing once closed: dropped when the last one leaves. */
  closed = false;

  /** Whether a record was saved. */
  get hasRecord(): boolean {
    return this.live !== undefined || this.text !== undefined;
  }

  /** Envelopes in the log. */
  get count(): number {
    return this.sealed ? this.sealed.count : this.log.length;
  }

  /** The highest seq in the log. */
  get lastSeq(): number {
    return this.base + this.count;
  }

  /** What this entry counts against `memoryMaxBytes`: its sealed log and record (what is kept as given is not counted). */
  get chars(): number {
    return (this.sealed?.packed.length ?? 0) + (this.text?.length ?? 0);
  }

  /** The record (a fresh copy once sealed), or undefined. */
  record(): SessionRecord | undefined {
    return this.live ?? (this.text === undefined ? undefined : (JSON.parse(unpack(this.text)) as SessionRecord));
  }

  /** Replaces the record: kept as given until the session is released (`compact`). */
  setRecord(record: SessionRecord): void {
    this.updatedAt = record.updatedAt;
    this.status = record.status;
    this.threadId = record.threadId;
    this.live = record;
    this.text = undefined;
  }

  /** The session was released: its record and its log are sealed. */
  compact(): void {
    if (this.live !== undefined) {
      this.text = pack(JSON.stringify(this.live));
      this.live = undefined;
    }
    if (this.sealed || this.log.length === 0) return;
    this.sealed = { packed: sealLog(this.log), count: this.log.length };
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
    return this.sealed ? this.parsed(this.sealed.packed).slice(from, to) : this.log.slice(from, to);
  }

  /** Back to envelopes as objects, to append to a sealed log (a resumed session). */
  private unseal(): void {
    if (!this.sealed) return;
    this.log = this.parsed(this.sealed.packed);
    this.sealed = undefined;
  }

  /** The envelopes of a sealed log, parsed (the last one read is kept unpacked). */
  private parsed(packed: PackedText): SessionEvent[] {
    if (lastRead?.packed !== packed) lastRead = { packed, text: unpack(packed) };
    return parseLog(lastRead.text);
  }

  /** Tells the tails that envelopes were appended. */
  notify(): void {
    for (const drain of this.tails) drain();
  }
}
