import fc from 'fast-check';
import { AgentRx } from '../../src/agentrx.js';
import { startAnthropicEmulator, type AnthropicEmulatorFault, type AnthropicEmulatorTurn } from '../../src/testing/anthropic-emulator.js';
import { RecordingConsumer } from '../../src/testing/recording-consumer.js';
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
  type Observed,
} from './fault-matrix.arbitraries.js';

/**
 * Fault matrix, Local provider on the Anthropic Messages API (issue 29): the Local matrix's
 * property (generated scripted sessions × generated transient faults, each on a model call right
 * before the successful one of a turn) on the Messages emulator: statuses the API answers when it
 * is busy (429, 500, 529), a connection dropped or an overloaded error event before the first
 * event, and a request that never answers (the request timeout).
 */

const PREFIX = 'toolu_';
const REQUEST_TIMEOUT_MS = 200;

/** A transient failure of one model call (the turn is not consumed). */
type MessagesFault =
  | { readonly kind: 'status'; readonly status: 429 | 500 | 529; readonly retryAfter?: 0 }
  | { readonly kind: 'drop'; readonly afterEvents: 0 }
  | { readonly kind: 'error_event'; readonly afterEvents: 0 }
  | { readonly kind: 'hang' };

const faultArb: fc.Arbitrary<MessagesFault> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      { kind: fc.constant('status' as const), status: fc.constantFrom(429 as const, 500 as const, 529 as const), retryAfter: fc.constant(0 as const) },
      { requiredKeys: ['kind', 'status'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), afterEvents: fc.constant(0 as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('error_event' as const), afterEvents: fc.constant(0 as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hang' as const) }) },
);

/** A script, the failed calls before each turn's successful one, and whether the calls stream. */
const caseArb = fc.tuple(scriptArb, fc.array(fc.array(faultArb, { minLength: 0, maxLength: 2 }), { minLength: 3, maxLength: 3 }), fc.boolean());

function emulatorScript(script: FmScript): AnthropicEmulatorTurn[] {
  return script.turns.map((turn, t) => ({
    ...(turn.text !== '' ? { text: turn.text } : {}),
    ...(turn.tools.length > 0 ? { toolUses: turn.tools.map((c, i) => ({ id: toolUseId(PREFIX, t, i), name: c.tool, input: toolInput(c) })) } : {}),
    usage: { input_tokens: turn.inputTokens, output_tokens: turn.outputTokens },
  }));
}

/** Messages request index → fault: each turn's failed calls, then its successful one. */
function faultPlan(script: FmScript, faults: readonly (readonly MessagesFault[])[]): Record<number, AnthropicEmulatorFault> {
  const plan: Record<number, AnthropicEmulatorFault> = {};
  let request = 0;
  script.turns.forEach((_, t) => {
    for (const fault of faults[t]!) plan[request++] = fault;
    request++;
  });
  return plan;
}

/** The emulator numbers message ids by request, so a retried call's carry a later number: an artefact of the emulator. */
function scrub(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'string' && /msg_e\d+/.test(x) ? x.replace(/msg_e\d+/g, 'msg_e') : x))) as unknown;
}

interface MessagesObserved extends Observed {
  readonly calls: number;
}

async function run(script: FmScript, faults: Record<number, AnthropicEmulatorFault>, stream: boolean): Promise<MessagesObserved> {
  const emu = await startAnthropicEmulator({ script: emulatorScript(script), faults });
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
            api: 'anthropic-messages',
            baseUrl: `${emu.baseUrl}/v1`,
            model: 'claude-scripted',
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
    return { ...o, calls: emu.requests.filter((r) => r.message !== undefined).length };
  } finally {
    await emu.close();
  }
}

describe('fault matrix: Local provider through the Anthropic Messages emulator', () => {
  it('should give the fault-free SessionResult, gap-free seq, one terminal and one execution per tool use under any transient model-call faults', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ([script, turnFaults, stream]) => {
        const clean = await run(script, {}, stream);
        const faulted = await run(script, faultPlan(script, turnFaults), stream);
        const ids = allToolUseIds(script, PREFIX);

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
