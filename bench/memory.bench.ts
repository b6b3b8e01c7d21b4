/**
 * Memory of a 100,000-event session with raw-event retention off (`retainEvents: false`), in a
 * fresh process with --expose-gc: heap after GC sampled inside the live session after 10,000 and
 * after 100,000 text events, and before/after the whole run. Target: growth < 1 KB per 1,000 events.
 */
import { loadavg } from 'node:os';
import { environmentRows, report, type BenchResult } from './harness.js';
import { runChild } from './peers/shared.js';

const TURNS = 100;
const PER_TURN = 1000;

export async function memoryBench(): Promise<BenchResult> {
  const load0 = loadavg();
  const r = await runChild<{
    turns: number;
    terminal: string;
    deltas: number;
    events: number;
    before: number;
    early: number;
    late: number;
    after: number;
    ms: number;
  }>('./memory-child.js', [String(TURNS), String(PER_TURN)]);
  const total = TURNS * PER_TURN;
  const inSession = (r.late - r.early) / ((total - 10 * PER_TURN) / 1000);
  const whole = (r.after - r.before) / (total / 1000);
  const b = (x: number): string => `${x.toFixed(0)} B`;
  return report('memory: 100,000-event session, retainEvents off', [
    ...environmentRows('memory', load0),
    [
      'session',
      `ScriptedProvider (request/response): ${TURNS} turns × ${PER_TURN} text events (+ a tool use and a boundary per turn); ${r.deltas.toLocaleString('en-US')} text deltas reached the consumer, ${r.turns} turns, terminal ${r.terminal}, SessionResult.events length ${r.events}; ${(r.ms / 1000).toFixed(1)} s`,
    ],
    [
      'heap after GC: before run / after 10k events / after 100k events / after run',
      `${(r.before / 2 ** 20).toFixed(2)} MB / ${(r.early / 2 ** 20).toFixed(2)} MB / ${(r.late / 2 ** 20).toFixed(2)} MB / ${(r.after / 2 ** 20).toFixed(2)} MB`,
    ],
    ['growth inside the live session (10k → 100k) per 1,000 events', b(inSession)],
    ['growth over the whole run (before → after) per 1,000 events', b(whole)],
    ['target < 1 KB per 1,000 events (in-session)', inSession < 1024 ? 'met' : 'MISSED'],
  ]);
}
