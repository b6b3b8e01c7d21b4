import type { SessionEvent } from '../../events/session-event.js';
import type { RawEvent } from '../../model.js';
import type { LedgerEntry } from '../../tools/tool-ledger.js';
import type { SessionRecord } from '../session-store.js';
import { storeError } from './store-error.js';

/**
 * The layout version of `journal.jsonl`, in its header line. Version 2 was the layout before the
 * journal (`record.json` + `log.jsonl` + `ledger.jsonl`); a journal of a newer version is refused.
 */
export const JOURNAL_VERSION = 3;

/** The first line of a journal: the layout version and the session it belongs to. */
export interface JournalHeader {
  readonly version: number;
  readonly sessionId: string;
}

/**
 * One line of a journal after the header, told apart by its key:
 * - `e`: an envelope of the log (`seq` last + 1);
 * - `l`: a ledger transition (`at`: epoch ms, the record's new `updatedAt`);
 * - `r`: a record save: `r` holds the fields (besides ledger and transcript) that changed, `d` the
 *   fields removed, `L` the whole ledger when the save replaced it, and the transcript as `x` (how
 *   many items of the previous transcript it keeps) plus `tx` (the items after them).
 */
export type JournalLine =
  | { readonly e: SessionEvent }
  | { readonly l: LedgerEntry; readonly at: number }
  | {
      readonly r: Record<string, unknown>;
      readonly d?: readonly string[];
      readonly L?: readonly LedgerEntry[];
      readonly x?: number;
      readonly tx?: readonly RawEvent[];
    };

/** The header line (with its newline). */
export function headerLine(sessionId: string): string {
  return JSON.stringify({ version: JOURNAL_VERSION, sessionId } satisfies JournalHeader) + '\n';
}

/**
 * Checks the header line `text` of the journal `file` of `sessionId`: returns why it does not
 * parse (possibly a torn line, decided by what follows); throws a `store_error` for a header of
 * another layout version or another session, or a first line that is no header at all.
 */
export function checkHeaderLine(text: string, file: string, sessionId: string): string | undefined {
  let header: { version?: unknown; sessionId?: unknown } | null;
  try {
    header = JSON.parse(text) as typeof header;
  } catch (e) {
    return (e as Error).message;
  }
  const version = header?.version;
  if (typeof version !== 'number')
    throw storeError(file, `line 1 is not a journal header ({"version":${JOURNAL_VERSION},"sessionId":…}); this is not an agentrx session journal`, undefined, {
      line: 1,
    });
  if (version > JOURNAL_VERSION) {
    throw storeError(
      file,
      `the journal was written by a newer agentrx (journal version ${version}; this build reads version ${JOURNAL_VERSION}); upgrade agentrx to open it`,
      undefined,
      { line: 1, version },
    );
  }
  if (version !== JOURNAL_VERSION)
    throw storeError(file, `unsupported journal version ${version} (this build reads version ${JOURNAL_VERSION})`, undefined, { line: 1, version });
  if (header?.sessionId !== sessionId)
    throw storeError(file, `the journal holds session '${String(header?.sessionId)}', not '${sessionId}' as its folder says`, undefined, { line: 1 });
  return undefined;
}

/** The line of one envelope (with its newline). */
export function envelopeLine(env: SessionEvent): string {
  return `{"e":${JSON.stringify(env)}}\n`;
}

/** The line of one transition (with its newline). */
export function transitionLine(entry: LedgerEntry, at: number): string {
  return `{"l":${JSON.stringify(entry)},"at":${at}}\n`;
}

