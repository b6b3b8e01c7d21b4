import { AgentRxError } from '../../core/errors.js';
import type { SessionEvent } from '../../core/events/session-event.js';
import type { LedgerEntry } from '../../core/tools/tool-ledger.js';
import { recordProblem } from '../../core/store/record-shape.js';
import { SESSION_LOG_VERSION, type SessionRecord } from '../../core/store/session-store.js';

/*
 * How the Redis engine's records and log entries are read back: a reply that is not what this
 * build wrote (another version, a hand-edited key) is a `store_error` naming the session and key.
 */

/** The record from `rxLoad`'s flat replies (record hash, ledger hash, ledger order); undefined when there is none. */
export function decodeRecord(sessionId: string, key: string, flatRecord: string[], flatLedger: string[], order: string[]): SessionRecord | undefined {
  const hash = pairs(flatRecord);
  const ledgerHash = pairs(flatLedger);
  if (hash.data === undefined) return undefined;
  try {
    const data = JSON.parse(hash.data) as Omit<SessionRecord, 'ledger' | 'updatedAt'>;
    if (typeof data.version !== 'number' || data.version > SESSION_LOG_VERSION) {
      throw new Error(`it has version ${String(data.version)}, this build reads up to ${SESSION_LOG_VERSION}; upgrade agentrx`);
    }
    const ledger = order.flatMap((id) => (ledgerHash[id] === undefined ? [] : [JSON.parse(ledgerHash[id]) as LedgerEntry]));
    // Kept as written when it is not a number, so the error shows what the hash holds.
    const updatedAt =
      hash.updatedAt !== undefined && hash.updatedAt !== '' && Number.isFinite(Number(hash.updatedAt)) ? Number(hash.updatedAt) : hash.updatedAt;
    const record: unknown = { ...data, updatedAt, ledger };
    // A hash edited by hand (updatedAt "yesterday", status 42) must not reach a session or a listing.
    const problem = recordProblem(record);
    if (problem !== undefined) throw new Error(problem);
    return record as SessionRecord;
  } catch (e) {
    throw new AgentRxError(
      'store_error',
      `session '${sessionId}': the record in Redis is unreadable (${(e as Error).message}); delete the session if it cannot be repaired`,
      { sessionId, key },
    );
  }
}

/** One log entry (its field `e`) as the envelope it holds. */
export function decodeEnvelope(sessionId: string, id: string, fields: string[]): SessionEvent {
  const i = fields.indexOf('e');
  try {
    const text = fields[i + 1];
    if (i < 0 || i % 2 !== 0 || text === undefined) throw new Error('no field e');
    return JSON.parse(text) as SessionEvent;
  } catch (e) {
    throw new AgentRxError('store_error', `session '${sessionId}': log entry ${id} in Redis is unreadable (${(e as Error).message})`, { sessionId, id });
  }
}

/** A flat HGETALL reply as an object. */
function pairs(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] ?? ''] = flat[i + 1] ?? '';
  return out;
}
