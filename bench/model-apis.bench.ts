/**
 * The Local loop on each model API (issue 29): the same two-turn streamed conversation (the model
 * calls `echo`, then answers) on each API's emulator, `BENCH_APIS_N` sessions one after another
 * in a fresh child process per API (the emulator runs here, so the child's CPU is the loop's own:
 * request building, stream parsing and translation to chat chunks, the session). Goal: no API
 * slower per session than the chat API (CPU per session ≤ 1.05× openai-chat, the noise of a
 * shared 2-core machine).
 */
import { loadavg } from 'node:os';
import { startAnthropicEmulator } from '../src/testing/anthropic-emulator.js';
import { startGeminiEmulator } from '../src/testing/gemini-emulator.js';
import { startOpenAiEmulator } from '../src/testing/openai-emulator.js';
import { startResponsesEmulator } from '../src/testing/responses-emulator.js';
import { environmentRows, median, report, type BenchResult } from './harness.js';
import { runChild } from './peers/shared.js';

const N = Number(process.env['BENCH_APIS_N'] ?? 300);
const WARMUP = Number(process.env['BENCH_APIS_WARMUP'] ?? 50);
const ROUNDS = Number(process.env['BENCH_APIS_ROUNDS'] ?? 3);
const SAID = 'Let me echo that for you right away, one moment please.';
const ANSWER = 'The echo came back as HELLO WORLD, exactly as you asked, in capitals.';

interface Emu {
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** Each API's emulator, scripted with `sessions` conversations, and the baseUrl the loop takes. */
const APIS: Readonly<Record<string, (sessions: number) => Promise<Emu>>> = {
  'openai-chat': (s) =>
    startOpenAiEmulator({ script: repeat(s, { text: SAID, toolCalls: [{ name: 'echo', arguments: { text: 'hello world' } }] }, { text: ANSWER }) }),
  'anthropic-messages': async (s) => {
    const e = await startAnthropicEmulator({
      script: repeat(s, { text: SAID, toolUses: [{ name: 'echo', input: { text: 'hello world' } }] }, { text: ANSWER }),
    });
    return { baseUrl: `${e.baseUrl}/v1`, close: () => e.close() };
  },
  'openai-responses': (s) =>
    startResponsesEmulator({ script: repeat(s, { text: SAID, functionCalls: [{ name: 'echo', arguments: { text: 'hello world' } }] }, { text: ANSWER }) }),
  gemini: async (s) => {
    const e = await startGeminiEmulator({
      script: repeat(s, { text: SAID, functionCalls: [{ name: 'echo', args: { text: 'hello world' } }] }, { text: ANSWER }),
    });
    return { baseUrl: `${e.baseUrl}/v1beta`, close: () => e.close() };
  },
};

function repeat<T>(sessions: number, ...turns: T[]): T[] {
  return Array.from({ length: sessions }, () => turns).flat();
}

export async function modelApisBench(): Promise<BenchResult> {
  const start = loadavg();
  const cpu = new Map<string, number[]>();
  const wall = new Map<string, number[]>();
  // Rounds interleave the APIs, so a change in the machine's load falls on all of them alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const [api, startEmu] of Object.entries(APIS)) {
      const emu = await startEmu(N + WARMUP);
      try {
        const out = await runChild<{ cpu: number[]; wall: number[] }>('./model-api-child.js', [api, emu.baseUrl, String(N), String(WARMUP)]);
        cpu.set(api, [...(cpu.get(api) ?? []), median(out.cpu)]);
        wall.set(api, [...(wall.get(api) ?? []), median(out.wall)]);
      } finally {
        await emu.close();
      }
    }
  }
  const chat = median(cpu.get('openai-chat')!);
  const rows: [string, string][] = [];
  let worst = 0;
  for (const api of Object.keys(APIS)) {
    const c = median(cpu.get(api)!);
    worst = Math.max(worst, c / chat);
    rows.push([
      `${api}: CPU / wall per session (median of ${ROUNDS} rounds' medians)`,
      `${c.toFixed(3)} ms / ${median(wall.get(api)!).toFixed(3)} ms (${(c / chat).toFixed(2)}× chat)`,
    ]);
  }
  rows.push([
    'goal: every API ≤ 1.05× openai-chat CPU per session',
    worst <= 1.05 ? `met (worst ${worst.toFixed(2)}×)` : `MISSED (worst ${worst.toFixed(2)}×)`,
  ]);
  return report(`Local loop per model API: ${N} sequential sessions (tool call + answer, streamed) per round, ${ROUNDS} rounds`, [
    ...environmentRows('model-apis', start),
    ...rows,
  ]);
}
