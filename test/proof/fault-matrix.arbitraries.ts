import fc from 'fast-check';
import type { AgentRx } from '../../src/agentrx.js';
import { injectable } from '../../src/core/util/inversify.js';
import type { AgUiEvent } from '../../src/core/events/agui-event.js';
import type { SessionEvent } from '../../src/core/events/session-event.js';
import type { SessionResult } from '../../src/core/model.js';
import type { ToolContext, ToolHandler } from '../../src/core/plugin/tool-handler.js';
import { RecordingConsumer } from '../../src/testing/recording-consumer.js';
import { AddInput, EchoInput } from '../fakes/fake-tools.js';

/**
 * Shared pieces of the fault matrix (issue 7, point 1): a provider-neutral scripted session, its
 * fast-check arbitrary, deterministic tools that count executions per tool-use id, and the
 * invariant checks every provider's property runs on a faulted run against its fault-free twin.
 */

// ── settings ─────────────────────────────────────────────────────────────────────────────────

/** `FC_SEED` (integer) or a fixed default, so every run is reproducible. */
export const FC_SEED = envInt('FC_SEED', 20_261_130);
/** `FC_RUNS` or `fallback`. */
export function fcRuns(fallback: number): number {
  return envInt('FC_RUNS', fallback);
}

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new Error(`${name} must be an integer; got ${JSON.stringify(raw)}`);
  return n;
}

// ── the scripted session (plain data: fast-check prints it readably) ──────────────────────────

/** One local tool call of a turn: `echo` (text → upper case) or `add` (a + b). */
export type FmToolCall = { readonly tool: 'echo'; readonly text: string } | { readonly tool: 'add'; readonly a: number; readonly b: number };

/** One model turn: text, then 0–2 parallel tool calls, with a fixed usage. */
export interface FmTurn {
  readonly text: string;
  readonly tools: readonly FmToolCall[];
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** 1–3 turns; every turn but the last asks for 1–2 tools, the last answers with text only. */
export interface FmScript {
  readonly turns: readonly FmTurn[];
}

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'done.', 'ok', 'the', 'sum'] as const;

const textArb = (minWords: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(...WORDS), { minLength: minWords, maxLength: 4 }).map((w) => w.join(' '));

const toolCallArb: fc.Arbitrary<FmToolCall> = fc.oneof(
  fc.record({ tool: fc.constant('echo' as const), text: fc.constantFrom('x', 'hi there', 'abc') }),
  fc.record({ tool: fc.constant('add' as const), a: fc.integer({ min: 0, max: 9 }), b: fc.integer({ min: 0, max: 9 }) }),
);

const turnArb = (tools: { min: number; max: number }, minWords: number): fc.Arbitrary<FmTurn> =>
  fc.record({
    text: textArb(minWords),
    tools: fc.array(toolCallArb, { minLength: tools.min, maxLength: tools.max }),
    inputTokens: fc.integer({ min: 1, max: 50 }),
    outputTokens: fc.integer({ min: 1, max: 20 }),
  });

/**
 * 0–2 tool turns (1–2 parallel calls each), then a final text turn: 1–3 turns in all. Every call's
 * arguments are made distinct (the Local provider's loop guard answers a repeated identical call
 * in history without running it again — by design, not a fault-matrix subject).
 */
export const scriptArb: fc.Arbitrary<FmScript> = fc
  .tuple(fc.array(turnArb({ min: 1, max: 2 }, 0), { minLength: 0, maxLength: 2 }), turnArb({ min: 0, max: 0 }, 1))
  .map(([toolTurns, last]) => {
    let n = 0;
    const distinct = (c: FmToolCall): FmToolCall => {
      const k = n++;
      return c.tool === 'echo' ? { tool: 'echo', text: `${c.text} ${k}` } : { tool: 'add', a: c.a + 10 * k, b: c.b };
    };
    return { turns: [...toolTurns.map((t) => ({ ...t, tools: t.tools.map(distinct) })), last] };
  });

/** Deterministic tool-use id of call `i` of turn `t`, with the provider's id prefix. */
export function toolUseId(prefix: string, t: number, i: number): string {
  return `${prefix}t${t}_${i}`;
}

/** Every tool-use id of a script, in call order. */
export function allToolUseIds(script: FmScript, prefix: string): string[] {
  return script.turns.flatMap((turn, t) => turn.tools.map((_, i) => toolUseId(prefix, t, i)));
}

/** The tool input a call sends. */
export function toolInput(call: FmToolCall): Record<string, unknown> {
  return call.tool === 'echo' ? { text: call.text } : { a: call.a, b: call.b };
}

// ── deterministic tools that count executions per tool-use id ─────────────────────────────────

