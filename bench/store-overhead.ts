/**
 * The file store's own cost per session, without the rest of the Session: records one real peers
 * session (Local provider, the bench's 5-turn conversation, tools declared idempotent) in a file
 * store, turns its journal back into the store calls the Session made (appends between records,
 * `load` + `save` per checkpoint, ledger transitions, the final synced save, the release), and
 * replays them for `n` fresh sessions, interleaving the memory store and the file store, a few
 * rounds. Prints CPU ms per session (process-wide: fsyncs on the threadpool included), user and
 * system time of the main thread and the rest, and how many fsync/fdatasync calls a session made.
 *
 * `node .bench-build/bench/store-overhead.js [n=300] [rounds=3] [engines=memory,file]` (after `tsc -p tsconfig.bench.json`);
 * the engines are `memory`, `file` and `file-noio` (the file engine with no-op writes and syncs).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionEvent } from '../src/core/events/session-event.js';
import { FileSessionStore } from '../src/core/store/file/file-session-store.js';
import { nodeJournalIo, type JournalIo } from '../src/core/store/file/journal-io.js';
import { JournalFold, parseLine } from '../src/core/store/file/journal-lines.js';
import { MemorySessionStore } from '../src/core/store/memory/memory-session-store.js';
import type { SessionRecord, SessionStore } from '../src/core/store/session-store.js';
import type { LedgerEntry, LedgerState } from '../src/core/tools/tool-ledger.js';
import { createBenchAgentRx, runBenchSession } from './peers/runners/agentrx.js';
import { startConversationRouter } from './peers/shared.js';

type Step =
  | { readonly op: 'append'; readonly envelopes: SessionEvent[] }
  | { readonly op: 'save'; readonly record: SessionRecord; readonly sync: boolean }
  | { readonly op: 'transition'; readonly expected: LedgerState | undefined; readonly entry: LedgerEntry };

/** The store folders of the recording and the rounds, removed once every round is done. */
const made: string[] = [];

/** The store calls one session made, read back from its journal (with `id` as the session id placeholder). */
async function recordSession(): Promise<{ text: string; id: string }> {
  const router = await startConversationRouter(10);
  const dir = mkdtempSync(join(tmpdir(), 'agentrx-store-overhead-rec-'));
  try {
    const bench = await createBenchAgentRx(router.baseUrl, { type: 'file', dir }, { idempotent: true });
    const { rx } = bench;
    await runBenchSession(bench);
    await rx.stop();
    const folder = readdirSync(dir).find((n) => !n.startsWith('%'))!; // not the store's own folders (%owners, %threads)
    return { text: readFileSync(join(dir, folder, 'journal.jsonl'), 'utf8'), id: decodeURIComponent(folder) };
  } finally {
    await router.close();
    made.push(dir);
  }
}

/** The steps of one session whose id is `sessionId`, fresh objects (as a real session makes them). */
function stepsOf(journal: { text: string; id: string }, sessionId: string): Step[] {
  const lines = journal.text
    .split(journal.id)
    .join(sessionId)
    .split('\n')
    .filter((l) => l !== '');
  const fold = new JournalFold();
  const steps: Step[] = [];
  let batch: SessionEvent[] = [];
  const endBatch = (): void => {
    if (batch.length > 0) steps.push({ op: 'append', envelopes: batch });
    batch = [];
  };
  for (const text of lines.slice(1)) {
    const line = parseLine(text);
    if (typeof line === 'string') throw new Error(line);
    if ('e' in line) {
      batch.push(line.e);
      continue;
    }
    endBatch();
    if ('l' in line) {
      steps.push({ op: 'transition', expected: fold.entry(line.l.toolUseId)?.state, entry: line.l });
      fold.apply(line);
    } else {
      fold.apply(line);
      steps.push({ op: 'save', record: fold.record!, sync: false });
    }
  }
  endBatch();
  let last = steps.length - 1;
  while (steps[last]!.op !== 'save') last--;
  steps[last] = { ...(steps[last] as Step & { op: 'save' }), sync: true };
  return steps;
}

