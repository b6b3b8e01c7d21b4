import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { foldJournalText } from './journal-lines.js';
import type { SessionRecord } from '../session-store.js';

/**
 * `record.json` beside a session's journal: the folded record as of `journalSize` bytes of
 * `journal.jsonl`, written when a session with a large journal is released so `list` and `prune`
 * need not fold it. Only a shortcut: trusted while the journal still has that size, otherwise ignored.
 */
export interface RecordSnapshot {
  readonly journalSize: number;
  /** Null: the journal holds no record (only envelopes). */
  readonly record: SessionRecord | null;
}

/** The snapshot in `file`, or undefined when there is none or it is not one (a snapshot is never trusted blindly). */
export async function readSnapshot(file: string): Promise<RecordSnapshot | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const snap = JSON.parse(text) as Partial<RecordSnapshot> | null;
    if (typeof snap?.journalSize !== 'number' || typeof snap.record !== 'object') return undefined;
    return snap as RecordSnapshot;
  } catch {
    return undefined;
  }
}

/**
 * Writes the snapshot atomically (a temp file renamed over the old one), without fsync: a crash
 * may lose it or leave the previous one, which the journal's size then tells apart. Failures are
 * swallowed (the temp file removed): `list` folds the journal instead.
 */
export function writeSnapshot(file: string, snapshot: RecordSnapshot): void {
  const tmp = `${file}.${randomUUID()}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(snapshot));
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
  }
}

/**
 * The record of the session whose journal is `journal`, read the quick way for `list` and
 * `prune`: from the snapshot when the journal is at least `snapshotBytes` long and the snapshot
 * names its size, else from the text of a smaller journal (`foldJournalText`). Undefined when
 * neither answers (no journal, a stale snapshot, a torn or corrupt line…): the caller reads the
 * journal the thorough way, which repairs or names what is wrong.
 */
export async function quickRecord(
  journal: string,
  snapshot: string,
  sessionId: string,
  snapshotBytes: number,
): Promise<{ record: SessionRecord | undefined } | undefined> {
  const size = await stat(journal).then(
    (st) => (st.isFile() ? st.size : -1),
    () => -1,
  );
  if (size < 0) return undefined;
  if (size >= snapshotBytes) {
    const snap = await readSnapshot(snapshot);
    return snap && snap.journalSize === size ? { record: snap.record ?? undefined } : undefined;
  }
  const text = await readFile(journal, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : foldJournalText(text, sessionId);
}
