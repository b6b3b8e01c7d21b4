/**
 * Cost per session against peers: the same scripted 5-turn streaming tool conversation (one
 * emulator per turn behind a router, all in this parent process) driven by each runner in its own
 * fresh child process: a raw fetch + SSE loop (the floor), agentrx (Local provider, JSON-lines
 * consumer to a null stream, no terminal consumer; memory store; tools as class-validator DTO
 * classes), agentrx-zod (the same with the tools as zod schemas, as the peers' runners declare
 * theirs, so no class-validator index is loaded), agentrx-zod-keepnone (agentrx-zod keeping no
 * closed session: `store.memoryKeep: 'none'`), agentrx-file (agentrx with the
 * file store), agentrx-file-idempotent (the file store, both tools declared idempotent, so their
 * start is not synced), @openai/agents (chat-completions model) and the Vercel ai SDK 6.x (streamText +
 * @ai-sdk/openai-compatible). Every session is checked: the final text as concatenated from the
 * deltas the runner delivered, and every tool result's output. Besides CPU and wall per session:
 * import + setup of each runner in its own fresh process (median of BENCH_PEERS_COLD rounds,
 * runners interleaved), heap after GC per runner (modules loaded, set up, after the sessions),
 * The sequential sessions run in BENCH_PEERS_ROUNDS rounds (default 3), each runner in a fresh
 * process per round, the runners' order rotated each round; a runner's CPU and wall per session are
 * the median of its rounds' medians, and each ratio is the median of the ratios within a round
 * (runs close in time: a shared machine's load moves a single pass of one runner by ±20%).
 * and with `BENCH_PEERS_PACED=1` (or a number of ms) the router sends one SSE event per socket
 * write, that many ms apart, as a real model streams. Targets (issue 28), for agentrx and for
 * agentrx-zod: ≤ 1.3× the raw
 * loop in CPU per session and ≤ 0.35× the best peer; heap after GC once the concurrent sessions
 * are done ≤ raw + 8 MB; peak RSS ≤ 150 KB per concurrent session; import + setup ≤ 200 ms and
 * ≤ the fastest peer's; the file store ≤ 1.25× the memory store with idempotent tools, ≤ 1.5×
 * without.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { environmentRows, median, percentile, report, type BenchResult } from './harness.js';
import { routerOptionsFromEnv, runChild, startConversationRouter } from './peers/shared.js';

const SEQ = Number(process.env['BENCH_PEERS_SEQ'] ?? 200);
/** Rounds of the sequential sessions (a fresh process per runner and round, order rotated). */
const ROUNDS = Math.max(1, Number(process.env['BENCH_PEERS_ROUNDS'] ?? 3));
const CONC = Number(process.env['BENCH_PEERS_CONC'] ?? 200);
const WARMUP = Number(process.env['BENCH_PEERS_WARMUP'] ?? 30);
const RUNNERS = (
  process.env['BENCH_PEERS_RUNNERS'] ?? 'raw,agentrx,agentrx-zod,agentrx-zod-keepnone,agentrx-file,agentrx-file-idempotent,openai-agents,ai-sdk'
).split(',');
/** Fresh processes per runner for the import + setup column (0: skip it). */
const COLD = Number(process.env['BENCH_PEERS_COLD'] ?? 5);
/**
 * agentrx as users declare tools: DTO classes (`agentrx`, whose module imports class-validator's
 * index) or zod schemas (`agentrx-zod`, as the peers' runners do). Each is held to issue 28's goals.
 */
const FLAVOURS = ['agentrx', 'agentrx-zod'];
/** agentrx runners with another store: compared with agentrx, not as peers. */
const VARIANTS = new Set(['agentrx-file', 'agentrx-file-idempotent']);
/**
 * agentrx runners in another configuration of the memory store: compared with raw only (the
 * ratio rows), neither peers nor held to the goals, which are the default configuration's.
 */
const CONFIGS = new Set(['agentrx-zod-keepnone']);
/** Issue 28's goal per variant: file store ÷ memory store, CPU per session (each sync a durability point the docs name). */
const FILE_GOAL: Readonly<Record<string, number>> = { 'agentrx-file': 1.5, 'agentrx-file-idempotent': 1.25 };

