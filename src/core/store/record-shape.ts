import { AgentRxError } from '../errors.js';
import type { SessionStatus } from './session-store.js';

/** Every status a record may have (a record, so a status added to `SessionStatus` must be added here). */
const STATUS_SET: Readonly<Record<SessionStatus, true>> = { running: true, idle: true, completed: true, failed: true, cancelled: true };
const STATUSES = Object.keys(STATUS_SET) as SessionStatus[];

/**
 * Why `value`, read back from a store, is not a session record of the shape `SessionRecord`
 * declares — naming the first field that is wrong and what it holds — or undefined when it is
 * one. What every engine checks a record against where the data can have been changed outside
 * agentrx (a file or a Redis hash edited by hand, a caller without types): a record that fails is
 * a `store_error` naming the session when it is opened, and is left out of `list` with a warning.
 * The version is checked by each engine (a newer one asks to upgrade); here only its type.
 */
export function recordProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `the record is ${shownValue(value)}, not an object`;
  const r = value as Record<string, unknown>;
  const field = (name: string, expected: string): string => `field '${name}' is ${shownValue(r[name])}, not ${expected}`;
  for (const name of ['version', 'sessionId', 'provider', 'threadId', 'status', 'createdAt', 'updatedAt'])
    if (r[name] === undefined) return `field '${name}' is missing`;
  const wrong = recordFieldsProblem(r);
  if (wrong) return wrong;
  const ledger = r['ledger'];
  if (!Array.isArray(ledger)) return field('ledger', 'an array of ledger entries');
  for (const [i, entry] of ledger.entries()) {
    const problem = ledgerEntryProblem(entry);
    if (problem) return `ledger entry ${i + 1}: ${problem}`;
  }
  if (r['transcript'] !== undefined && !Array.isArray(r['transcript'])) return field('transcript', 'an array of messages');
  return undefined;
}

/**
 * The `store_error` refusing to save `record` when it is not of a record's shape (a caller
 * without types: `updatedAt: "yesterday"`, `status: 42`), naming the session and the field;
 * undefined when it is one. For engines that keep what they are given as it is (memory), so such
 * a record is never read back. Its ledger entries are not checked one by one (they are written
 * by the Session, typed), so the check stays cheap per save.
 */
export function malformedRecordError(record: unknown): AgentRxError | undefined {
  const fields = typeof record === 'object' && record !== null ? (record as Record<string, unknown>) : undefined;
  const problem = fields === undefined ? recordProblem(record) : recordProblem({ ...fields, ledger: Array.isArray(fields['ledger']) ? [] : fields['ledger'] });
  if (problem === undefined) return undefined;
  const sessionId = fields?.['sessionId'];
  return new AgentRxError('store_error', `session '${String(sessionId)}': cannot save a record whose ${problem}`, { sessionId });
}

/**
 * Why some fields of a record (those a journal line saves: any subset, the ledger and transcript
 * apart) are not of the types `SessionRecord` declares, naming the first wrong one; undefined
 * when each field present is right.
 */
export function recordFieldsProblem(fields: Record<string, unknown>): string | undefined {
  const field = (name: string, expected: string): string => `field '${name}' is ${shownValue(fields[name])}, not ${expected}`;
  const has = (name: string): boolean => fields[name] !== undefined;
  if (has('version') && typeof fields['version'] !== 'number') return field('version', 'a version number');
  for (const name of ['sessionId', 'provider'])
    if (has(name) && (typeof fields[name] !== 'string' || fields[name] === '')) return field(name, 'a non-empty string');
  if (has('threadId') && typeof fields['threadId'] !== 'string') return field('threadId', 'a string');
  if (has('status') && !STATUSES.includes(fields['status'] as SessionStatus)) return field('status', `one of ${STATUSES.join(', ')}`);
  for (const name of ['createdAt', 'updatedAt'])
    if (has(name) && (typeof fields[name] !== 'number' || !Number.isFinite(fields[name]))) return field(name, 'a time in epoch ms');
  const error = fields['error'] as Record<string, unknown> | null | undefined;
  if (has('error') && (typeof error !== 'object' || error === null || typeof error['code'] !== 'string' || typeof error['message'] !== 'string'))
    return field('error', '{ code, message }');
  return undefined;
}

/** Why `entry` is not a ledger entry (`{ toolUseId, name, state }`, strings), or undefined. */
export function ledgerEntryProblem(entry: unknown): string | undefined {
  const e = entry as Record<string, unknown> | null;
  if (typeof e === 'object' && e !== null && typeof e['toolUseId'] === 'string' && typeof e['name'] === 'string' && typeof e['state'] === 'string')
    return undefined;
  return `${shownValue(entry)} is not a ledger entry { toolUseId, name, state }`;
}

/** A short rendering of a value for a message (JSON, cut at 40 characters). */
function shownValue(value: unknown): string {
  if (value === undefined) return 'missing';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}
