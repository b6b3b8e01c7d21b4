import { existsSync } from 'node:fs';
import { AgentRxError } from '../../core/errors.js';
import { isAgentRxEvent, type SessionEvent } from '../../core/events/session-event.js';
import { exportCassette, formatCassette, readWholeLog, writeCassette } from '../../core/store/cassette.js';
import type { SessionRecord, SessionStore } from '../../core/store/session-store.js';
import type { CliIo } from '../cli-io.js';
import { pathFrom } from '../flags.js';
import type { RenderFormat } from '../render-flags.js';
import { renderLog } from '../render-log.js';
import { fileStore } from '../run-store.js';
import { storeLocation } from '../state-dir.js';
/** A store to read sessions from and where it is (for messages). */
interface OpenedStore {
  readonly store: SessionStore;
  /** The directory, or a description of the injected store. */
  readonly where: string;
  /** False when the directory does not exist yet (nothing was ever recorded there). */
  readonly exists: boolean;
}

/** The store the session commands read: `io.store`, else the file store at {@link storeLocation} (opened through its registration). */
export function openStore(flag: string | undefined, io: CliIo): OpenedStore {
  if (io.store) return { store: io.store, where: 'the configured store', exists: true };
  const loc = storeLocation(flag, io.env, io.cwd);
  if (!loc) throw new AgentRxError('invalid_options', 'no state directory: pass --store <dir>, or set AGENTRX_STATE_DIR, XDG_STATE_HOME or HOME');
  return { store: fileStore(loc.dir, io), where: loc.dir, exists: existsSync(loc.dir) };
}

/** The record of `sessionId`, or a `store_error` naming the store and how to list what it holds. */
async function requireRecord(opened: OpenedStore, sessionId: string): Promise<SessionRecord> {
  const record = opened.exists ? await opened.store.load(sessionId) : undefined;
  if (!record) throw new AgentRxError('store_error', `no session '${sessionId}' in ${opened.where} (agentrx sessions ls lists them)`, { sessionId });
  return record;
}

/** `agentrx sessions ls`: one line per session, newest first (JSON lines with `json`). */
export async function listSessions(opened: OpenedStore, json: boolean, io: CliIo): Promise<void> {
  const records = opened.exists ? await opened.store.list() : [];
  const rows = await Promise.all(
    records.map(async (r) => ({
      id: r.sessionId,
      provider: r.provider,
      status: r.status,
      turns: countTurns(await readWholeLog(opened.store, r.sessionId)),
      updated: new Date(r.updatedAt).toISOString(),
    })),
  );
  if (json) {
    for (const row of rows) io.out.write(`${JSON.stringify(row)}\n`);
    return;
  }
  if (rows.length === 0) {
    io.err.write(`agentrx: no sessions in ${opened.where}\n`);
    return;
  }
  const table = [['ID', 'PROVIDER', 'STATUS', 'TURNS', 'UPDATED'], ...rows.map((r) => [r.id, r.provider, r.status, String(r.turns), r.updated])];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  for (const row of table) io.out.write(`${row.map((cell, c) => (c === row.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')}\n`);
}

/** Turns in a log: its `agentrx.turn_end` envelopes (every request's). */
function countTurns(log: readonly SessionEvent[]): number {
  return log.reduce((n, e) => (isAgentRxEvent(e, 'agentrx.turn_end') ? n + 1 : n), 0);
}

/** `agentrx sessions export`: the cassette to `file`, or to stdout. */
export async function exportSession(opened: OpenedStore, sessionId: string, file: string | undefined, io: CliIo): Promise<void> {
  await requireRecord(opened, sessionId);
  const cassette = await exportCassette(opened.store, sessionId);
  if (file === undefined) {
    io.out.write(formatCassette(cassette));
    return;
  }
  await writeCassette(pathFrom(io.cwd, file), cassette);
  io.err.write(`agentrx: session ${sessionId} (${cassette.envelopes.length} events) written to ${file}\n`);
}

/** `agentrx sessions show`: renders the session's log. */
export async function showSession(opened: OpenedStore, sessionId: string, format: RenderFormat, io: CliIo): Promise<void> {
  const record = await requireRecord(opened, sessionId);
  const log = await readWholeLog(opened.store, sessionId);
  if (format === 'terminal')
    io.err.write(
      `agentrx: session ${sessionId} · ${record.provider} · ${record.status} · ${log.length} events · updated ${new Date(record.updatedAt).toISOString()}\n`,
    );
  await renderLog(log, format, io, { sessionId, threadId: record.threadId });
}
