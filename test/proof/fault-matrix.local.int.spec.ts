import fc from 'fast-check';
import { AgentRx } from '../../src/agentrx.js';
import { startOpenAiEmulator, type EmulatorFault, type EmulatorTurn, type FaultPlan } from '../../src/testing/openai-emulator.js';
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
 * Fault matrix, Local provider (issue 7, point 1): generated scripted sessions × generated fault
 * plans on the OpenAI-compatible emulator. The Local provider retries a model call only on a
 * transient failure before the first byte (408/429/5xx, a reset before any chunk, a request
 * timeout), so those are the faults generated; each lands on a model call right before the
 * successful one of a turn, and the successful one may carry wire quirks of real servers.
 */

const PREFIX = 'call_';
const REQUEST_TIMEOUT_MS = 200;

/** A transient failure of one model call (the turn is not consumed). */
type LocalFault =
  | { readonly kind: 'status'; readonly status: 408 | 429 | 500 | 502 | 503 | 504; readonly retryAfter?: 0 }
  | { readonly kind: 'drop'; readonly afterChunks: 0 }
  | { readonly kind: 'hang' };

/** Per model turn: the failed calls before its successful one, and the quirks of that one. */
interface LocalTurnFaults {
  readonly before: readonly LocalFault[];
  readonly quirks: { readonly nullFirstArguments: boolean; readonly interleaveParallelToolCalls: boolean; readonly finishWithEmptyArgsDelta: boolean };
}

const localFaultArb: fc.Arbitrary<LocalFault> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        kind: fc.constant('status' as const),
        status: fc.constantFrom(408 as const, 429 as const, 500 as const, 502 as const, 503 as const, 504 as const),
        retryAfter: fc.constant(0 as const),
      },
      { requiredKeys: ['kind', 'status'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), afterChunks: fc.constant(0 as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hang' as const) }) },
);

const turnFaultsArb: fc.Arbitrary<LocalTurnFaults> = fc.record({
  before: fc.array(localFaultArb, { minLength: 0, maxLength: 2 }),
  quirks: fc.record({ nullFirstArguments: fc.boolean(), interleaveParallelToolCalls: fc.boolean(), finishWithEmptyArgsDelta: fc.boolean() }),
});

/** A script and one fault list per turn (extra entries are ignored). */
const caseArb = fc.tuple(scriptArb, fc.array(turnFaultsArb, { minLength: 3, maxLength: 3 }));

function emulatorScript(script: FmScript): EmulatorTurn[] {
  return script.turns.map((turn, t) => ({
    ...(turn.text !== '' ? { text: turn.text } : {}),
    ...(turn.tools.length > 0 ? { toolCalls: turn.tools.map((c, i) => ({ id: toolUseId(PREFIX, t, i), name: c.tool, arguments: toolInput(c) })) } : {}),
    usage: { prompt_tokens: turn.inputTokens, completion_tokens: turn.outputTokens },
  }));
}

/**
 * Completion request index → faults: each turn's failed calls, then its successful (quirky) one.
 * `clean` keeps only the quirks (they change the raw chunks kept in SessionResult.events, so the
 * fault-free twin must see them too).
 */
function faultPlan(script: FmScript, faults: readonly LocalTurnFaults[], clean = false): FaultPlan {
  const plan: Record<number, EmulatorFault | EmulatorFault[]> = {};
  let completion = 0;
  script.turns.forEach((_, t) => {
    const f = faults[t]!;
    if (!clean) for (const fault of f.before) plan[completion++] = fault;
    plan[completion++] = { kind: 'quirks', ...f.quirks };
  });
  return plan;
}

/**
 * The emulator numbers chunk ids and `created` by completion request, so a retried call's chunks
 * carry a later number than the fault-free run's: an artefact of the emulator, not of agentrx.
 */
function scrub(v: unknown): unknown {
  return JSON.parse(
    JSON.stringify(v, (k, x: unknown) =>
      k === 'created' ? 0 : typeof x === 'string' && /chatcmpl-emu\d+/.test(x) ? x.replace(/chatcmpl-emu\d+/g, 'chatcmpl-emu') : x,
    ),
  ) as unknown;
}

interface LocalObserved extends Observed {
  readonly completions: { readonly messages: readonly unknown[] }[];
}

async function run(script: FmScript, faults: FaultPlan): Promise<LocalObserved> {
  const emu = await startOpenAiEmulator({ script: emulatorScript(script), faults });
  try {
    const rec = new RecordingConsumer();
    const rx = await AgentRx.create({
      config: {
        provider: 'local',
        logLevel: 'silent',
        consumers: { terminal: false },
        agent: { systemPrompt: 'Be brief.' },
        providers: {
          local: { baseUrl: emu.baseUrl, model: 'scripted', retryBaseMs: 1, maxRetries: 3, requestTimeoutMs: REQUEST_TIMEOUT_MS, idleTimeoutMs: 2_000 },
        },
      },
      tools: FM_TOOLS,
      consumers: [rec],
    });
    const o = await observe(rx, rec);
    const completions = emu.requests
      .filter((r) => r.completion !== undefined)
      .map((r) => ({ messages: (r.body as { messages?: unknown[] } | undefined)?.messages ?? [] }));
    return { ...o, completions };
  } finally {
    await emu.close();
  }
}

describe('fault matrix: Local provider through the OpenAI-compatible emulator', () => {
  it('should give the fault-free SessionResult, gap-free seq, one terminal and one execution per tool use under any transient model-call faults', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ([script, turnFaults]) => {
        const clean = await run(script, faultPlan(script, turnFaults, true));
        const faulted = await run(script, faultPlan(script, turnFaults));
        const ids = allToolUseIds(script, PREFIX);

        expect(scrub(comparable(faulted.result))).toEqual(scrub(comparable(clean.result)));
        expect(faulted.result).toMatchObject({ terminal: 'end_turn', turns: script.turns.length, text: script.turns.at(-1)!.text });
        expect(faulted.rec.text).toBe(clean.rec.text);
        expect(scrub(contentEvents(faulted.rec))).toEqual(scrub(contentEvents(clean.rec)));
        expectStreamInvariants(clean, ids);
        expectStreamInvariants(faulted, ids);
        // Every model call carried a non-empty message list; the failed ones were repeated verbatim.
        const expectedCalls = script.turns.length + turnFaults.slice(0, script.turns.length).reduce((n, f) => n + f.before.length, 0);
        expect(faulted.completions).toHaveLength(expectedCalls);
        for (const c of faulted.completions) expect(c.messages.length).toBeGreaterThan(0);
      }),
      { seed: FC_SEED, numRuns: fcRuns(20) },
    );
  });
});