async function replay(store: SessionStore, sessionId: string, steps: readonly Step[]): Promise<void> {
  const lease = await store.acquire(sessionId);
  await store.lastSeq(sessionId);
  for (const s of steps) {
    if (s.op === 'append') await store.append(sessionId, s.envelopes);
    else if (s.op === 'transition') await store.transition(sessionId, s.expected, s.entry, { sync: false });
    else {
      if (s.record.status !== 'running' || s.record.transcript) await store.load(sessionId); // a checkpoint reads the ledger first
      await store.save(s.record, { sync: s.sync });
    }
  }
  await lease.release();
}

/** CPU ms (user, system) per thread group since `from`: the main thread and the others. */
function threadCpu(): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const t of readdirSync('/proc/self/task')) {
    const s = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    out.set(t, [Number(f[11]) * 10, Number(f[12]) * 10]);
  }
  return out;
}

function split(before: Map<string, [number, number]>, after: Map<string, [number, number]>, n: number): string {
  const sum = { mainUser: 0, mainSys: 0, otherUser: 0, otherSys: 0 };
  for (const [t, [u, s]] of after) {
    const [u0, s0] = before.get(t) ?? [0, 0];
    if (t === String(process.pid)) {
      sum.mainUser += u - u0;
      sum.mainSys += s - s0;
    } else {
      sum.otherUser += u - u0;
      sum.otherSys += s - s0;
    }
  }
  const f = (x: number): string => (x / n).toFixed(2);
  return `main ${f(sum.mainUser)} usr + ${f(sum.mainSys)} sys, other threads ${f(sum.otherUser)} usr + ${f(sum.otherSys)} sys`;
}

const n = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 3);
const engines = (process.argv[4] ?? 'memory,file').split(',') as ('memory' | 'file' | 'file-noio')[];
const journal = await recordSession();
let syncs = 0;
const io: JournalIo = {
  writeSync: nodeJournalIo.writeSync,
  fdatasync: (fd) => {
    syncs++;
    return nodeJournalIo.fdatasync(fd);
  },
};
/**
 * `file-noio`: the file engine with its journal writes and its syncs made no-ops (folders, locks
 * and journals are still created and opened): what the engine costs before any write reaches the
 * kernel — serialization, bookkeeping and garbage.
 */
const noIo: JournalIo = {
  writeSync: (_fd, _buffer, _offset, length) => length,
  fdatasync: () => (syncs++, Promise.resolve()),
  fsync: () => Promise.resolve(),
};
process.stdout.write(`one session: ${stepsOf(journal, 'x').length} store calls, journal ${journal.text.length} bytes\n`);
for (let round = 0; round < rounds; round++) {
  for (const engine of engines) {
    const dir = mkdtempSync(join(tmpdir(), 'agentrx-store-overhead-'));
    const store: SessionStore =
      engine === 'memory' ? new MemorySessionStore(0, 1_000) : new FileSessionStore(dir, () => undefined, { io: engine === 'file' ? io : noIo });
    const sessions = Array.from({ length: n + 20 }, (_, i) => {
      const id = `local-bench-${round}-${i}-${engine}`;
      return { id, steps: stepsOf(journal, id) };
    });
    for (const s of sessions.slice(0, 20)) await replay(store, s.id, s.steps);
    syncs = 0;
    const t0 = threadCpu();
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    for (const s of sessions.slice(20)) await replay(store, s.id, s.steps);
    const cpu = process.cpuUsage(c0);
    const wall = performance.now() - w0;
    const t1 = threadCpu();
    process.stdout.write(
      `round ${round + 1} ${engine.padEnd(9)}: CPU ${((cpu.user + cpu.system) / 1000 / n).toFixed(3)} ms/session, wall ${(wall / n).toFixed(3)} ms/session (${split(t0, t1, n)})${engine !== 'memory' ? `, fdatasync ${(syncs / n).toFixed(1)}/session` : ''}\n`,
    );
    made.push(dir);
  }
}
// Removed only now: a round's deletions would slow the inode allocations of the rounds after it
// (see `benchStoreDir` in peers/runners/agentrx-file.ts).
for (const dir of made) rmSync(dir, { recursive: true, force: true });