/** Executions per tool-use id, over both tools, since the last `resetFmTools()`. */
export const executions = new Map<string, number>();

export function resetFmTools(): void {
  executions.clear();
}

function count(ctx: ToolContext): void {
  executions.set(ctx.toolUseId, (executions.get(ctx.toolUseId) ?? 0) + 1);
}

@injectable()
export class FmEchoTool implements ToolHandler<EchoInput> {
  readonly name = 'echo';
  readonly description = 'Echoes text back in upper case.';
  readonly inputType = EchoInput;
  handle(input: EchoInput, ctx: ToolContext): string {
    count(ctx);
    return input.text.toUpperCase();
  }
}

@injectable()
export class FmAddTool implements ToolHandler<AddInput> {
  readonly name = 'add';
  readonly description = 'Adds two integers.';
  readonly inputType = AddInput;
  handle(input: AddInput, ctx: ToolContext): { sum: number } {
    count(ctx);
    return { sum: input.a + input.b };
  }
}

export const FM_TOOLS = [FmEchoTool, FmAddTool];

// ── one observed run ──────────────────────────────────────────────────────────────────────────

export interface Observed {
  readonly result: SessionResult;
  readonly envs: SessionEvent[];
  readonly rec: RecordingConsumer;
  /** Tool executions per tool-use id during this run. */
  readonly executions: ReadonlyMap<string, number>;
}

/**
 * Runs one live session to its first result with `rx` (whose consumers include `rec`), collecting
 * every `events$` envelope, then closes it and stops `rx`. Tool counters are reset first.
 */
export async function observe(rx: AgentRx, rec: RecordingConsumer, prompt = 'go'): Promise<Observed> {
  resetFmTools();
  try {
    const s = rx.start({ prompt });
    const envs: SessionEvent[] = [];
    s.events$.subscribe((e) => envs.push(e));
    try {
      const result = await s.result;
      return { result, envs, rec, executions: new Map(executions) };
    } finally {
      s.close();
      await s.closed;
    }
  } finally {
    await rx.stop();
  }
}

// ── invariants ────────────────────────────────────────────────────────────────────────────────

/** The SessionResult without what legitimately differs between two runs (a random session id). */
export function comparable(result: SessionResult, opts: { keepSessionId?: boolean } = {}): Record<string, unknown> {
  const { sessionId, ...rest } = result;
  return opts.keepSessionId ? { sessionId, ...rest } : rest;
}

/** What a consumer shows: text and tool-call events (ids and content), in order. */
export function contentEvents(rec: RecordingConsumer): string[] {
  return rec.events
    .filter((e) => e.type.startsWith('TEXT_MESSAGE') || e.type.startsWith('TOOL_CALL'))
    .map((e) => JSON.stringify(e, (k, v: unknown) => (k === 'timestamp' || k === 'rawEvent' ? undefined : v)));
}

function isTerminal(e: AgUiEvent): boolean {
  return e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR';
}

/**
 * The invariants every faulted run must keep, whatever the provider:
 * - `events$` envelopes: `seq` is 1, 2, 3… (strictly increasing, no gap) and no provider event id twice;
 * - the RecordingConsumer's `ctx.seq`: strictly increasing by one, starting at 0 or 1;
 * - exactly one terminal AG-UI event (RUN_FINISHED or RUN_ERROR), and it is RUN_FINISHED;
 * - every scripted tool use executed exactly once, and nothing else executed.
 */
export function expectStreamInvariants(o: Observed, expectedToolUseIds: readonly string[]): void {
  const seqs = o.envs.map((e) => e.seq);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  const ids = o.envs.flatMap((e) => (e.source === 'provider' && e.id !== undefined ? [e.id] : []));
  expect(duplicates(ids)).toEqual([]);

  const ctxSeqs = o.rec.contexts.map((c) => c.seq);
  expect(ctxSeqs.length).toBeGreaterThan(0);
  expect(ctxSeqs[0]).toBeLessThanOrEqual(1);
  expect(ctxSeqs).toEqual(ctxSeqs.map((_, i) => ctxSeqs[0]! + i));

  expect(o.rec.events.filter(isTerminal).map((e) => e.type)).toEqual(['RUN_FINISHED']);
  expect(o.rec.starts).toBe(1);
  expect(o.rec.stops).toHaveLength(1);

  const expectedCounts = Object.fromEntries(expectedToolUseIds.map((id) => [id, 1]));
  expect(Object.fromEntries(o.executions)).toEqual(expectedCounts);
}

function duplicates(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  const dup: string[] = [];
  for (const id of ids) {
    if (seen.has(id)) dup.push(id);
    seen.add(id);
  }
  return dup;
}
