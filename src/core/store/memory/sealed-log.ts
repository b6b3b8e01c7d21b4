import type { SessionEvent } from '../../events/session-event.js';

/**
 * A closed session's log as the memory store keeps it: JSON text (packed with the session's
 * record, see `MemorySessionEntry`), in one of two forms.
 *
 * The usual form leaves out what every envelope of one log repeats: its session id and provider
 * are written once, its seq is implied (they follow on from the first), and `at` is written as the
 * difference from the envelope before. Each envelope is `[turn, atDelta, raw]` (source `agentrx`),
 * `[turn, atDelta, raw, 0]` (source `provider`) or `[turn, atDelta, raw, id]` (source `provider`
 * with a dedupe id). A five-turn streamed tool session's 60 KB of JSON becomes 38 KB, 2.8 KB packed
 * instead of 4.0 KB.
 *
 * A log that does not have exactly that shape (another key, a missing session id, a non-integer
 * `at`, a gap in seq) is kept as the JSON array of its envelopes, as given: nothing is lost either
 * way, and reading gives envelopes equal to those appended.
 */
interface Columns {
  /** Session id, provider, first seq, first `at`. */
  readonly s: string;
  readonly p: string;
  readonly q: number;
  readonly a: number;
  readonly e: readonly ColumnRow[];
}
type ColumnRow = readonly [turn: number, atDelta: number, raw: unknown, providerId?: 0 | string];

/** The JSON text of `log` (non-empty, consecutive seqs) in the form above. */
export function logText(log: readonly SessionEvent[]): string {
  return JSON.stringify(columnsOf(log) ?? log);
}

/** The envelopes `logText` was given, from its text (fresh objects on each call). */
export function parseLog(text: string): SessionEvent[] {
  const parsed = JSON.parse(text) as SessionEvent[] | Columns;
  return Array.isArray(parsed) ? parsed : envelopesOf(parsed);
}

/** The columns of `log`, or undefined when one of its envelopes has another shape. */
function columnsOf(log: readonly SessionEvent[]): Columns | undefined {
  const first = log[0];
  if (first === undefined) return undefined;
  const { sessionId, provider, seq } = first;
  if (typeof sessionId !== 'string' || typeof provider !== 'string') return undefined;
  const rows: ColumnRow[] = new Array<ColumnRow>(log.length);
  let at = first.at;
  for (let i = 0; i < log.length; i++) {
    const e = log[i]!;
    if (e.seq !== seq + i || e.sessionId !== sessionId || e.provider !== provider) return undefined;
    if (!Number.isSafeInteger(e.at) || !Number.isFinite(e.turn) || e.raw === undefined) return undefined;
    const keys = keyCount(e);
    if (e.source === 'agentrx' && keys === 7) rows[i] = [e.turn, e.at - at, e.raw];
    else if (e.source === 'provider' && e.id === undefined && keys === 7) rows[i] = [e.turn, e.at - at, e.raw, 0];
    else if (e.source === 'provider' && typeof e.id === 'string' && keys === 8) rows[i] = [e.turn, e.at - at, e.raw, e.id];
    else return undefined;
    at = e.at;
  }
  return { s: sessionId, p: provider, q: seq, a: first.at, e: rows };
}

/** Own enumerable keys (seven named ones, plus `id`, make an envelope this form keeps whole). */
function keyCount(e: object): number {
  let n = 0;
  for (const k in e) if (Object.hasOwn(e, k)) n++;
  return n;
}

/** The envelopes back, in the key order the Session makes them in. */
function envelopesOf(c: Columns): SessionEvent[] {
  const { s: sessionId, p: provider, q, e: rows } = c;
  const out = new Array<SessionEvent>(rows.length);
  let at = c.a;
  for (let i = 0; i < rows.length; i++) {
    const [turn, delta, raw, id] = rows[i]!;
    at += delta;
    const seq = q + i;
    out[i] = (
      id === undefined
        ? { seq, sessionId, turn, provider, source: 'agentrx', raw, at }
        : id === 0
          ? { seq, sessionId, turn, provider, source: 'provider', raw, at }
          : { seq, sessionId, turn, provider, source: 'provider', id, raw, at }
    ) as SessionEvent;
  }
  return out;
}
