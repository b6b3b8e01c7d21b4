/**
 * 1,000 concurrent Local sessions in one fresh process (the same 5-turn streaming tool
 * conversation as the peers bench, JSON-lines consumer to a null stream), against the emulators
 * and router in this parent process. Targets: event-loop delay p99 < 50 ms, RSS per session
 * (peak RSS during the run − RSS after warm-up, ÷ sessions) < 100 KB. The raw fetch loop of the
 * peers bench runs the same load in its own fresh process, side by side, as the floor.
 */
import { loadavg } from 'node:os';
import { environmentRows, report, type BenchResult } from './harness.js';
import { routerOptionsFromEnv, runChild, startConversationRouter } from './peers/shared.js';

const N = Number(process.env['BENCH_CONC_N'] ?? 1000);
const WARMUP = 30;

interface Mem {
  rss: number;
  heapUsed: number;
}

type Live = { live: { heapUsed: number; rss: number; inFlight: number; atMs: number }; memWarm: Mem };
type Out = { wall: number; startMs: number; cpu: number; eldP99: number; eldMax: number; peakRss: number; peakHeapUsed: number; memWarm: Mem; memEnd: Mem };

export async function concurrencyBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const router = await startConversationRouter(4 * (N + WARMUP) + 10, undefined, routerOptionsFromEnv());
  let r: Out;
  let raw: Out;
  let live: Live | string;
  let rawLive: Live | string;
  // A failed live-state child is reported in its row; the measurements above still stand.
  const orFailure = (p: Promise<Live>): Promise<Live | string> =>
    p.catch((e: unknown) => `FAILED: ${(e as Error).message.split('\n').slice(0, 3).join(' ').slice(0, 400)}`);
  try {
    r = await runChild(
      './child.js',
      ['agentrx', router.baseUrl, 'conc', String(N), String(WARMUP)],
      process.env['BENCH_PROF'] ? ['--cpu-prof', '--cpu-prof-dir=' + process.env['BENCH_PROF']] : [],
    );
    raw = await runChild('./child.js', ['raw', router.baseUrl, 'conc', String(N), String(WARMUP)]);
    // Separate children: the forced GCs would disturb the event-loop measurement above.
    live = await orFailure(runChild('./child.js', ['agentrx', router.baseUrl, 'live', String(N), String(WARMUP)]));
    rawLive = await orFailure(runChild('./child.js', ['raw', router.baseUrl, 'live', String(N), String(WARMUP)]));
  } finally {
    await router.close();
  }
  const perSession = (r.peakRss - r.memWarm.rss) / N;
  const rawPerSession = (raw.peakRss - raw.memWarm.rss) / N;
  const kb = (b: number): string => `${(b / 1024).toFixed(1)} KB`;
  const mb = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MB`;
  return report(`concurrency: ${N.toLocaleString('en-US')} concurrent Local sessions`, [
    ...environmentRows('concurrency', load0),
    [
      'sessions',
      `${N} concurrent sessions of the 5-turn tool conversation (${N * 5} streamed completions) started in one tick, after ${WARMUP} sequential warm-up sessions; agentrx: one AgentRx, rx.run() each; raw: the peers bench's fetch loop`,
    ],
    ['wall / CPU for all: agentrx vs raw', `${r.wall.toFixed(0)} ms / ${r.cpu.toFixed(0)} ms vs ${raw.wall.toFixed(0)} ms / ${raw.cpu.toFixed(0)} ms`],
    ['synchronous start of all N sessions (one loop turn): agentrx vs raw', `${r.startMs.toFixed(0)} ms vs ${raw.startMs.toFixed(0)} ms`],
    [
      'event-loop delay p99 (max): agentrx vs raw',
      `${r.eldP99.toFixed(1)} ms (${r.eldMax.toFixed(1)} ms) vs ${raw.eldP99.toFixed(1)} ms (${raw.eldMax.toFixed(1)} ms)`,
    ],
    ['RSS after warm-up (GC) → peak → after run (GC): agentrx', `${mb(r.memWarm.rss)} → ${mb(r.peakRss)} → ${mb(r.memEnd.rss)}`],
    ['RSS after warm-up (GC) → peak → after run (GC): raw', `${mb(raw.memWarm.rss)} → ${mb(raw.peakRss)} → ${mb(raw.memEnd.rss)}`],
    ['RSS per session ((peak − warm) ÷ N): agentrx vs raw', `${kb(perSession)} vs ${kb(rawPerSession)}`],
    // Heap in use at its sampled peak (garbage not yet collected included), next to the live heap
    // after GC: how much of the peak RSS is garbage awaiting collection rather than session state.
    ['peak heap used during the run (sampled, garbage included): agentrx vs raw', `${mb(r.peakHeapUsed)} vs ${mb(raw.peakHeapUsed)}`],
    [
      'heap after GC, after warm-up → after run: agentrx vs raw',
      `${mb(r.memWarm.heapUsed)} → ${mb(r.memEnd.heapUsed)} vs ${mb(raw.memWarm.heapUsed)} → ${mb(raw.memEnd.heapUsed)}`,
    ],
    [
      'live state per session: largest heap after a forced GC (every second) while all run, minus after warm-up, ÷ N: agentrx vs raw',
      typeof live === 'string' || typeof rawLive === 'string'
        ? `agentrx: ${typeof live === 'string' ? live : 'ok'}; raw: ${typeof rawLive === 'string' ? rawLive : 'ok'}`
        : `${kb((live.live.heapUsed - live.memWarm.heapUsed) / N)} vs ${kb((rawLive.live.heapUsed - rawLive.memWarm.heapUsed) / N)} (at ${live.live.atMs.toFixed(0)} ms with ${live.live.inFlight} in flight vs ${rawLive.live.atMs.toFixed(0)} ms with ${rawLive.live.inFlight}; RSS then ${kb((live.live.rss - live.memWarm.rss) / N)} vs ${kb((rawLive.live.rss - rawLive.memWarm.rss) / N)} per session)`,
    ],
    ['target event-loop delay p99 < 50 ms (agentrx)', r.eldP99 < 50 ? 'met' : 'MISSED'],
    ['target RSS per session < 100 KB (agentrx), peak RSS (uncollected garbage included)', perSession < 100 * 1024 ? 'met' : 'MISSED'],
    [
      'target RSS per session < 100 KB (agentrx), RSS right after a full GC with the sessions in flight',
      typeof live === 'string' ? 'not measured (the live child failed)' : (live.live.rss - live.memWarm.rss) / N < 100 * 1024 ? 'met' : 'MISSED',
    ],
  ]);
}
