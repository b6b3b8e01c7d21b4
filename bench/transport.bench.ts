/**
 * Transport of the streamed model call: CPU per streamed chat completion for each candidate
 * transport, all in one fresh child process, rounds interleaved (every candidate once per round,
 * order rotated), the emulator in this parent process. Every candidate reads the body with the
 * Local provider's own SSE reader (`readChatStream` + `ChunkAccumulator`) and must fold the whole
 * answer (text and both tool calls), so only the transport differs.
 */
import { startOpenAiEmulator, type EmulatorTurn } from '../src/testing/openai-emulator.js';
import { loadavg } from 'node:os';
import { environmentRows, median, report, type BenchResult } from './harness.js';
import { CONVERSATION, runChild } from './peers/shared.js';
import { CANDIDATES, type TransportChildResult } from './peers/transport-child.js';

const PER_ROUND = Number(process.env['BENCH_TRANSPORT_N'] ?? 100);
const ROUNDS = Number(process.env['BENCH_TRANSPORT_ROUNDS'] ?? 10);
const WARMUP = 30;
/** Turn 3 of the peers conversation: text and two parallel tool calls. */
const TURN: EmulatorTurn = CONVERSATION[2]!;

export async function transportBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const total = CANDIDATES.length * (ROUNDS * PER_ROUND + WARMUP) + 10;
  const emulator = await startOpenAiEmulator({ script: new Array<EmulatorTurn>(total).fill(TURN) });
  let out: TransportChildResult;
  try {
    out = await runChild<TransportChildResult>('./transport-child.js', [emulator.baseUrl, String(PER_ROUND), String(ROUNDS), String(WARMUP)]);
  } finally {
    await emulator.close();
  }
  const base = median(out.cpuMsPerCall['axios-node']!);
  const rows: [string, string][] = [
    ...environmentRows('transport', load0),
    [
      'method',
      `${ROUNDS} rounds × ${PER_ROUND} sequential streamed completions per candidate, interleaved (order rotated each round), after ${WARMUP} warm-up calls each; one fresh child process; emulator in the parent`,
    ],
    ['completion', 'one chat.completion.chunk SSE stream: text + 2 parallel tool calls, parsed by readChatStream + ChunkAccumulator'],
  ];
  for (const name of CANDIDATES) {
    const cpu = out.cpuMsPerCall[name]!;
    const wall = out.wallMsPerCall[name]!;
    rows.push([
      `${name}: CPU / wall ms per completion (median of rounds; min–max)`,
      `${median(cpu).toFixed(3)} / ${median(wall).toFixed(3)} (${Math.min(...cpu).toFixed(3)}–${Math.max(...cpu).toFixed(3)}); ÷ axios-node ${(median(cpu) / base).toFixed(2)}×`,
    ]);
  }
  rows.push(['heap used after GC at the end (all candidates loaded)', `${(out.heapAfter / 2 ** 20).toFixed(1)} MB`]);
  return report('transport of the streamed model call', rows);
}
