import fc from 'fast-check';
import { AgentRx } from '../../src/agentrx.js';
import { agentCoreProviderModule } from '../../src/plugins/providers/bedrock-agentcore/agentcore.module.js';
import {
  startAgentCoreEmulator,
  type AgentCoreEmulator,
  type AgentCoreFault,
  type AgentCoreFaultPlan,
  type AgentCoreScriptedTurn,
} from '../../src/testing/agentcore-emulator.js';
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
 * Fault matrix, Bedrock AgentCore provider (issue 7, point 1): generated scripted sessions ×
 * generated fault plans on the AgentCore emulator. A whole invoke is retried after HTTP 5xx/429
 * (throttling included), a truncated stream (clean end without `messageStop`, or half a frame and
 * a destroyed socket) and a stall caught by a small idle timeout; those faults are generated, each
 * on an invoke right before the one that completes a turn (a faulted invoke commits nothing).
 */

const PREFIX = 'tooluse_';
const CREDS = { accessKeyId: 'AKIDFAULTMATRIX01', secretAccessKey: 'fault-matrix-secret-DO-NOT-LEAK' } as const;
const REGION = 'eu-west-1';
const HARNESS_ARN = 'arn:aws:bedrock-agentcore:eu-west-1:123456789012:harness/fault-matrix';
/**
 * The provider's `idleTimeoutMs`. Its timer only ever fires during an emulated stall (see
 * {@link stallDrivenIdleTimers}), so this is how long a stall lasts, not a bound on the machine.
 * An odd value, which no other timer of a run uses: the shim recognizes the idle timer by it.
 */
const IDLE_MS = 137;
/** A guard against a hung run (the property fails instead of jest timing out), never reached by a passing run. */
const RUN_TIMEOUT_MS = 60_000;

const agentCoreFaultArb: fc.Arbitrary<AgentCoreFault> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('status' as const), status: fc.constantFrom(500, 502, 503, 504, 429) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('throttle' as const) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('truncate' as const), afterFrames: fc.integer({ min: 0, max: 14 }), midFrame: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stall' as const), afterFrames: fc.integer({ min: 0, max: 14 }), midFrame: fc.boolean() }) },
);

/** Per model turn: the failed invokes before the one that completes it, plus wire shape options. */
interface AgentCoreTurnFaults {
  readonly before: readonly AgentCoreFault[];
  readonly interleave: boolean;
  readonly pieces: number;
}

const turnFaultsArb: fc.Arbitrary<AgentCoreTurnFaults> = fc.record({
  before: fc.array(agentCoreFaultArb, { minLength: 0, maxLength: 2 }),
  interleave: fc.boolean(),
  pieces: fc.integer({ min: 1, max: 4 }),
});

/*
 * Both once excluded as bugs, now covered: a retried invoke shows consumers only text they have not
 * seen (FC_SEED=20261130: "alphaalpha" after a stall after frame 2), and a cut inside the very first
 * frame (SDK "Deserialization error … aborted") is retried as a truncation.
 */
const caseArb = fc.tuple(scriptArb, fc.array(turnFaultsArb, { minLength: 3, maxLength: 3 }), fc.constantFrom(0, 7, 23));

function emulatorScript(script: FmScript, shapes: readonly AgentCoreTurnFaults[]): AgentCoreScriptedTurn[] {
  return script.turns.map((turn, t) => ({
    ...(turn.text !== '' ? { text: turn.text } : {}),
    ...(turn.tools.length > 0
      ? {
          toolUses: turn.tools.map((c, i) => ({ id: toolUseId(PREFIX, t, i), name: c.tool, input: toolInput(c), pieces: shapes[t]!.pieces })),
          interleave: shapes[t]!.interleave,
        }
      : {}),
    usage: { inputTokens: turn.inputTokens, outputTokens: turn.outputTokens },
  }));
}

/**
 * Invoke index → faults: each turn's failed invokes, then its completing one. `frames[t]` is the
 * frame count of turn t's answer (from the fault-free run): a break point is kept before its
 * `messageStop` (the last two frames are `messageStop`, `metadata`), as the emulator's `truncate`
 * contract says ("ends without messageStop"). A cut between `messageStop` and `metadata` is another
 * fault — the client sees a complete message, the emulator commits nothing — and is not generated.
 */
function faultPlan(script: FmScript, faults: readonly AgentCoreTurnFaults[], frames: readonly number[]): AgentCoreFaultPlan {
  const plan: Record<number, AgentCoreFault> = {};
  let invoke = 0;
  const beforeStop = (f: AgentCoreFault, t: number): AgentCoreFault =>
    (f.kind === 'truncate' || f.kind === 'stall') && f.afterFrames > frames[t]! - 2 ? { ...f, afterFrames: Math.max(0, frames[t]! - 2) } : f;
  script.turns.forEach((_, t) => {
    for (const fault of faults[t]!.before) plan[invoke++] = beforeStop(fault, t);
    invoke++;
  });
  return plan;
}

/**
 * SessionResult.events keeps, by design, each failed attempt's partial frames followed by an
 * `agentcore.attempt_failed` marker (the provider's normalizer counts only what follows the last
 * marker). Compare the events of the attempts that completed: drop each marker and everything of
 * its attempt (since the previous completed invoke's `metadata` or the previous marker).
 */
