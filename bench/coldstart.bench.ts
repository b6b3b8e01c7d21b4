/**
 * Cold start (issue 28): each measurement in a fresh process, ROUNDS rounds with the measurements
 * interleaved and their order rotated each round; medians. Measured:
 * - `node`: `node -e 0`, the floor every row pays;
 * - `agentrx-import`: `import('agentrx')`; `agentrx-index`: that import + `AgentRx.create` with
 *   the Local provider (the issue's measure); `agentrx`: the peers runner (two DTO tools);
 * - `agentrx --version`, `agentrx --help`: the CLI's bin;
 * - the peers the peers bench installs (`openai-agents`, `ai-sdk`): import + setup of its runner.
 * The import rows run `peers/coldstart-child.ts`, which reports its own wall and CPU from its
 * first line; every row also has the process's wall from spawn to exit, as `time` shows it.
 * The agentrx entry and CLI are the built package (`dist/`, bundled by `npm run build`, as
 * `import('agentrx')` and the `agentrx` bin resolve it: what users run), or with
 * `BENCH_COLDSTART_ENTRY=src` the bench build of the sources (`.bench-build/src`, one module per
 * source file).
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { environmentRows, median, report, type BenchResult } from './harness.js';

const ROUNDS = Number(process.env['BENCH_COLDSTART_ROUNDS'] ?? 5);
const DIST = process.env['BENCH_COLDSTART_ENTRY'] !== 'src';
const CLI = fileURLToPath(new URL(DIST ? '../../dist/cli/main.js' : '../src/cli/main.js', import.meta.url));
const CHILD = fileURLToPath(new URL('./peers/coldstart-child.js', import.meta.url));
const IMPORTS = (process.env['BENCH_COLDSTART_RUNNERS'] ?? 'agentrx-import,agentrx-index,agentrx,openai-agents,ai-sdk').split(',');
/** Peers: the runners that are not agentrx. */
const isPeer = (name: string): boolean => !name.startsWith('agentrx');

/** One measurement: the node arguments, and whether the process prints the child's JSON line. */
interface Measure {
  readonly name: string;
  readonly args: readonly string[];
  readonly reports: boolean;
}

const MEASURES: readonly Measure[] = [
  { name: 'node', args: ['-e', '0'], reports: false },
  ...IMPORTS.map((name) => ({ name, args: [CHILD, name], reports: true })),
  { name: 'agentrx --version', args: [CLI, '--version'], reports: false },
  { name: 'agentrx --help', args: [CLI, '--help'], reports: false },
];

interface Run {
  /** Spawn to exit, ms. */
  readonly processMs: number;
  /** The child's own figures (import rows). */
  readonly wallMs?: number;
  readonly cpuMs?: number;
}

/** Runs `node args…` once; rejects with its stderr when it fails. */
function timed(m: Measure): Promise<Run> {
  return new Promise<Run>((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, m.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const processMs = performance.now() - t0;
      if (code !== 0) return reject(new Error(err.trim().split('\n').slice(0, 3).join(' ').slice(0, 300) || `exited with ${code}`));
      if (!m.reports) return resolve({ processMs });
      try {
        const r = JSON.parse(out.trim().split('\n').at(-1) ?? '') as { wallMs: number; cpuMs: number };
        resolve({ processMs, wallMs: r.wallMs, cpuMs: r.cpuMs });
      } catch {
        reject(new Error(`no JSON result on stdout: ${out.slice(-300)}`));
      }
    });
  });
}

/** What a failed measurement's row says: a peer that is not installed says so. */
const failure = (name: string, message: string): string =>
  isPeer(name) && /ERR_MODULE_NOT_FOUND|Cannot find (package|module)/.test(message)
    ? `not installed (the peers bench's devDependencies: \`npm install\`): ${message.slice(0, 160)}`
    : `FAILED: ${message}`;

const ms = (xs: readonly number[]): string => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;

export async function coldstartBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const runs = new Map<string, Run[]>(MEASURES.map((m) => [m.name, []]));
  const failed = new Map<string, string>();
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < MEASURES.length; k++) {
      const m = MEASURES[(k + r) % MEASURES.length]!;
      if (failed.has(m.name)) continue;
      try {
        runs.get(m.name)!.push(await timed(m));
      } catch (e) {
        failed.set(m.name, (e as Error).message);
      }
    }
  }
  let built = '';
  try {
    built = statSync(CLI).mtime.toISOString();
  } catch {
    built = 'missing (run `npm run build`)';
  }
  const rows: [string, string][] = [
    ...environmentRows('coldstart', load0),
    [
      'method',
      `${ROUNDS} rounds, one fresh process per measurement, measurements interleaved (order rotated); medians (min–max). "process": spawn to exit, as \`time\` shows it; "in-process": from the child's first line to the end of import (+ setup), and its CPU`,
    ],
    [
      'agentrx entry and CLI',
      `${DIST ? 'the built package (dist/, via package.json exports)' : 'the bench build of the sources (.bench-build/src)'}; CLI ${CLI} built ${built}`,
    ],
  ];
  const medianOf = (name: string, pick: (r: Run) => number | undefined): number => {
    const xs = (runs.get(name) ?? []).flatMap((r) => pick(r) ?? []);
    return xs.length > 0 ? median(xs) : NaN;
  };
  for (const m of MEASURES) {
    const rs = runs.get(m.name)!;
    if (failed.has(m.name) && rs.length === 0) {
      rows.push([m.name, failure(m.name, failed.get(m.name)!)]);
      continue;
    }
    const process = ms(rs.map((r) => r.processMs));
    rows.push(
      m.reports
        ? [`${m.name}: process ms; in-process wall / CPU ms`, `${process}; ${ms(rs.map((r) => r.wallMs!))} / ${median(rs.map((r) => r.cpuMs!)).toFixed(0)}`]
        : [`${m.name}: process ms`, process],
    );
  }
  const peers = IMPORTS.filter((n) => isPeer(n) && Number.isFinite(medianOf(n, (r) => r.wallMs)));
  const arx = medianOf('agentrx-index', (r) => r.wallMs);
  if (Number.isFinite(arx)) {
    const fastest = peers.length > 0 ? peers.reduce((a, b) => (medianOf(a, (r) => r.wallMs) <= medianOf(b, (r) => r.wallMs) ? a : b)) : undefined;
    const f = fastest === undefined ? NaN : medianOf(fastest, (r) => r.wallMs);
    rows.push([
      `target agentrx-index (import + create, in-process) ≤ the fastest peer's import + setup${fastest ? ` (${fastest}, ${f.toFixed(0)} ms)` : ''} and ≤ 200 ms`,
      `${arx.toFixed(0)} ms: ${fastest ? `${(arx / f).toFixed(2)}× ${arx <= f ? 'met' : 'MISSED'}` : 'no peer measured'} / ${arx <= 200 ? 'met' : 'MISSED'}`,
    ]);
  }
  for (const [name, goal] of [
    ['agentrx --version', 150],
    ['agentrx --help', 250],
  ] as const) {
    const v = medianOf(name, (r) => r.processMs);
    if (Number.isFinite(v)) rows.push([`target ${name} ≤ ${goal} ms (process)`, `${v.toFixed(0)} ms ${v <= goal ? 'met' : 'MISSED'}`]);
  }
  return report('cold start: import, setup and the CLI', rows);
}