interface Mem {
  rss: number;
  heapUsed: number;
}
interface SeqOut {
  cpu: number[];
  wall: number[];
  split: { userMs: number; systemMs: number };
  memLoaded: Mem;
  memCreated: Mem;
  memWarm: Mem;
  memEnd: Mem;
}
interface ConcOut {
  wall: number;
  cpu: number;
  eldP99: number;
  eldMax: number;
  peakRss: number;
  memLoaded: Mem;
  memCreated: Mem;
  memWarm: Mem;
  memEnd: Mem;
}
interface ColdOut {
  wallMs: number;
  cpuMs: number;
}
interface Row {
  /** The runner module. */
  name: string;
  /** The runner, with `#k` for its k-th pass when BENCH_PEERS_RUNNERS names it more than once. */
  label: string;
  /** 1 for the first pass of this runner, 2 for the second… */
  pass: number;
  /** The sequential rounds' results, merged (every round's sessions; memory of the first round). */
  seq?: SeqOut;
  /** Each round's median CPU and wall per session, in round order. */
  rounds: { cpu: number; wall: number }[];
  conc?: ConcOut;
  cold: ColdOut[];
  error?: string;
}

const mb = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MB`;
const x = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;

export async function peersBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const routerOptions = routerOptionsFromEnv();
  const passes = new Map<string, number>();
  const rows: Row[] = RUNNERS.map((name) => {
    const pass = (passes.get(name) ?? 0) + 1;
    passes.set(name, pass);
    return { name, label: RUNNERS.filter((n) => n === name).length > 1 ? `${name}#${pass}` : name, pass, cold: [], rounds: [] };
  });
  // Import + setup first, each in a fresh process, runners interleaved and their order rotated.
  for (let round = 0; round < COLD; round++) {
    for (let k = 0; k < rows.length; k++) {
      const row = rows[(k + round) % rows.length]!;
      try {
        row.cold.push(await runChild<ColdOut>('./coldstart-child.js', [row.name]));
      } catch (e) {
        process.stderr.write(`  ${row.name} import + setup failed: ${(e as Error).message.split('\n')[0]}\n`);
      }
    }
  }
  const router = await startConversationRouter(RUNNERS.length * ((ROUNDS + 1) * WARMUP + ROUNDS * SEQ + CONC) + 10, undefined, routerOptions);
  // The file-store runners' folders, removed once all runners are done (see `benchStoreDir`).
  const storeRoot = mkdtempSync(join(tmpdir(), 'agentrx-bench-stores-'));
  process.env['BENCH_STORE_ROOT'] = storeRoot;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < rows.length; k++) {
        const row = rows[(k + round) % rows.length]!;
        if (row.error) continue;
        try {
          process.stderr.write(`  ${row.label}: ${SEQ} sequential sessions (round ${round + 1} of ${ROUNDS})…\n`);
          const s = await runChild<SeqOut>('./child.js', [row.name, router.baseUrl, 'seq', String(SEQ), String(WARMUP)]);
          row.rounds.push({ cpu: median(s.cpu), wall: median(s.wall) });
          row.seq = mergeRound(row.seq, s);
        } catch (e) {
          row.error = (e as Error).message.split('\n')[0]!.slice(0, 300);
          process.stderr.write(`  ${row.label} failed: ${row.error}\n`);
        }
      }
    }
    for (const row of rows) {
      const name = row.name;
      if (row.error) continue;
      try {
        process.stderr.write(`  ${name}: ${CONC} concurrent sessions…\n`);
        row.conc = await runChild<ConcOut>('./child.js', [name, router.baseUrl, 'conc', String(CONC), String(WARMUP)]);
      } catch (e) {
        row.error = (e as Error).message.split('\n')[0]!.slice(0, 300);
        process.stderr.write(`  ${name} failed: ${row.error}\n`);
      }
    }
  } finally {
    await router.close();
    delete process.env['BENCH_STORE_ROOT'];
    rmSync(storeRoot, { recursive: true, force: true });
  }
  const out: [string, string][] = [
    ...environmentRows('peers', load0),
    [
      'conversation',
      '5 model turns streamed over SSE, 5 tool calls (one turn with 2 parallel), text in every turn; each session checked: final text from the delivered deltas, all 5 tool results by id and output',
    ],
    [
      'emulator',
      `in the parent process: 5 scripted OpenAI emulators (one per turn) behind a router; every runner talks to the same router URL; ${routerOptions.paceMs ? `**paced**: one SSE event per socket write, ${routerOptions.paceMs} ms apart` : 'unpaced: the SSE bytes piped through as the emulator wrote them'}`,
    ],
    [
      'sessions',
      `${ROUNDS} rounds of ${WARMUP} warm-up and ${SEQ} sequential sessions (a fresh process per runner and round, runners' order rotated); ${CONC} concurrent (another fresh process, after the same warm-up)`,
    ],
    [
      'import + setup',
      COLD > 0
        ? `${COLD} fresh processes per runner (\`peers/coldstart-child.ts\`: import the runner module and run its setup, no request), interleaved, order rotated; wall from the child's first line`
        : 'skipped (BENCH_PEERS_COLD=0)',
    ],
    [
      'heap after GC',
      'forced GC (3×) on a fresh macrotask: after the modules were imported (loaded), after setup (created), after the warm-up, after the sessions',
    ],
  ];
  const ok = rows.filter((r) => r.seq && r.conc);
  // A runner's CPU per session: the median of its rounds' medians.
  const cpuMed = new Map(ok.map((r) => [r, median(r.rounds.map((k) => k.cpu))]));
  /** The median over rounds of `r`'s CPU per session ÷ `base`'s in the same round. */
  const roundRatio = (r: Row, base: Row): number => median(r.rounds.flatMap((k, i) => (base.rounds[i] ? [k.cpu / base.rounds[i]!.cpu] : [])));
  for (const r of rows) {
    if (!r.seq || !r.conc) {
      out.push([`${r.label}`, `SKIPPED: ${r.error ?? 'no result'}`]);
      continue;
    }
    const s = r.seq;
    const c = r.conc;
    const rounds = (f: (k: { cpu: number; wall: number }) => number): string => r.rounds.map((k) => f(k).toFixed(2)).join(', ');
    out.push([
      `${r.label}: CPU ms/session, sequential (median of the rounds' medians [each round] / p99 of all)`,
      `${cpuMed.get(r)!.toFixed(2)} [${rounds((k) => k.cpu)}] / ${percentile(s.cpu, 99).toFixed(2)}`,
    ]);
    out.push([
      `${r.label}: wall ms/session, sequential (median of the rounds' medians [each round] / p99 of all)`,
      `${median(r.rounds.map((k) => k.wall)).toFixed(2)} [${rounds((k) => k.wall)}] / ${percentile(s.wall, 99).toFixed(2)}`,
    ]);
    out.push([
      `${r.label}: CPU ms/session, sequential: user / system (mean)`,
      `${(s.split.userMs / s.cpu.length).toFixed(2)} / ${(s.split.systemMs / s.cpu.length).toFixed(2)}`,
    ]);
    out.push([
      `${r.label}: ${CONC} concurrent: wall / CPU / event-loop delay p99 (max)`,
      `${c.wall.toFixed(0)} ms / ${c.cpu.toFixed(0)} ms / ${c.eldP99.toFixed(1)} ms (${c.eldMax.toFixed(1)} ms)`,
    ]);
    out.push([
      `${r.label}: memory after GC: loaded / after warm-up / after ${SEQ} seq, first round (RSS, heap)`,
      `${mb(s.memLoaded.rss)}, ${mb(s.memLoaded.heapUsed)} / ${mb(s.memWarm.rss)}, ${mb(s.memWarm.heapUsed)} / ${mb(s.memEnd.rss)}, ${mb(s.memEnd.heapUsed)}`,
    ]);
    out.push([`${r.label}: after ${CONC} concurrent: peak RSS / RSS, heap after GC`, `${mb(c.peakRss)} / ${mb(c.memEnd.rss)}, ${mb(c.memEnd.heapUsed)}`]);
    out.push([
      `${r.label}: peak RSS per concurrent session (peak − RSS after warm-up, ÷ ${CONC})`,
      `${((c.peakRss - c.memWarm.rss) / CONC / 1024).toFixed(0)} KB`,
    ]);
    out.push([
      `${r.label}: heap after GC, concurrent process: loaded → created → warm → ${CONC} done`,
      `${mb(c.memLoaded.heapUsed)} → ${mb(c.memCreated.heapUsed)} → ${mb(c.memWarm.heapUsed)} → ${mb(c.memEnd.heapUsed)}`,
    ]);
  }
  // Import + setup: every fresh process of a runner, all passes together.
  for (const name of new Set(RUNNERS)) {
    const cold = rows.filter((r) => r.name === name).flatMap((r) => r.cold);
    if (cold.length === 0) continue;
    const w = cold.map((c) => c.wallMs);
    out.push([
      `${name}: import + setup, wall / CPU ms (median of ${w.length}; wall min–max)`,
      `${median(w).toFixed(0)} / ${median(cold.map((c) => c.cpuMs)).toFixed(0)} (${Math.min(...w).toFixed(0)}–${Math.max(...w).toFixed(0)})`,
    ]);
  }
  // Ratios are read within a pass (runs close in time on a shared machine): the k-th pass of a
  // runner against the k-th pass of raw / agentrx, or their first pass when there is no k-th.
  const passOf = (name: string, pass: number): Row | undefined => ok.find((r) => r.name === name && r.pass === pass) ?? ok.find((r) => r.name === name);
  const wallMed = (r: Row): number => median(r.rounds.map((k) => k.wall));
  const ratioRow = (r: Row, base: Row): string =>
    `${roundRatio(r, base).toFixed(2)}× / ${x(wallMed(r), wallMed(base))} / ${x(r.conc!.wall, base.conc!.wall)} / ${x(r.conc!.memEnd.heapUsed, base.conc!.memEnd.heapUsed)}`;
  for (const r of ok) {
    const raw = r.name === 'raw' ? undefined : passOf('raw', r.pass);
    if (raw) out.push([`${r.label} ÷ ${raw.label}: CPU (median of round ratios) / wall med / conc wall / heap after conc`, ratioRow(r, raw)]);
  }
  const isAgentrx = (name: string): boolean => FLAVOURS.includes(name) || VARIANTS.has(name) || CONFIGS.has(name);
  const isPeer = (r: Row): boolean => r.name !== 'raw' && !isAgentrx(r.name);
  for (const r of ok.filter(isPeer)) {
    for (const flavour of FLAVOURS) {
      const ax = ok.some((a) => a.name === flavour) ? passOf(flavour, r.pass) : undefined;
      if (ax) out.push([`${ax.label} ÷ ${r.label}: CPU (median of round ratios) / wall med / conc wall / heap after conc`, ratioRow(ax, r)]);
    }
  }
  const verdict = (ratios: number[], goal: number): string =>
    `${ratios.map((v) => `${v.toFixed(2)}×`).join(' / ')} (median ${median(ratios).toFixed(2)}×) ${median(ratios) <= goal ? 'met' : 'MISSED'}`;
  for (const flavour of FLAVOURS) out.push(...flavourTargets(flavour));
  for (const name of VARIANTS) {
    const ratios: number[] = [];
    for (const v of ok.filter((r) => r.name === name)) {
      const ax = passOf('agentrx', v.pass);
      if (!ax) continue;
      ratios.push(roundRatio(v, ax));
      out.push([`target ${v.label} (file store) ≤ ${FILE_GOAL[name]}× ${ax.label} (memory store) CPU`, verdict([ratios.at(-1)!], FILE_GOAL[name]!)]);
    }
    // One pass moves ±20% on a shared machine (and with the file system's state): the verdict is the median of the passes.
    if (ratios.length > 1) out.push([`target ${name} ≤ ${FILE_GOAL[name]}× agentrx CPU, over ${ratios.length} passes`, verdict(ratios, FILE_GOAL[name]!)]);
  }
  return report(`cost per session vs peers${routerOptions.paceMs ? ` (paced, ${routerOptions.paceMs} ms between SSE events)` : ''}`, out);

  /** Issue 28's goal rows for one flavour of agentrx (its passes against raw and the peers). */
  function flavourTargets(flavour: string): [string, string][] {
    const rowsOut: [string, string][] = [];
    const axPasses = ok.filter((r) => r.name === flavour);
    const vsRaw = axPasses.flatMap((ax) => {
      const raw = passOf('raw', ax.pass);
      return raw ? [{ ax, raw }] : [];
    });
    if (vsRaw.length > 0) {
      rowsOut.push([
        `target ${flavour} ≤ 1.3× raw CPU per session (issues 17, 28), per pass`,
        verdict(
          vsRaw.map(({ ax, raw }) => roundRatio(ax, raw)),
          1.3,
        ),
      ]);
      const extras = vsRaw.map(({ ax, raw }) => ax.conc!.memEnd.heapUsed - raw.conc!.memEnd.heapUsed);
      rowsOut.push([
        `target heap after GC once ${CONC} concurrent sessions are done ≤ raw + 8 MB (issue 28), per pass`,
        `${vsRaw.map(({ ax, raw }, k) => `${flavour} ${mb(ax.conc!.memEnd.heapUsed)} − raw ${mb(raw.conc!.memEnd.heapUsed)} = ${mb(extras[k]!)}`).join('; ')} ${median(extras) <= 8 * 2 ** 20 ? 'met' : 'MISSED'}`,
      ]);
      const perSession = axPasses.map((ax) => (ax.conc!.peakRss - ax.conc!.memWarm.rss) / CONC);
      rowsOut.push([
        `target ${flavour} peak RSS ≤ 150 KB per concurrent session (issue 28 asks it of 1,000: BENCH_PEERS_CONC=1000), per pass`,
        `${perSession.map((b) => `${(b / 1024).toFixed(0)} KB`).join(' / ')} ${median(perSession) <= 150 * 1024 ? 'met' : 'MISSED'}`,
      ]);
    }
    const peerRows = ok.filter(isPeer);
    if (axPasses.length > 0 && peerRows.length > 0) {
      const best = peerRows.reduce((a, b) => (cpuMed.get(a)! <= cpuMed.get(b)! ? a : b));
      const ax = passOf(flavour, best.pass)!;
      rowsOut.push([`target ${flavour} ≤ 0.35× the best peer's CPU per session (${best.label}, same pass)`, verdict([roundRatio(ax, best)], 0.35)]);
    }
    const coldOf = (name: string): number[] => rows.filter((r) => r.name === name).flatMap((r) => r.cold.map((c) => c.wallMs));
    const peerNames = [...new Set(RUNNERS)].filter((n) => n !== 'raw' && !isAgentrx(n) && coldOf(n).length > 0);
    if (coldOf(flavour).length > 0 && peerNames.length > 0) {
      const axMed = median(coldOf(flavour));
      const fastest = peerNames.reduce((a, b) => (median(coldOf(a)) <= median(coldOf(b)) ? a : b));
      const fMed = median(coldOf(fastest));
      rowsOut.push([
        `target ${flavour} import + setup ≤ 200 ms and ≤ the fastest peer's (${fastest}, ${fMed.toFixed(0)} ms) (issue 28)`,
        `${axMed.toFixed(0)} ms, ${x(axMed, fMed)}: ${axMed <= 200 ? 'met' : 'MISSED'} / ${axMed <= fMed ? 'met' : 'MISSED'}`,
      ]);
    }
    return rowsOut;
  }
}

/** `round` added to the merged sequential results `into` (its sessions appended; the first round's memory kept). */
function mergeRound(into: SeqOut | undefined, round: SeqOut): SeqOut {
  if (!into) return { ...round, cpu: [...round.cpu], wall: [...round.wall], split: { ...round.split } };
  into.cpu.push(...round.cpu);
  into.wall.push(...round.wall);
  into.split.userMs += round.split.userMs;
  into.split.systemMs += round.split.systemMs;
  return into;
}
