/**
 * What finished sessions leave behind (issue 17, part 3): the raw fetch loop and agentrx each run
 * the peers conversation in a fresh process (`peers/heap-child.ts`): warm-up, then N concurrent
 * sessions, with heap snapshots after a full GC at each step; agentrx's store is then pruned
 * (`sessionStore.prune({ maxSessions: 0 })`) and snapshotted again. The snapshots are diffed here
 * by node id (same process): what the N sessions added and still hold, and what is left once the
 * memory store's contents (kept by design) are gone. Target: heap after GC once the sessions are
 * done ≤ raw + 5 MB.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { environmentRows, report, type BenchResult } from './harness.js';
import { HeapSnapshot, newNodes } from './peers/heap-snapshot.js';
import { routerOptionsFromEnv, runChild, startConversationRouter } from './peers/shared.js';

const N = Number(process.env['BENCH_RETAINED_N'] ?? 200);
const WARMUP = Number(process.env['BENCH_RETAINED_WARMUP'] ?? 30);
/** How sessions end in the hard-path rows (`peers/paths-child.ts`); empty: none. */
const PATHS = (process.env['BENCH_RETAINED_PATHS'] ?? 'ok,live,error,timeout,cancel,tool').split(',').filter(Boolean);
/** Keep the snapshot files (in the printed folder) instead of deleting them. */
const KEEP = process.env['BENCH_RETAINED_KEEP'] === '1';

interface Step {
  step: string;
  heapUsed: number;
  rss: number;
  file?: string;
}
interface HeapChildOut {
  runner: string;
  pruned?: number;
  inFlightAtSnapshot?: number;
  steps: Step[];
}

const mb = (b: number): string => `${(b / 2 ** 20).toFixed(2)} MB`;
const kb = (b: number): string => `${(b / 1024).toFixed(1)} KB`;

/** The `top` largest groups of nodes that are in `after` and not in `before`, as one cell. */
function diffCell(before: string, after: string, top = 8): string {
  const { groups } = newNodes(HeapSnapshot.read(before), HeapSnapshot.read(after));
  const total = groups.reduce((s, g) => s + g.selfSize, 0);
  return (
    `${mb(total)} in ${groups.reduce((s, g) => s + g.count, 0).toLocaleString('en-US')} nodes: ` +
    groups
      .slice(0, top)
      .map((g) => `${g.key.replace(/\|/g, '/')} ×${g.count} ${kb(g.selfSize)}`)
      .join('; ')
  );
}

