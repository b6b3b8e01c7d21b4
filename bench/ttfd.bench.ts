/**
 * Time-to-first-delta overhead: agentrx (Local provider, a consumer noting the first
 * TEXT_MESSAGE_CONTENT) against a raw axios stream read of the same emulator response (first
 * non-empty `delta.content`), N sequential runs each way, interleaved, in one fresh child process;
 * the emulator runs in this parent process. Target: overhead < 1 ms at p99.
 */
import { startOpenAiEmulator, type EmulatorTurn } from '../src/testing/openai-emulator.js';
import { loadavg } from 'node:os';
import { environmentRows, median, percentile, report, type BenchResult } from './harness.js';
import { runChild } from './peers/shared.js';

// 2,000 pairs: the p99 then rests on 20 samples, not 3.
const N = Number(process.env['BENCH_TTFD_N'] ?? 2000);
const WARMUP = 30;
const TURN: EmulatorTurn = { text: 'The first words arrive now, and then a few more words follow them one by one until the end.' };

export async function ttfdBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const emulator = await startOpenAiEmulator({ script: new Array<EmulatorTurn>(2 * (N + WARMUP) + 10).fill(TURN) });
  let out: { raw: number[]; arx: number[]; rawGc: boolean[]; arxGc: boolean[] };
  try {
    out = await runChild('./ttfd-child.js', [emulator.baseUrl, String(N), String(WARMUP)]);
  } finally {
    await emulator.close();
  }
  const { raw, arx, rawGc, arxGc } = out;
  const rawNoGc = raw.filter((_, i) => !rawGc[i]);
  const arxNoGc = arx.filter((_, i) => !arxGc[i]);
  const diffs = arx.map((a, i) => a - raw[i]!);
  const p99Over = percentile(arx, 99) - percentile(raw, 99);
  return report('time to first delta', [
    ...environmentRows('ttfd', load0),
    ['runs', `${N} each way, interleaved, after ${WARMUP} warm-up pairs; one fresh process; emulator in the parent`],
    ['raw axios stream read: p50 / p99', `${median(raw).toFixed(3)} ms / ${percentile(raw, 99).toFixed(3)} ms`],
    ['agentrx consumer: p50 / p99', `${median(arx).toFixed(3)} ms / ${percentile(arx, 99).toFixed(3)} ms`],
    ['overhead p50 (agentrx p50 − raw p50)', `${(median(arx) - median(raw)).toFixed(3)} ms`],
    ['overhead p99 (agentrx p99 − raw p99)', `${p99Over.toFixed(3)} ms`],
    ['paired differences (agentrx − raw of the same pair): p50 / p99', `${median(diffs).toFixed(3)} ms / ${percentile(diffs, 99).toFixed(3)} ms`],
    ['samples with a garbage collection inside them: agentrx / raw', `${arx.length - arxNoGc.length} / ${raw.length - rawNoGc.length}`],
    [
      'p99 of the samples without one: agentrx / raw (difference)',
      `${percentile(arxNoGc, 99).toFixed(3)} ms / ${percentile(rawNoGc, 99).toFixed(3)} ms (${(percentile(arxNoGc, 99) - percentile(rawNoGc, 99)).toFixed(3)} ms)`,
    ],
    ['target < 1 ms at p99', p99Over < 1 ? 'met' : 'MISSED'],
  ]);
}
