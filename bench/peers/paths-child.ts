/**
 * What sessions that end each way leave behind, in a fresh process:
 * `node --expose-gc paths-child.js <ok|live|error|timeout|cancel|tool> <n>`. One AgentRx (Local
 * provider) on an OpenAI emulator in this process; 20 warm-up sessions of the same kind, a prune
 * of the memory store, heap after GC; then `n` concurrent sessions, a prune, heap after GC. The
 * store's contents are by design, so they are pruned on both sides: what is left is what the
 * sessions left elsewhere. Kinds: `ok` (`rx.run` to `end_turn`), `live` (`rx.start`, result,
 * `close()`), `error` (the model answers 400), `timeout` (the model never answers; `timeoutMs`
 * 100), `cancel` (the model stalls after 2 chunks; aborted after 50 ms), `tool` (a tool that
 * waits for its abort signal; aborted after 50 ms). Prints one JSON line: how each session ended
 * the bytes left per session, and how many sessions the instance still tracks (should be 0).
 */
import 'reflect-metadata';
import { AgentRx } from '../../src/agentrx.js';
import { defineTool } from '../../src/core/tools/define-tool.js';
import { startOpenAiEmulator, type EmulatorTurn } from '../../src/testing/openai-emulator.js';
import type { EmulatorFault } from '../../src/testing/openai-emulator/openai-script.js';
import { settledMemAfterGc } from './shared.js';

const KINDS = ['ok', 'live', 'error', 'timeout', 'cancel', 'tool'] as const;
type Kind = (typeof KINDS)[number];
const kind = process.argv[2] as Kind;
const n = Number(process.argv[3] ?? 200);
if (!KINDS.includes(kind)) throw new Error(`paths-child: the first argument must be one of ${KINDS.join(', ')}; got ${JSON.stringify(process.argv[2])}`);

const WARMUP = 20;
const total = 2 * (n + WARMUP) + 10;
const faultOf: Partial<Record<Kind, EmulatorFault>> = {
  cancel: { kind: 'stall', afterChunks: 2 },
  error: { kind: 'status', status: 400 },
  timeout: { kind: 'hang' },
};
const fault = faultOf[kind];
const turn: EmulatorTurn = kind === 'tool' ? { text: 'blocking', toolCalls: [{ name: 'block', arguments: {} }] } : { text: 'one two three four' };
const emu = await startOpenAiEmulator({
  script: new Array<EmulatorTurn>(total).fill(turn),
  ...(fault ? { faults: Object.fromEntries(Array.from({ length: total }, (_, i) => [i, fault])) } : {}),
  recordLimit: 10,
});
const block = defineTool({
  name: 'block',
  description: 'Waits until the session is aborted.',
  inputSchema: { type: 'object', properties: {} },
  handle: (_input, ctx) => new Promise<string>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
});
const rx = await AgentRx.create({
  config: {
    provider: 'local',
    retainEvents: false,
    consumers: { terminal: false },
    limits: { reconnectAttempts: 0 },
    providers: { local: { baseUrl: emu.baseUrl, model: 'scripted' } },
  },
  tools: [block],
});

/** One session of `kind`; resolves with how it ended ('ok' or the error code). */
async function one(): Promise<string> {
  if (kind === 'live') {
    const s = rx.start({ prompt: 'go' });
    await s.result;
    s.close();
    await s.closed;
    return 'ok';
  }
  const ac = new AbortController();
  const timer = kind === 'cancel' || kind === 'tool' ? setTimeout(() => ac.abort(), 50) : undefined;
  try {
    await rx.run({ prompt: 'go', signal: ac.signal, ...(kind === 'timeout' ? { timeoutMs: 100 } : {}) });
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code ?? (e as Error).message;
  } finally {
    clearTimeout(timer);
  }
}
const tally = (ends: string[]): Record<string, number> => ends.reduce<Record<string, number>>((m, e) => ((m[e] = (m[e] ?? 0) + 1), m), {});

const warm = tally(await Promise.all(Array.from({ length: WARMUP }, one)));
await rx.sessionStore.prune!({ maxSessions: 0 });
const before = (await settledMemAfterGc()).heapUsed;
const ended = tally(await Promise.all(Array.from({ length: n }, one)));
const pruned = (await rx.sessionStore.prune!({ maxSessions: 0 })).length;
const after = (await settledMemAfterGc()).heapUsed;
// Sessions the instance still tracks although every run() has settled: each one is a leak.
const tracked = (rx as unknown as { sessions: Set<unknown> }).sessions.size;
process.stdout.write(JSON.stringify({ kind, n, warm, ended, pruned, tracked, before, after, leftPerSession: (after - before) / n }) + '\n');
await rx.stop();
await emu.close();
