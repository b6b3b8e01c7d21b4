/**
 * Cost per session against peers: the same scripted 5-turn streaming tool conversation (one
 * emulator per turn behind a router, all in this parent process) driven by each runner in its own
 * fresh child process: a raw fetch + SSE loop (the floor), agentrx (Local provider, JSON-lines
 * consumer to a null stream, no terminal consumer; memory store), agentrx-file (the same with the
 * file store), agentrx-file-idempotent (the file store, both tools declared idempotent, so their
 * start is not synced), @openai/agents (chat-completions model) and the Vercel ai SDK 6.x (streamText +
 * @ai-sdk/openai-compatible). Targets: agentrx ≤ 2× the raw loop in CPU per session and ≤ 0.5×
 * either peer; the file store within 15% of the memory store.
 */
import { median, percentile, report, type BenchResult } from './harness.js';
import { runChild, startConversationRouter } from './peers/shared.js';

const SEQ = Number(process.env['BENCH_PEERS_SEQ'] ?? 200);
const CONC = Number(process.env['BENCH_PEERS_CONC'] ?? 200);
const WARMUP = Number(process.env['BENCH_PEERS_WARMUP'] ?? 30);
const RUNNERS = (process.env['BENCH_PEERS_RUNNERS'] ?? 'raw,agentrx,agentrx-file,agentrx-file-idempotent,openai-agents,ai-sdk').split(',');
/** agentrx runners with another store or tool declaration: compared with agentrx, not as peers. */
const VARIANTS = new Set(['agentrx-file', 'agentrx-file-idempotent']);

interface Mem {
  rss: number;
  heapUsed: number;
}
interface SeqOut {
  cpu: number[];
  wall: number[];
  memLoaded: Mem;
  memWarm: Mem;
  memEnd: Mem;
}
interface ConcOut {
  wall: number;
  cpu: number;
  eldP99: number;
  eldMax: number;
  peakRss: number;
  memEnd: Mem;
}
interface Row {
  name: string;
  seq?: SeqOut;
  conc?: ConcOut;
  error?: string;
}

const mb = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MB`;
const x = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;

export async function peersBench(): Promise<BenchResult> {
  const rows: Row[] = [];
  const router = await startConversationRouter(RUNNERS.length * (2 * WARMUP + SEQ + CONC) + 10);
  try {
    for (const name of RUNNERS) {
      const row: Row = { name };
      rows.push(row);
      try {
        process.stderr.write(`  ${name}: ${SEQ} sequential sessions…\n`);
        row.seq = await runChild<SeqOut>('./child.js', [name, router.baseUrl, 'seq', String(SEQ), String(WARMUP)]);
        process.stderr.write(`  ${name}: ${CONC} concurrent sessions…\n`);
        row.conc = await runChild<ConcOut>('./child.js', [name, router.baseUrl, 'conc', String(CONC), String(WARMUP)]);
      } catch (e) {
        row.error = (e as Error).message.split('\n')[0]!.slice(0, 300);
        process.stderr.write(`  ${name} failed: ${row.error}\n`);
      }
    }
  } finally {
    await router.close();
  }
  const out: [string, string][] = [
    ['conversation', '5 model turns streamed over SSE, 5 tool calls (one turn with 2 parallel), text in every turn'],
    ['emulator', 'in the parent process: 5 scripted OpenAI emulators (one per turn) behind a byte-piping router; every runner talks to the same router URL'],
    ['sessions', `${WARMUP} warm-up, then ${SEQ} sequential (one fresh process); ${CONC} concurrent (another fresh process, after the same warm-up)`],
  ];
  const ok = rows.filter((r) => r.seq && r.conc);
  const cpuMed = new Map(ok.map((r) => [r.name, median(r.seq!.cpu)]));
  for (const r of rows) {
    if (!r.seq || !r.conc) {
      out.push([`${r.name}`, `SKIPPED: ${r.error ?? 'no result'}`]);
      continue;
    }
    const s = r.seq;
    const c = r.conc;
    out.push([`${r.name}: CPU ms/session, sequential (median / p99)`, `${median(s.cpu).toFixed(2)} / ${percentile(s.cpu, 99).toFixed(2)}`]);
    out.push([`${r.name}: wall ms/session, sequential (median / p99)`, `${median(s.wall).toFixed(2)} / ${percentile(s.wall, 99).toFixed(2)}`]);
    out.push([`${r.name}: ${CONC} concurrent: wall / CPU / event-loop delay p99 (max)`, `${c.wall.toFixed(0)} ms / ${c.cpu.toFixed(0)} ms / ${c.eldP99.toFixed(1)} ms (${c.eldMax.toFixed(1)} ms)`]);
    out.push([`${r.name}: memory after GC: loaded / after warm-up / after ${SEQ} seq (RSS, heap)`, `${mb(s.memLoaded.rss)}, ${mb(s.memLoaded.heapUsed)} / ${mb(s.memWarm.rss)}, ${mb(s.memWarm.heapUsed)} / ${mb(s.memEnd.rss)}, ${mb(s.memEnd.heapUsed)}`]);
    out.push([`${r.name}: after ${CONC} concurrent: peak RSS / RSS, heap after GC`, `${mb(c.peakRss)} / ${mb(c.memEnd.rss)}, ${mb(c.memEnd.heapUsed)}`]);
  }
  const raw = ok.find((r) => r.name === 'raw');
  if (raw) {
    for (const r of ok) {
      if (r === raw) continue;
      out.push([
        `${r.name} ÷ raw: CPU med / wall med / conc wall / heap after seq`,
        `${x(cpuMed.get(r.name)!, cpuMed.get('raw')!)} / ${x(median(r.seq!.wall), median(raw.seq!.wall))} / ${x(r.conc!.wall, raw.conc!.wall)} / ${x(r.seq!.memEnd.heapUsed, raw.seq!.memEnd.heapUsed)}`,
      ]);
    }
  }
  const ax = ok.find((r) => r.name === 'agentrx');
  if (ax) {
    for (const r of ok) {
      if (r === ax || r === raw || VARIANTS.has(r.name)) continue;
      out.push([
        `agentrx ÷ ${r.name}: CPU med / wall med / conc wall / heap after seq`,
        `${x(cpuMed.get('agentrx')!, cpuMed.get(r.name)!)} / ${x(median(ax.seq!.wall), median(r.seq!.wall))} / ${x(ax.conc!.wall, r.conc!.wall)} / ${x(ax.seq!.memEnd.heapUsed, r.seq!.memEnd.heapUsed)}`,
      ]);
    }
    if (raw) out.push(['target agentrx ≤ 2× raw CPU', cpuMed.get('agentrx')! <= 2 * cpuMed.get('raw')! ? 'met' : 'MISSED']);
    for (const name of VARIANTS) {
      if (!cpuMed.has(name)) continue;
      out.push([`${name} ÷ agentrx (memory store) CPU med`, x(cpuMed.get(name)!, cpuMed.get('agentrx')!)]);
      out.push([`target ${name} (file store) ≤ 1.15× agentrx (memory store) CPU`, cpuMed.get(name)! <= 1.15 * cpuMed.get('agentrx')! ? 'met' : 'MISSED']);
    }
    for (const r of ok) {
      if (r === ax || r === raw || VARIANTS.has(r.name)) continue;
      out.push([`target agentrx ≤ 0.5× ${r.name} CPU`, cpuMed.get('agentrx')! <= 0.5 * cpuMed.get(r.name)! ? 'met' : 'MISSED']);
    }
  }
  return report('cost per session vs peers', out);
}
