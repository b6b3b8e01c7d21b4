/**
 * Cold start: import + setup of each framework in a fresh process (`peers/coldstart-child.ts`),
 * ROUNDS rounds with the runners interleaved and their order rotated each round; medians. The
 * issue's measure is `agentrx-index` (`import('agentrx')` + `AgentRx.create` with the Local
 * provider); `agentrx` is the peers runner (imports `src/agentrx` directly, defines two tools).
 */
import { loadavg } from 'node:os';
import { environmentRows, median, report, type BenchResult } from './harness.js';
import { runChild } from './peers/shared.js';

const ROUNDS = Number(process.env['BENCH_COLDSTART_ROUNDS'] ?? 5);
const RUNNERS = (process.env['BENCH_COLDSTART_RUNNERS'] ?? 'agentrx-index,agentrx,openai-agents,ai-sdk').split(',');

interface ChildOut {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly cjsModules: number;
}

export async function coldstartBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const wall: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  const mods: Record<string, number> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < RUNNERS.length; k++) {
      const name = RUNNERS[(k + r) % RUNNERS.length]!;
      const out = await runChild<ChildOut>('./coldstart-child.js', [name]);
      (wall[name] ??= []).push(out.wallMs);
      (cpu[name] ??= []).push(out.cpuMs);
      mods[name] = out.cjsModules;
    }
  }
  const fastestPeer = Math.min(...RUNNERS.filter((n) => !n.startsWith('agentrx')).map((n) => median(wall[n] ?? [Infinity])));
  const arx = median(wall['agentrx-index'] ?? [NaN]);
  const rows: [string, string][] = [
    ...environmentRows('coldstart', load0),
    [
      'method',
      `${ROUNDS} rounds, one fresh process per measurement, runners interleaved (order rotated); wall from the child's first line to the end of setup`,
    ],
  ];
  for (const name of RUNNERS) {
    const w = wall[name]!;
    rows.push([
      `${name}: wall / CPU ms (median; wall min–max); CommonJS modules`,
      `${median(w).toFixed(0)} / ${median(cpu[name]!).toFixed(0)} (${Math.min(...w).toFixed(0)}–${Math.max(...w).toFixed(0)}); ${mods[name]}`,
    ]);
  }
  rows.push(['target agentrx-index ≤ 150 ms', arx <= 150 ? 'met' : 'MISSED']);
  rows.push([
    `target agentrx-index ≤ 0.5× the fastest peer (${fastestPeer.toFixed(0)} ms)`,
    `${(arx / fastestPeer).toFixed(2)}× ${arx <= 0.5 * fastestPeer ? 'met' : 'MISSED'}`,
  ]);
  return report('cold start: import + setup', rows);
}
