/**
 * What sessions leave behind, in a fresh process:
 * `node --expose-gc heap-child.js <agentrx|raw> <baseUrl> <n> <warmup> <outDir>`.
 * Heap snapshots (`v8.writeHeapSnapshot`, each after a full GC) are written to `outDir`:
 * `0-loaded` (modules imported), `1-created` (the AgentRx instance built: what an idle instance
 * holds), `2-warm` (after `warmup` sequential sessions), `3-done` (after `n` concurrent sessions
 * ended) and, for agentrx, `4-pruned` (after `sessionStore.prune({ maxSessions: 0 })`: what is
 * left once the store's by-design contents are gone), and with BENCH_HEAP_INFLIGHT_MS also
 * `2b-inflight` while the sessions run. Every session's outcome is checked (final
 * text and tool results). Prints one JSON line: heap/RSS after GC at each step and the files.
 */
import { writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';
import { checkOutcome, settledMemAfterGc } from './shared.js';
import type { RunSession, SessionOutcome, Setup } from './runners/types.js';

const [runnerName, baseUrl, nArg, warmArg, outDir] = process.argv.slice(2) as [string, string, string, string, string];
const n = Number(nArg);
const warmup = Number(warmArg);
const steps: { step: string; heapUsed: number; rss: number; file?: string }[] = [];
const snap = async (step: string, write = true): Promise<void> => {
  const m = await settledMemAfterGc();
  const file = write ? writeHeapSnapshot(join(outDir, `${runnerName}-${step}.heapsnapshot`)) : undefined;
  // The snapshot itself allocates; the figure is taken before it.
  steps.push({ step, heapUsed: m.heapUsed, rss: m.rss, ...(file ? { file } : {}) });
};
const check = (o: SessionOutcome): void => checkOutcome(runnerName, o);

let session: RunSession;
let prune: (() => Promise<number>) | undefined;
if (runnerName === 'agentrx') {
  const { createBenchAgentRx, runBenchSession } = await import('./runners/agentrx.js');
  await snap('0-loaded');
  const bench = await createBenchAgentRx(baseUrl);
  await snap('1-created');
  session = () => runBenchSession(bench);
  prune = async () => (await bench.rx.sessionStore.prune!({ maxSessions: 0 })).length;
} else {
  const mod = (await import(`./runners/${runnerName}.js`)) as { setup: Setup };
  await snap('0-loaded');
  session = await mod.setup(baseUrl);
  await snap('1-created');
}
for (let i = 0; i < warmup; i++) check(await session());
await snap('2-warm');
let inFlight = n;
const running = Promise.all(Array.from({ length: n }, () => session().then((o) => (inFlight--, o))));
// BENCH_HEAP_INFLIGHT_MS: also a snapshot that long after the sessions started, while they run
// (with the paced router they last long enough): their live state, not what they leave behind.
const inflightMs = Number(process.env['BENCH_HEAP_INFLIGHT_MS'] ?? 0);
let inFlightAtSnapshot: number | undefined;
if (inflightMs > 0) {
  await Promise.race([running, new Promise((resolve) => setTimeout(resolve, inflightMs))]);
  inFlightAtSnapshot = inFlight;
  await snap('2b-inflight');
}
const outcomes = await running;
for (const o of outcomes) check(o);
await snap('3-done');
let pruned: number | undefined;
if (prune) {
  pruned = await prune();
  await snap('4-pruned');
}
process.stdout.write(JSON.stringify({ runner: runnerName, n, warmup, pruned, inFlightAtSnapshot, steps }) + '\n');
