import fc from 'fast-check';
import { AgentRx } from '../../src/agentrx.js';
import { startAnthropicEmulator } from '../../src/testing/anthropic-emulator.js';
import { startGeminiEmulator } from '../../src/testing/gemini-emulator.js';
import { RecordingConsumer } from '../../src/testing/recording-consumer.js';
import { startResponsesEmulator } from '../../src/testing/responses-emulator.js';
import {
  allToolUseIds,
  comparable,
  contentEvents,
  expectStreamInvariants,
  FC_SEED,
  fcRuns,
  FM_TOOLS,
  observe,
  scriptArb,
  toolInput,
  toolUseId,
  type FmScript,
  type FmToolCall,
  type Observed,
} from './fault-matrix.arbitraries.js';

/**
 * Fault matrix, Local provider on the native model APIs (issue 29): the Local matrix's property
 * (generated scripted sessions × generated transient faults, each on a model call right before the
 * successful one of a turn; streamed or not) on the Anthropic Messages, OpenAI Responses and Gemini
 * emulators. The faults are the ones each API answers when it is busy: its statuses, a connection
 * dropped before the first event, its in-stream error before the first event (Responses: also a
 * `response.failed`), and a request that never answers (caught by the request timeout).
 */

const REQUEST_TIMEOUT_MS = 200;

type Json = Record<string, unknown>;

/** One API: its emulator, how a script's turn and tool call look in it, and its busy answers. */
interface ApiCase {
  readonly api: 'anthropic-messages' | 'openai-responses' | 'gemini';
  readonly prefix: string;
  readonly statuses: readonly number[];
  /** In-stream failures before the first event (the turn is not consumed). */
  readonly streamFaults: readonly string[];
  /** Ids the emulator numbers by request (a retried call's carry a later number: an artefact of the emulator). */
  readonly numbered: RegExp;
  turn(text: string, calls: readonly FmToolCall[], t: number, usage: [number, number]): Json;
  start(script: Json[], faults: Record<number, Json>): Promise<{ baseUrl: string; calls(): number; close(): Promise<void> }>;
}

const APIS: readonly ApiCase[] = [
  {
    api: 'anthropic-messages',
    prefix: 'toolu_',
    statuses: [429, 500, 529],
    streamFaults: ['error_event'],
    numbered: /msg_e\d+/g,
    turn: (text, calls, t, [i, o]) => ({
      ...(text !== '' ? { text } : {}),
      ...(calls.length > 0 ? { toolUses: calls.map((c, k) => ({ id: toolUseId('toolu_', t, k), name: c.tool, input: toolInput(c) })) } : {}),
      usage: { input_tokens: i, output_tokens: o },
    }),
    async start(script, faults) {
      const e = await startAnthropicEmulator({ script: script as never, faults: faults as never });
      return { baseUrl: `${e.baseUrl}/v1`, calls: () => e.requests.filter((r) => r.message !== undefined).length, close: () => e.close() };
    },
  },
  {
    api: 'openai-responses',
    prefix: 'call_',
    statuses: [429, 500, 503],
    streamFaults: ['error_event', 'failed'],
    numbered: /(resp|msg|rs|fc)_e\d+/g,
    turn: (text, calls, t, [i, o]) => ({
      ...(text !== '' ? { text } : {}),
      ...(calls.length > 0 ? { functionCalls: calls.map((c, k) => ({ callId: toolUseId('call_', t, k), name: c.tool, arguments: toolInput(c) })) } : {}),
      usage: { input_tokens: i, output_tokens: o },
    }),
    async start(script, faults) {
      const e = await startResponsesEmulator({ script: script as never, faults: faults as never });
      return { baseUrl: e.baseUrl, calls: () => e.requests.filter((r) => r.response !== undefined).length, close: () => e.close() };
    },
  },
  {
    api: 'gemini',
    prefix: 'fc_',
    statuses: [429, 500, 503],
    streamFaults: ['error_event'],
    numbered: /resp_e\d+/g,
    turn: (text, calls, t, [i, o]) => ({
      ...(text !== '' ? { text } : {}),
      ...(calls.length > 0 ? { functionCalls: calls.map((c, k) => ({ id: toolUseId('fc_', t, k), name: c.tool, args: toolInput(c) })) } : {}),
      usage: { promptTokenCount: i, candidatesTokenCount: o },
    }),
    async start(script, faults) {
      const e = await startGeminiEmulator({ script: script as never, faults: faults as never });
      return { baseUrl: `${e.baseUrl}/v1beta`, calls: () => e.requests.filter((r) => r.call !== undefined).length, close: () => e.close() };
    },
  },
];

