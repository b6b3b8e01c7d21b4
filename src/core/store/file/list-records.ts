import { isAgentRxError } from '../../errors.js';
import { recordProblem } from '../record-shape.js';
import type { SessionRecord } from '../session-store.js';

/** How `listRecords` reads one session. */
export interface RecordReader {
  /** The record read the quick way (`list`'s way: a snapshot, or a small journal's text). */
  summary(sessionId: string): Promise<SessionRecord | undefined>;
  /** The record read the thorough way, which names the file and line of what is wrong. */
  load(sessionId: string): Promise<SessionRecord | undefined>;
  /** The file a warning about the session names. */
  fileOf(sessionId: string): string;
}

/**
 * The records of `sessionIds`, newest `updatedAt` first, for `list`. A session that cannot be read
 * (a `store_error`, or a line that breaks the quick read) or whose record is not of a record's
 * shape (`recordProblem`: `updatedAt: "yesterday"`, `status: 42`) does not fail the listing of
 * the others: it is left out, and `warn` gets its file and why (from the thorough read when
 * that names the line). Opening that session reports the same as a `store_error`.
 */
export async function listRecords(sessionIds: readonly string[], reader: RecordReader, warn: (file: string, what: string) => void): Promise<SessionRecord[]> {
  const records: SessionRecord[] = [];
  for (const sessionId of sessionIds) {
    let why: string | undefined;
    try {
      const record = await reader.summary(sessionId);
      const problem = record === undefined ? undefined : recordProblem(record);
      if (problem === undefined) {
        if (record) records.push(record);
        continue;
      }
      why = problem;
    } catch (e) {
      why = messageOf(e);
    }
    // The thorough read names the file and line where the quick one could not (or reads it after all).
    const thorough = await reader.load(sessionId).then(
      (record) => ({ record, problem: record === undefined ? undefined : recordProblem(record) }),
      (e: unknown) => ({ record: undefined, problem: isAgentRxError(e, 'store_error') ? e.message : why }),
    );
    if (thorough.record !== undefined && thorough.problem === undefined) {
      records.push(thorough.record);
      continue;
    }
    warn(reader.fileOf(sessionId), `session '${sessionId}' is left out of the list: ${thorough.problem ?? why}`);
  }
  return records.sort((a, b) => b.updatedAt - a.updatedAt);
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
