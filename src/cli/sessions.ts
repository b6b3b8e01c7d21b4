import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { Subject } from 'rxjs';
import { JsonlConsumer } from '../consumers/jsonl/jsonl.consumer.js';
import { TerminalConsumer } from '../consumers/terminal/terminal.consumer.js';
import { AgentRxError } from '../core/errors.js';
import { withAgUi } from '../core/events/translated-event.js';
import { isAgentRxEvent, type SessionEvent } from '../core/events/session-event.js';
import { stopReasonForCode, type StopReason } from '../core/plugin/event-consumer.js';
import { ConsumerHub, type ConsumerError } from '../core/session/consumer-hub.js';
import { coreStores } from '../core/store/core-stores.js';
import { openStore as openEngine } from '../core/store/open-store.js';
import type { SessionRecord, SessionStore } from '../core/store/session-store.js';
import { exportCassette, formatCassette, readCassette, readWholeLog, writeCassette } from '../core/store/cassette.js';
import type { CliIo } from './cli.js';
import { storeLocation } from './state-dir.js';

/** What the session and replay commands need of the CLI's I/O: the CLI's own. */
export type SessionsIo = CliIo;

/** How a recorded session is printed: the terminal renderer, AG-UI JSON lines, or the envelopes verbatim. */
export type RenderFormat = 'terminal' | 'agui' | 'envelopes';

/** Longest pause `--pace` keeps between two events (a session idle for an hour replays in seconds). */
export const MAX_PACE_GAP_MS = 5_000;

/** A store to read sessions from and where it is (for messages). */
export interface OpenedStore {
  readonly store: SessionStore;
  /** The directory, or a description of the injected store. */
  readonly where: string;
  /** False when the directory does not exist yet (nothing was ever recorded there). */
  readonly exists: boolean;
}

/** The store the session commands read: `io.store`, else the file store at {@link storeLocation} (opened through its registration). */
export function openStore(flag: string | undefined, io: SessionsIo): OpenedStore {
  if (io.store) return { store: io.store, where: 'the configured store', exists: true };
  const loc = storeLocation(flag, io.env, io.cwd);
  if (!loc) throw new AgentRxError('invalid_options', 'no state directory: pass --store <dir>, or set AGENTRX_STATE_DIR, XDG_STATE_HOME or HOME');
  const store = openEngine({ type: 'file', dir: loc.dir }, coreStores, { onRepair: (file, reason) => io.err.write(`agentrx: warning: ${file}: ${reason}\n`) });
  return { store, where: loc.dir, exists: existsSync(loc.dir) };
}

/** The record of `sessionId`, or a `store_error` naming the store and how to list what it holds. */
export async function requireRecord(opened: OpenedStore, sessionId: string): Promise<SessionRecord> {
  const record = opened.exists ? await opened.store.load(sessionId) : undefined;
  if (!record) throw new AgentRxError('store_error', `no session '${sessionId}' in ${opened.where} (agentrx sessions ls lists them)`, { sessionId });
  return record;
}