function completedAttemptsOnly(result: Record<string, unknown>): Record<string, unknown> {
  const kept: unknown[] = [];
  let attemptStart = 0;
  for (const e of result['events'] as Record<string, unknown>[]) {
    if (e['type'] === 'agentcore.attempt_failed') {
      kept.length = attemptStart;
      continue;
    }
    kept.push(e);
    if ('metadata' in e) attemptStart = kept.length;
  }
  return { ...result, events: kept };
}

interface AgentCoreObserved extends Observed {
  readonly invokeMessages: number[];
  /** Frames of each completed invoke, in order. */
  readonly frames: number[];
}

/** The emulator of the run in progress (runs are sequential): where the idle timers look for a stall. */
let current: AgentCoreEmulator | undefined;
/** Per invoke of `current`: the stalls an idle timer already fired for. */
const firedFor = new Map<number, number>();

/**
 * The provider's idle timer (`setTimeout(…, idleTimeoutMs)`, re-armed on every frame) fires only
 * while an invoke of the emulator is in a stall it has not fired for yet; at the deadline with no
 * such stall it waits another `IDLE_MS` (`refresh`). A stall (the only fault with no frame and no
 * end) is caught exactly as with a plain timer, after `IDLE_MS` of silence; what goes is the
 * machine's speed: with a plain 150 ms timer, a loaded machine (an event loop held up by GC, the
 * SDK's first import, other processes) fired it on healthy invokes too — an extra attempt the
 * fault-free twin does not have, or an invoke index that no longer matches the fault plan. Each
 * stall is fired for once: the client gives that invoke up, and its close may reach the
 * emulator after the next attempt's timer started. Other timers are untouched.
 */
function stallDrivenIdleTimers(): () => void {
  const real = globalThis.setTimeout;
  const stalledNow = (): boolean => {
    for (const r of current?.invokes() ?? []) {
      const fired = firedFor.get(r.invoke!) ?? 0;
      if (r.stalls > fired && !r.finished && !r.closed) {
        firedFor.set(r.invoke!, fired + 1);
        return true;
      }
    }
    return false;
  };
  const shim = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): NodeJS.Timeout => {
    if (ms !== IDLE_MS) return real(callback, ms, ...args);
    const timer: NodeJS.Timeout = real(() => {
      if (stalledNow()) callback(...args);
      else timer.refresh();
    }, ms);
    return timer;
  };
  globalThis.setTimeout = Object.assign(shim, real) as typeof setTimeout;
  return () => void (globalThis.setTimeout = real);
}

async function run(script: FmScript, shapes: readonly AgentCoreTurnFaults[], faults: AgentCoreFaultPlan, chunkBytes: number): Promise<AgentCoreObserved> {
  const emu = await startAgentCoreEmulator({ credentials: CREDS, script: emulatorScript(script, shapes), faults, ...(chunkBytes > 0 ? { chunkBytes } : {}) });
  current = emu;
  firedFor.clear();
  try {
    const rec = new RecordingConsumer();
    const rx = await AgentRx.create({
      modules: [agentCoreProviderModule],
      tools: FM_TOOLS,
      consumers: [rec],
      config: {
        provider: 'bedrock-agentcore',
        logLevel: 'silent',
        consumers: { terminal: false },
        limits: { runTimeoutMs: RUN_TIMEOUT_MS },
        providers: {
          'bedrock-agentcore': {
            endpoint: emu.baseUrl,
            region: REGION,
            accessKeyId: CREDS.accessKeyId,
            secretAccessKey: CREDS.secretAccessKey,
            harnessArn: HARNESS_ARN,
            retryBaseMs: 1,
            maxRetries: 3,
            idleTimeoutMs: IDLE_MS,
          },
        },
      },
    });
    const o = await observe(rx, rec);
    const invokeMessages = emu.invokes().map((r) => ((r.body as { messages?: unknown[] } | undefined)?.messages ?? []).length);
    const frames = emu
      .invokes()
      .filter((r) => r.outcome === 'completed')
      .map((r) => r.framesSent);
    return { ...o, invokeMessages, frames };
  } finally {
    current = undefined;
    await emu.close();
  }
}

describe('fault matrix: Bedrock AgentCore provider through the AgentCore emulator', () => {
  let restoreTimers: (() => void) | undefined;
  beforeAll(() => {
    restoreTimers = stallDrivenIdleTimers();
  });
  afterAll(() => restoreTimers?.());

  it('should give the fault-free SessionResult, gap-free seq, one terminal and one execution per tool use under truncations, stalls and transient HTTP errors', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ([script, turnFaults, chunkBytes]) => {
        const clean = await run(script, turnFaults, {}, chunkBytes);
        expect(clean.frames).toHaveLength(script.turns.length);
        const faulted = await run(script, turnFaults, faultPlan(script, turnFaults, clean.frames), chunkBytes);
        const ids = allToolUseIds(script, PREFIX);

        expect(completedAttemptsOnly(comparable(faulted.result))).toEqual(comparable(clean.result));
        expect(faulted.result).toMatchObject({ terminal: 'end_turn', turns: script.turns.length, text: script.turns.at(-1)!.text });
        expect(faulted.rec.text).toBe(clean.rec.text);
        expect(contentEvents(faulted.rec)).toEqual(contentEvents(clean.rec));
        expectStreamInvariants(clean, ids);
        expectStreamInvariants(faulted, ids);
        // No invoke carries an empty message list.
        for (const n of [...clean.invokeMessages, ...faulted.invokeMessages]) expect(n).toBeGreaterThan(0);
      }),
      { seed: FC_SEED, numRuns: fcRuns(20) },
    );
  }, 180_000);
});