export async function retainedBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'agentrx-retained-'));
  const router = await startConversationRouter(2 * (N + WARMUP) + 10, undefined, routerOptionsFromEnv());
  let raw: HeapChildOut;
  let arx: HeapChildOut;
  const idle = await runChild<{ n: number; stoppedPerInstance: number; idlePerInstance: number }>('./idle-child.js', [String(N)]);
  const paths: [string, string][] = [];
  for (const kind of PATHS) {
    try {
      const r = await runChild<{ ended: Record<string, number>; pruned: number; tracked: number; leftPerSession: number }>('./paths-child.js', [
        kind,
        String(N),
      ]);
      paths.push([
        `agentrx: ${N} sessions ending '${kind}' (${JSON.stringify(r.ended)}), store pruned: heap left per session; sessions still tracked`,
        `${r.leftPerSession.toFixed(0)} B; ${r.tracked}`,
      ]);
    } catch (e) {
      paths.push([`agentrx: ${N} sessions ending '${kind}'`, `FAILED: ${(e as Error).message.split('\n').slice(0, 4).join(' ').slice(0, 300)}`]);
    }
  }
  try {
    raw = await runChild<HeapChildOut>('./heap-child.js', ['raw', router.baseUrl, String(N), String(WARMUP), dir]);
    arx = await runChild<HeapChildOut>('./heap-child.js', ['agentrx', router.baseUrl, String(N), String(WARMUP), dir]);
  } finally {
    await router.close();
  }
  try {
    const at = (o: HeapChildOut, step: string): Step => o.steps.find((s) => s.step === step)!;
    const steps = (o: HeapChildOut): string => o.steps.map((s) => `${s.step} ${mb(s.heapUsed)}`).join(' → ');
    const extra = at(arx, '3-done').heapUsed - at(raw, '3-done').heapUsed;
    const storePerSession = (at(arx, '3-done').heapUsed - at(arx, '4-pruned').heapUsed) / (arx.pruned ?? 1);
    const rows: [string, string][] = [
      ...environmentRows('retained', load0),
      [
        'method',
        `one fresh process per runner: ${WARMUP} sequential warm-up sessions, then ${N} concurrent; heap after a full GC (on a fresh macrotask) and a heap snapshot at each step; agentrx: then \`sessionStore.prune({ maxSessions: 0 })\` (memory store, defaults); every session checked (text from the delivered deltas, every tool result)`,
      ],
      ['raw: heap after GC', steps(raw)],
      ['agentrx: heap after GC', steps(arx)],
      [`agentrx: what the ${N} sessions added and still hold (2-warm → 3-done)`, diffCell(at(arx, '2-warm').file!, at(arx, '3-done').file!)],
      [
        `agentrx: left once the store was pruned (${arx.pruned} sessions deleted; 1-created → 4-pruned)`,
        diffCell(at(arx, '1-created').file!, at(arx, '4-pruned').file!),
      ],
      [`raw: what the ${N} sessions added and still hold (2-warm → 3-done)`, diffCell(at(raw, '2-warm').file!, at(raw, '3-done').file!)],
      ['agentrx: the memory store per kept session (3-done − 4-pruned, ÷ sessions deleted)', kb(storePerSession)],
      ['agentrx: an idle instance (0-loaded → 1-created)', diffCell(at(arx, '0-loaded').file!, at(arx, '1-created').file!, 6)],
      [
        `agentrx: heap per instance, ${idle.n} instances (\`peers/idle-child.ts\`): created and stopped / created and kept idle`,
        `${kb(idle.stoppedPerInstance)} / ${kb(idle.idlePerInstance)}`,
      ],
      ...paths,
      ['modules loaded (heap after GC once imported): agentrx vs raw', `${mb(at(arx, '0-loaded').heapUsed)} vs ${mb(at(raw, '0-loaded').heapUsed)}`],
      [
        `target heap after GC once ${N} concurrent sessions are done ≤ raw + 5 MB`,
        `agentrx ${mb(at(arx, '3-done').heapUsed)}, raw ${mb(at(raw, '3-done').heapUsed)}: raw + ${mb(extra)} ${extra <= 5 * 2 ** 20 ? 'met' : 'MISSED'}`,
      ],
      [
        'the same once the store was pruned',
        `raw + ${mb(at(arx, '4-pruned').heapUsed - at(raw, '3-done').heapUsed)} ${at(arx, '4-pruned').heapUsed - at(raw, '3-done').heapUsed <= 5 * 2 ** 20 ? 'met' : 'MISSED'}`,
      ],
    ];
    const inflight = arx.steps.find((s) => s.step === '2b-inflight');
    if (inflight?.file) {
      rows.push([
        `agentrx: live state of ${arx.inFlightAtSnapshot} sessions in flight (2-warm → 2b-inflight, BENCH_HEAP_INFLIGHT_MS)`,
        diffCell(at(arx, '2-warm').file!, inflight.file, 12),
      ]);
      rows.push([`raw: live state of ${raw.inFlightAtSnapshot} sessions in flight`, diffCell(at(raw, '2-warm').file!, at(raw, '2b-inflight').file!, 12)]);
    }
    if (KEEP) rows.push(['snapshots kept in', dir]);
    return report(`retained memory: ${N} concurrent sessions done`, rows);
  } finally {
    if (!KEEP) rmSync(dir, { recursive: true, force: true });
  }
}
