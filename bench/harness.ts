/** Shared helpers for the benchmarks: statistics, the environment rows and a markdown section per result. */
import { cpus, loadavg, totalmem } from 'node:os';

export interface BenchResult {
  readonly title: string;
  readonly rows: readonly (readonly [string, string])[];
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

export function report(title: string, rows: readonly (readonly [string, string])[]): BenchResult {
  return { title, rows };
}

export function toMarkdown(r: BenchResult): string {
  return [`### ${r.title}`, '', '| measure | value |', '|---|---|', ...r.rows.map(([k, v]) => `| ${k} | ${v} |`), ''].join('\n');
}

/**
 * The rows every bench table starts with: the machine, the Node version, the load average when the
 * bench started and ended (the machine is shared), and the command that reproduces it (the
 * BENCH_* variables that were set, then `node .bench-build/bench/run.js <bench>`).
 */
export function environmentRows(bench: string, loadAtStart: readonly number[], env: NodeJS.ProcessEnv = process.env): [string, string][] {
  const vars = Object.keys(env)
    .filter((k) => k.startsWith('BENCH_'))
    .sort()
    .map((k) => `${k}=${env[k]}`);
  const la = (l: readonly number[]): string => l.map((x) => x.toFixed(2)).join(' / ');
  return [
    [
      'machine',
      `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown cpu'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${process.platform}; Node ${process.version}`,
    ],
    ['load average (1 / 5 / 15 min) at start → end', `${la(loadAtStart)} → ${la(loadavg())}`],
    [
      'command',
      `\`${[...vars, 'npm run bench --', bench].join(' ')}\` (after \`tsc -p tsconfig.bench.json\`: \`${[...vars, 'node .bench-build/bench/run.js', bench].join(' ')}\`)`,
    ],
  ];
}
