/**
 * What the memory store keeps, in a fresh process:
 * `node --expose-gc store-heap-child.js <baseUrl> <n> <batch> <warmup> <store section as JSON>`.
 * One agentrx instance (the peers bench's runner: Local provider, the two tools) with that `store`
 * section runs `warmup` sequential sessions, then `n` sessions in batches of `batch` concurrent
 * ones; heap after a full GC (on a fresh macrotask) once created, after the warm-up, after the
 * `n` sessions, and after `sessionStore.prune({ maxSessions: 0 })` (what is left once the store
 * holds nothing). Every session's outcome is checked. Prints one JSON line.
 */
import { checkOutcome, cpuMs, settledMemAfterGc } from './shared.js';
import { createBenchAgentRx, runBenchSession, type BenchStore } from './runners/agentrx.js';

const [baseUrl, nArg, batchArg, warmArg, storeArg] = process.argv.slice(2) as [string, string, string, string, string];
const n = Number(nArg);
const batch = Math.max(1, Number(batchArg));
const store = JSON.parse(storeArg) as BenchStore;
const bench = await createBenchAgentRx(baseUrl, store);
const created = await settledMemAfterGc();
for (let i = 0; i < Number(warmArg); i++) checkOutcome('agentrx', await runBenchSession(bench));
const warm = await settledMemAfterGc();
const c0 = process.cpuUsage();
for (let done = 0; done < n; done += batch) {
  const outcomes = await Promise.all(Array.from({ length: Math.min(batch, n - done) }, () => runBenchSession(bench)));
  for (const o of outcomes) checkOutcome('agentrx', o);
}
const cpu = cpuMs(c0);
const done = await settledMemAfterGc();
const kept = (await bench.rx.sessionStore.list()).length;
const pruned = (await bench.rx.sessionStore.prune?.({ maxSessions: 0 }))?.length ?? 0;
const empty = await settledMemAfterGc();
process.stdout.write(JSON.stringify({ store, n, created, warm, done, empty, kept, pruned, cpuPerSessionMs: cpu / n }) + '\n');