/** `agentrx sessions ls`: one line per session, newest first (JSON lines with `json`). */
export async function listSessions(opened: OpenedStore, json: boolean, io: SessionsIo): Promise<void> {
  const records = opened.exists ? await opened.store.list() : [];
  const rows = await Promise.all(
    records.map(async (r) => ({ id: r.sessionId, provider: r.provider, status: r.status, turns: countTurns(await readWholeLog(opened.store, r.sessionId)), updated: new Date(r.updatedAt).toISOString() })),
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
export function countTurns(log: readonly SessionEvent[]): number {
  return log.reduce((n, e) => (isAgentRxEvent(e, 'agentrx.turn_end') ? n + 1 : n), 0);
}

/** `agentrx sessions export`: the cassette to `file`, or to stdout. */
export async function exportSession(opened: OpenedStore, sessionId: string, file: string | undefined, io: SessionsIo): Promise<void> {
  await requireRecord(opened, sessionId);
  const cassette = await exportCassette(opened.store, sessionId);
  if (file === undefined) {
    io.out.write(formatCassette(cassette));
    return;
  }
  await writeCassette(resolveFrom(io.cwd, file), cassette);
  io.err.write(`agentrx: session ${sessionId} (${cassette.envelopes.length} events) written to ${file}\n`);
}

/** `agentrx sessions show`: renders the session's log. */
export async function showSession(opened: OpenedStore, sessionId: string, format: RenderFormat, io: SessionsIo): Promise<void> {
  const record = await requireRecord(opened, sessionId);
  const log = await readWholeLog(opened.store, sessionId);
  if (format === 'terminal') io.err.write(`agentrx: session ${sessionId} · ${record.provider} · ${record.status} · ${log.length} events · updated ${new Date(record.updatedAt).toISOString()}\n`);
  await renderLog(log, format, io, { sessionId, threadId: record.threadId });
}

/** `agentrx replay`: renders a cassette file, fast or at recorded pace. */
export async function replayFile(file: string, format: RenderFormat, pace: boolean, io: SessionsIo): Promise<void> {
  const cassette = await readCassette(resolveFrom(io.cwd, file));
  const { record } = cassette;
  if (format === 'terminal') io.err.write(`agentrx replay: session ${record.sessionId} · ${record.provider} · ${record.status} · ${cassette.envelopes.length} events${pace ? ' · at recorded pace' : ''}\n`);
  await renderLog(cassette.envelopes, format, io, { pace, sessionId: record.sessionId, threadId: record.threadId });
}

/**
 * Renders recorded envelopes through the normal consumers, as a live session would: their AG-UI
 * translation to the terminal renderer (timings from the recorded clock) or as JSON lines, or
 * the envelopes themselves as JSON lines. With `pace`, waits the recorded gap between envelopes
 * (at most {@link MAX_PACE_GAP_MS}); `io.signal` stops early.
 */
export async function renderLog(log: readonly SessionEvent[], format: RenderFormat, io: SessionsIo, opts: { pace?: boolean; sessionId?: string; threadId?: string } = {}): Promise<void> {
  const feed = async (next: (env: SessionEvent) => void): Promise<void> => {
    let prevAt: number | undefined;
    for (const env of log) {
      if (io.signal?.aborted) return;
      if (opts.pace && prevAt !== undefined && env.at > prevAt) await sleep(Math.min(env.at - prevAt, MAX_PACE_GAP_MS), io.signal);
      prevAt = env.at;
      next(env);
    }
  };
  if (format === 'envelopes') {
    await feed((env) => io.out.write(`${JSON.stringify(env)}\n`));
    return;
  }
  const consumer = format === 'agui' ? new JsonlConsumer(io.out) : new TerminalConsumer({ out: io.out, live: false, env: io.env, clock: 'events' });
  const errors = new Subject<ConsumerError>();
  errors.subscribe((e) => io.err.write(`agentrx: consumer '${e.consumerId}' ${e.phase}: ${e.message}\n`));
  const hub = new ConsumerHub([consumer], { handlerTimeoutMs: 10_000, queueLimit: 4 * log.length + 100, stopTimeoutMs: 10_000 }, errors);
  const envelopes = new Subject<SessionEvent>();
  const attachment = hub.attach(envelopes.pipe(withAgUi()), () => opts.sessionId);
  await feed((env) => envelopes.next(env));
  envelopes.complete();
  await attachment.close(stopReasonOf(log));
  errors.complete();
}

/** How the recorded session ended, for the consumers' `stop`. */
function stopReasonOf(log: readonly SessionEvent[]): StopReason {
  for (let i = log.length - 1; i >= 0; i--) {
    const env = log[i]!;
    if (isAgentRxEvent(env, 'agentrx.run_error')) return stopReasonForCode(env.raw.code);
    if (isAgentRxEvent(env, 'agentrx.run_finished')) return 'completed';
  }
  return 'completed';
}

function resolveFrom(cwd: string, file: string): string {
  return isAbsolute(file) ? file : resolve(cwd, file);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((done) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      done();
    }
    signal?.addEventListener('abort', finish, { once: true });
  });
}
