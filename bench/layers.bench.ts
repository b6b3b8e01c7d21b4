/**
 * Where agentrx's CPU per session goes, layer by layer: the peers conversation (5 streamed turns,
 * 5 tool calls) run by the raw loop and by agentrx-zod with one layer taken off at a time, each
 * runner in a fresh child process per round, the runners' order rotated each round:
 *
 * - `agentrx-zod`: the peers bench's configuration (memory store keeping recent closed sessions,
 *   the JSON-lines consumer to a null stream and the delivered-outcome consumer);
 * - `agentrx-zod-delivered`: without the JSON-lines consumer;
 * - `agentrx-zod-result`: without consumers (the outcome read from `rx.run()`'s result);
 * - `agentrx-zod-result-keepnone`: and keeping no closed session (`store.memoryKeep: 'none'`): the
 *   session core alone;
 * - `agentrx-zod-keepnone`: the consumers again, keeping no closed session.
 *
 * A layer's cost is the median over rounds of the difference between two runners within a round
 * (close in time: one runner's pass moves by ±20% between minutes on a shared machine). Every
 * session's outcome is checked as in the peers bench.
 */
import { loadavg } from 'node:os';
import { environmentRows, median, report, type BenchResult } from './harness.js';
import { runChild, startConversationRouter } from './peers/shared.js';

const SEQ = Number(process.env['BENCH_LAYERS_SEQ'] ?? 300);
const ROUNDS = Math.max(1, Number(process.env['BENCH_LAYERS_ROUNDS'] ?? 5));
const WARMUP = 30;
const RUNNERS = ['raw', 'agentrx-zod', 'agentrx-zod-delivered', 'agentrx-zod-result', 'agentrx-zod-result-keepnone', 'agentrx-zod-keepnone'] as const;
type Runner = (typeof RUNNERS)[number];
/** Each layer: what it is, and the two runners whose difference is its cost. */
const LAYERS: readonly (readonly [string, Runner, Runner])[] = [
  ['the JSON-lines consumer (every AG-UI event serialized to a null stream)', 'agentrx-zod', 'agentrx-zod-delivered'],
  ['delivering AG-UI events to a consumer (translation, the consumer lane)', 'agentrx-zod-delivered', 'agentrx-zod-result'],
  ['keeping closed sessions readable (sealing at release; memoryKeep recent)', 'agentrx-zod-result', 'agentrx-zod-result-keepnone'],
  ['the same with the consumers in place', 'agentrx-zod', 'agentrx-zod-keepnone'],
  ['the session core over the raw loop (provider stream, envelopes, open log, tools, ledger)', 'agentrx-zod-result-keepnone', 'raw'],
];

interface SeqOut {
  cpu: number[];
}

export async function layersBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const router = await startConversationRouter(RUNNERS.length * ROUNDS * (WARMUP + SEQ) + 10);
  const rounds: Record<Runner, number>[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const cpu = {} as Record<Runner, number>;
      for (let k = 0; k < RUNNERS.length; k++) {
        const name = RUNNERS[(k + round) % RUNNERS.length]!;
        process.stderr.write(`  ${name}: ${SEQ} sequential sessions (round ${round + 1} of ${ROUNDS})…\n`);
        const out = await runChild<SeqOut>('./child.js', [name, router.baseUrl, 'seq', String(SEQ), String(WARMUP)]);
        cpu[name] = median(out.cpu);
      }
      rounds.push(cpu);
    }
  } finally {
    await router.close();
  }
  const fmt = (xs: readonly number[], digits: number): string => xs.map((x) => x.toFixed(digits)).join(' / ');
  const rows: [string, string][] = [
    ...environmentRows('layers', load0),
    [
      'method',
      `${ROUNDS} rounds; in each, every runner in a fresh process (order rotated each round): ${WARMUP} warm-up then ${SEQ} sequential sessions, CPU (user + system) per session, the round's median`,
    ],
  ];
  for (const name of RUNNERS) {
    const per = rounds.map((r) => r[name]);
    const ratios = rounds.map((r) => r[name] / r.raw);
    rows.push([
      `${name}: CPU ms/session (median of rounds; each round) · ÷ raw (median of the rounds' ratios; each)`,
      `${median(per).toFixed(2)} (${fmt(per, 2)}) · ${median(ratios).toFixed(2)}× (${fmt(ratios, 2)})`,
    ]);
  }
  for (const [what, outer, inner] of LAYERS) {
    const diffs = rounds.map((r) => r[outer] - r[inner]);
    const shares = rounds.map((r) => (r[outer] - r[inner]) / r.raw);
    rows.push([
      `layer: ${what} = ${outer} − ${inner}, ms/session (median; each round) · as a share of raw`,
      `${median(diffs).toFixed(2)} (${fmt(diffs, 2)}) · ${(median(shares) * 100).toFixed(0)}% of raw`,
    ]);
  }
  return report('CPU per session, layer by layer (agentrx-zod, Local, memory store)', rows);
}
