/**
 * What the memory store holds once sessions are done (issue 28): the peers bench's conversation,
 * BENCH_STORE_HEAP_N sessions (default 1,000, in batches of 50 concurrent) on one agentrx instance
 * per store section, each in a fresh process (`peers/store-heap-child.ts`): heap after GC once
 * the sessions are done, and after the store was pruned to nothing; their difference is what the
 * store keeps. Sections: the default memory store, the memory store keeping every session
 * (`memoryMaxBytes: 0`, the byte bound off) and the one that keeps nothing once a session closed
 * (`memoryKeep: 'none'`).
 */
import { loadavg } from 'node:os';
import { environmentRows, report, type BenchResult } from './harness.js';
import { routerOptionsFromEnv, runChild, startConversationRouter } from './peers/shared.js';

const N = Number(process.env['BENCH_STORE_HEAP_N'] ?? 1_000);
const BATCH = Number(process.env['BENCH_STORE_HEAP_BATCH'] ?? 50);
const WARMUP = Number(process.env['BENCH_STORE_HEAP_WARMUP'] ?? 20);
/** The `store` sections measured, as JSON objects separated by `;`. */
const SECTIONS: readonly string[] = (
  process.env['BENCH_STORE_HEAP_SECTIONS'] ??
  '{"type":"memory"};{"type":"memory","memoryMaxBytes":0,"memoryMaxSessions":0};{"type":"memory","memoryKeep":"none"}'
).split(';');

interface Mem {
  heapUsed: number;
  rss: number;
}
interface Out {
  created: Mem;
  warm: Mem;
  done: Mem;
  empty: Mem;
  kept: number;
  pruned: number;
  cpuPerSessionMs: number;
}

const mb = (b: number): string => `${(b / 2 ** 20).toFixed(2)} MB`;

export async function storeHeapBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const router = await startConversationRouter(SECTIONS.length * (N + WARMUP) + 10, undefined, routerOptionsFromEnv());
  const rows: [string, string][] = [
    ...environmentRows('store-heap', load0),
    [
      'method',
      `one fresh process per store section: ${WARMUP} warm-up sessions, then ${N} sessions of the peers conversation in batches of ${BATCH} concurrent; heap after a full GC (fresh macrotask); then \`sessionStore.prune({ maxSessions: 0 })\` and again`,
    ],
  ];
  try {
    for (const section of SECTIONS) {
      try {
        const o = await runChild<Out>('./store-heap-child.js', [router.baseUrl, String(N), String(BATCH), String(WARMUP), section]);
        rows.push([
          `\`${section}\`: heap after GC: created → warm → ${N} done → store pruned; sessions kept; RSS when done`,
          `${mb(o.created.heapUsed)} → ${mb(o.warm.heapUsed)} → ${mb(o.done.heapUsed)} → ${mb(o.empty.heapUsed)}; ${o.kept}; ${mb(o.done.rss)}`,
        ]);
        rows.push([
          `\`${section}\`: held by the store (done − pruned), per kept session; CPU ms/session`,
          `${mb(o.done.heapUsed - o.empty.heapUsed)}, ${o.kept > 0 ? `${((o.done.heapUsed - o.empty.heapUsed) / o.kept / 1024).toFixed(1)} KB` : '–'}; ${o.cpuPerSessionMs.toFixed(2)}`,
        ]);
      } catch (e) {
        rows.push([`\`${section}\``, `FAILED: ${(e as Error).message.split('\n')[0]!.slice(0, 300)}`]);
      }
    }
  } finally {
    await router.close();
  }
  return report(`memory store: what ${N} finished sessions leave`, rows);
}