/** A transient failure of one model call of `c`'s API. */
function faultArb(c: ApiCase): fc.Arbitrary<Json> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...c.statuses).map((status) => ({ kind: 'status', status, retryAfter: 0 })) },
    { weight: 2, arbitrary: fc.constant({ kind: 'drop', afterEvents: 0 }) },
    { weight: 2, arbitrary: fc.constantFrom(...c.streamFaults).map((kind) => ({ kind, afterEvents: 0 })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'hang' }) },
  );
}

/** Request index → fault: each turn's failed calls, then its successful one. */
function faultPlan(script: FmScript, faults: readonly (readonly Json[])[]): Record<number, Json> {
  const plan: Record<number, Json> = {};
  let request = 0;
  script.turns.forEach((_, t) => {
    for (const fault of faults[t]!) plan[request++] = fault;
    request++;
  });
  return plan;
}

async function run(c: ApiCase, script: FmScript, faults: Record<number, Json>, stream: boolean): Promise<Observed & { calls: number }> {
  const emu = await c.start(
    script.turns.map((turn, t) => c.turn(turn.text, turn.tools, t, [turn.inputTokens, turn.outputTokens])),
    faults,
  );
  try {
    const rec = new RecordingConsumer();
    const rx = await AgentRx.create({
      config: {
        provider: 'local',
        logLevel: 'silent',
        consumers: { terminal: false },
        agent: { systemPrompt: 'Be brief.' },
        providers: {
          local: {
            api: c.api,
            baseUrl: emu.baseUrl,
            model: 'scripted',
            stream,
            retryBaseMs: 1,
            maxRetries: 3,
            requestTimeoutMs: REQUEST_TIMEOUT_MS,
            idleTimeoutMs: 2_000,
          },
        },
      },
      tools: FM_TOOLS,
      consumers: [rec],
    });
    const o = await observe(rx, rec);
    return { ...o, calls: emu.calls() };
  } finally {
    await emu.close();
  }
}

describe.each(APIS)('fault matrix: Local provider through the $api emulator', (c) => {
  const scrub = (v: unknown): unknown =>
    JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'string' ? x.replace(c.numbered, (m) => m.replace(/\d+$/, '')) : x))) as unknown;

  it('should give the fault-free SessionResult, gap-free seq, one terminal and one execution per tool use under any transient model-call faults', async () => {
    const caseArb = fc.tuple(scriptArb, fc.array(fc.array(faultArb(c), { minLength: 0, maxLength: 2 }), { minLength: 3, maxLength: 3 }), fc.boolean());
    await fc.assert(
      fc.asyncProperty(caseArb, async ([script, turnFaults, stream]) => {
        const clean = await run(c, script, {}, stream);
        const faulted = await run(c, script, faultPlan(script, turnFaults), stream);
        const ids = allToolUseIds(script, c.prefix);

        expect(scrub(comparable(faulted.result))).toEqual(scrub(comparable(clean.result)));
        expect(faulted.result).toMatchObject({ terminal: 'end_turn', turns: script.turns.length, text: script.turns.at(-1)!.text });
        expect(faulted.rec.text).toBe(clean.rec.text);
        expect(scrub(contentEvents(faulted.rec))).toEqual(scrub(contentEvents(clean.rec)));
        expectStreamInvariants(clean, ids);
        expectStreamInvariants(faulted, ids);
        const expectedCalls = script.turns.length + turnFaults.slice(0, script.turns.length).reduce((n, f) => n + f.length, 0);
        expect(faulted.calls).toBe(expectedCalls);
      }),
      { seed: FC_SEED, numRuns: fcRuns(20) },
    );
  });
});
