import { readFile, writeFile } from 'node:fs/promises';
import { AgentRxError } from '../errors.js';
import type { SessionEvent } from '../events/session-event.js';
import { SESSION_LOG_VERSION, type SessionRecord, type SessionStore } from './session-store.js';

/**
 * One recorded session in one JSON file: its record and its whole log, in `seq` order. What
 * `agentrx sessions export` and `run --record` write, what `agentrx replay` renders and what
 * `ReplayProvider` (agentrx/testing) plays back.
 */
export interface Cassette {
  readonly version: typeof SESSION_LOG_VERSION;
  readonly record: SessionRecord;
  /** Every envelope of the log, `seq` 1..n without gaps. */
  readonly envelopes: readonly SessionEvent[];
}

/** Envelopes read per store page while exporting. */
const PAGE = 1_000;

/** Every envelope of `sessionId`'s log, in order (paged through `read`). */
export async function readWholeLog(store: SessionStore, sessionId: string): Promise<SessionEvent[]> {
  const all: SessionEvent[] = [];
  for (;;) {
    const page = await store.read(sessionId, all.length === 0 ? 0 : all[all.length - 1]!.seq, PAGE);
    if (page.length === 0) return all;
    all.push(...page);
    if (page.length < PAGE) return all;
  }
}

/**
 * The cassette of `sessionId`: its record and whole log. Fails with `store_error` when the store
 * has no record for it (a missing session is never exported as an empty one).
 */
export async function exportCassette(store: SessionStore, sessionId: string): Promise<Cassette> {
  const record = await store.load(sessionId);
  if (!record) throw new AgentRxError('store_error', `no session '${sessionId}' in the store (agentrx sessions ls lists them)`, { sessionId });
  return { version: SESSION_LOG_VERSION, record, envelopes: await readWholeLog(store, sessionId) };
}

/** The cassette as JSON text: one envelope per line, so two cassettes diff line by line. */
export function formatCassette(cassette: Cassette): string {
  const envelopes = cassette.envelopes.map((e) => JSON.stringify(e)).join(',\n');
  return `{"version":${cassette.version},"record":${JSON.stringify(cassette.record)},"envelopes":[${envelopes.length > 0 ? `\n${envelopes}\n` : ''}]}\n`;
}

/** Writes `cassette` to `file` (created or replaced); `store_error` naming the file on failure. */
export async function writeCassette(file: string, cassette: Cassette): Promise<void> {
  try {
    await writeFile(file, formatCassette(cassette), 'utf8');
  } catch (e) {
    throw new AgentRxError(
      'store_error',
      `cannot write cassette ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      { file },
      { cause: e },
    );
  }
}

/** Reads and checks a cassette file; `store_error` naming the file and what is wrong. */
export async function readCassette(file: string): Promise<Cassette> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new AgentRxError('store_error', `cannot read cassette ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file }, { cause: e });
  }
  return parseCassette(text, file);
}

/**
 * Parses and checks cassette text (`name` is used in messages). Refuses, with `store_error`:
 * text that is not JSON (a cut-off file is called truncated), JSON that is not a cassette, a
 * version other than this build's, a record without a session id, and a log that is not
 * `seq` 1..n of well-formed envelopes.
 */
export function parseCassette(text: string, name: string): Cassette {
  const fail = (what: string): AgentRxError => new AgentRxError('store_error', `cassette ${name} ${what}`, { file: name });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    if (text.trim().length === 0) throw fail('is empty');
    // A file cut off mid-write ends inside the JSON: V8 says "Unexpected end of JSON input" or "Unterminated string".
    throw fail(/end of JSON input|Unterminated/i.test(msg) ? `is truncated (${msg})` : `is not valid JSON (${msg})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !('envelopes' in parsed) || !('record' in parsed)) {
    throw fail('is not an agentrx cassette (expected a JSON object with version, record and envelopes)');
  }
  const c = parsed as { version?: unknown; record?: unknown; envelopes?: unknown };
  if (typeof c.version === 'number' && c.version > SESSION_LOG_VERSION) {
    throw fail(`was written by a newer agentrx (version ${c.version}; this build reads version ${SESSION_LOG_VERSION})`);
  }
  if (c.version !== SESSION_LOG_VERSION) throw fail(`has unsupported version ${JSON.stringify(c.version)} (this build reads version ${SESSION_LOG_VERSION})`);
  const record = c.record as Partial<SessionRecord> | null;
  if (typeof record !== 'object' || record === null || typeof record.sessionId !== 'string' || typeof record.provider !== 'string') {
    throw fail('has no valid record (a session id and a provider are required)');
  }
  if (!Array.isArray(c.envelopes)) throw fail('has no envelope list');
  c.envelopes.forEach((env: unknown, i) => {
    const e = env as Partial<SessionEvent> | null;
    if (typeof e !== 'object' || e === null || (e.source !== 'provider' && e.source !== 'agentrx') || typeof e.raw !== 'object' || e.raw === null) {
      throw fail(`has a malformed envelope at index ${i}`);
    }
    if (e.seq !== i + 1) throw fail(`is not a whole log: envelope ${i} has seq ${JSON.stringify(e.seq)}, expected ${i + 1}`);
  });
  return parsed as Cassette;
}