/** Items equal field by field (`===`): how a transcript copied item by item (`{ ...m }`) is recognised. */
function sameItem(a: RawEvent, b: RawEvent): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if ((a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  return true;
}

/**
 * A session's record as the journal lines fold it: the record fields, the ledger (by tool-use id,
 * in first-seen order) and the transcript. `saveLine` writes what changed since the fold, so a
 * transcript that grows turn by turn costs its new items only.
 */
export class JournalFold {
  private fields: Record<string, unknown> | undefined;
  private ledger = new Map<string, LedgerEntry>();
  private transcript: readonly RawEvent[] | undefined;
  private cached: SessionRecord | undefined;

  /** The folded record (undefined: no save yet). The same object until the next change. */
  get record(): SessionRecord | undefined {
    if (!this.fields) return undefined;
    // The fields are what saves of whole records left (the first save of a journal carries all of them).
    const fields = this.fields as Omit<SessionRecord, 'ledger' | 'transcript'>;
    this.cached ??= { ...fields, ledger: [...this.ledger.values()], ...(this.transcript ? { transcript: this.transcript } : {}) };
    return this.cached;
  }

  /** The ledger entry of `toolUseId`, if any. */
  entry(toolUseId: string): LedgerEntry | undefined {
    return this.ledger.get(toolUseId);
  }

  /** Whether there is a record (a transition needs one). */
  get hasRecord(): boolean {
    return this.fields !== undefined;
  }

  /** The line saving `record` over the fold (with its newline); `apply` it once written. */
  saveLine(record: SessionRecord): { text: string; line: JournalLine } {
    const { ledger, transcript, ...fields } = record;
    const prev = this.fields;
    const r: Record<string, unknown> = {};
    const d: string[] = [];
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) {
        if (prev?.[k] !== undefined) d.push(k);
      } else if (!prev || prev[k] !== v) r[k] = v;
    }
    if (prev) for (const k of Object.keys(prev)) if (!(k in fields) && prev[k] !== undefined) d.push(k);
    const line: { r: Record<string, unknown>; d?: string[]; L?: readonly LedgerEntry[]; x?: number; tx?: readonly RawEvent[] } = { r };
    if (d.length > 0) line.d = d;
    if (!prev || !this.sameLedger(ledger)) line.L = ledger;
    if (transcript === undefined) {
      if (this.transcript !== undefined) line.d = [...d, 'transcript'];
    } else if (transcript !== this.transcript) {
      const old = this.transcript ?? [];
      let keep = 0;
      while (keep < old.length && keep < transcript.length && sameItem(old[keep]!, transcript[keep]!)) keep++;
      if (keep !== old.length || keep !== transcript.length) {
        line.x = keep;
        line.tx = keep === 0 ? transcript : transcript.slice(keep);
      }
    }
    return { text: `${JSON.stringify(line)}\n`, line };
  }

  /** Folds the save of `record` (its own objects kept, as the caller's snapshot). */
  applySave(record: SessionRecord): void {
    const { ledger, transcript, ...fields } = record;
    this.fields = fields;
    if (!this.sameLedger(ledger)) this.ledger = new Map(ledger.map((e) => [e.toolUseId, e]));
    this.transcript = transcript;
    this.cached = undefined;
  }

  /**
   * Folds a line read back from the file; returns why it cannot be folded (a transition without
   * a record, a transcript delta longer than the transcript), or undefined.
   */
  apply(line: JournalLine): string | undefined {
    if ('l' in line) {
      if (!this.fields) return 'a ledger transition before any record';
      this.ledger.set(line.l.toolUseId, line.l);
      this.fields = { ...this.fields, updatedAt: line.at };
    } else if ('r' in line) {
      const fields: Record<string, unknown> = { ...this.fields, ...line.r };
      for (const k of line.d ?? []) delete fields[k];
      if (line.d?.includes('transcript')) this.transcript = undefined;
      if (line.tx) {
        const old = this.transcript ?? [];
        if ((line.x ?? 0) > old.length) return `a transcript delta after item ${line.x} of a transcript of ${old.length}`;
        this.transcript = (line.x ?? 0) === 0 ? line.tx : old.slice(0, line.x).concat(line.tx);
      }
      if (line.L) this.ledger = new Map(line.L.map((e) => [e.toolUseId, e]));
      else if (!this.fields) return 'a record save without a ledger before any record';
      this.fields = fields;
    }
    this.cached = undefined;
    return undefined;
  }

  /** Folds a transition written by this process. */
  applyTransition(entry: LedgerEntry, at: number): void {
    this.ledger.set(entry.toolUseId, entry);
    this.fields = { ...this.fields, updatedAt: at };
    this.cached = undefined;
  }

  /** Forgets everything (the file is read again). */
  reset(): void {
    this.fields = undefined;
    this.ledger = new Map();
    this.transcript = undefined;
    this.cached = undefined;
  }

  /** Same entries in the same order as the folded ledger (entries are immutable: compared by reference). */
  private sameLedger(ledger: readonly LedgerEntry[]): boolean {
    if (ledger.length !== this.ledger.size) return false;
    let i = 0;
    for (const e of this.ledger.values()) if (e !== ledger[i++]) return false;
    return true;
  }
}

/**
 * Parses one line after the header: the line, or why it is not a journal line. Envelope lines
 * are checked for a numeric `seq` only (the caller checks the order).
 */
export function parseLine(text: string): JournalLine | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return (e as Error).message;
  }
  if (typeof value !== 'object' || value === null) return 'not a journal line';
  const v = value as Record<string, unknown>;
  if ('e' in v) return typeof (v.e as { seq?: unknown } | null)?.seq === 'number' ? (v as JournalLine) : 'an envelope without a seq';
  if ('l' in v) {
    const l = v.l as Partial<LedgerEntry> | null;
    return typeof l?.toolUseId === 'string' && typeof l.state === 'string' && typeof v.at === 'number' ? (v as JournalLine) : 'not a ledger entry';
  }
  if ('r' in v) return typeof v.r === 'object' && v.r !== null && (v.L === undefined || Array.isArray(v.L)) ? (v as JournalLine) : 'not a record save';
  return 'not a journal line';
}

/**
 * The record a whole journal's text folds to, for `list` and `prune`, without parsing the
 * envelope lines (each is only checked to hold the next seq and to end as an envelope line).
 * Undefined when the text is anything but a well-formed journal of `sessionId` of this version —
 * a torn or corrupt line included: the caller then reads it the thorough way, which repairs or
 * names what is wrong.
 */
export function foldJournalText(text: string, sessionId: string): { record: SessionRecord | undefined } | undefined {
  if (text === '') return { record: undefined };
  if (!text.endsWith('\n')) return undefined;
  let nl = text.indexOf('\n');
  if (text.slice(0, nl + 1) !== headerLine(sessionId)) return undefined;
  const fold = new JournalFold();
  let seq = 0;
  for (let at = nl + 1; at < text.length; at = nl + 1) {
    nl = text.indexOf('\n', at);
    if (text.startsWith('{"e":{"seq":', at)) {
      const prefix = `{"e":{"seq":${seq + 1},`;
      if (!text.startsWith(prefix, at) || text.charCodeAt(nl - 1) !== 125 || text.charCodeAt(nl - 2) !== 125) return undefined;
      seq++;
      continue;
    }
    const line = parseLine(text.slice(at, nl));
    if (typeof line === 'string' || 'e' in line || fold.apply(line) !== undefined) return undefined;
  }
  return { record: fold.record };
}
