/**
 * Memory of a long session in a fresh process (`node --expose-gc memory-child.js <turns> <perTurn>`):
 * a ScriptedProvider (request/response) scripted with `turns` turns of `perTurn` text events each
 * (every turn but the last ends in a tool use), run with `retainEvents: false`. A consumer takes
 * heap after GC inside the live session after turn 10 and after the last turn, after a 20-turn
 * warm-up session in its own AgentRx (so JIT-compiled code is not counted as growth). The provider's own
 * test-only host history (it keeps a reference to every event it emitted) is cleared before each
 * sample, so only agentrx's state is measured; the script itself is allocated before the first sample.
 */
import 'reflect-metadata';
import { AgentRx, type AgUiEvent, type EventConsumer } from 'agentrx';
import { ScriptedProvider, ev, type ScriptedTurn } from 'agentrx/testing';
import { EchoTool } from './runners/agentrx-dto-tools.js';
import { memAfterGc } from './shared.js';

const [turnsArg, perTurnArg, padArg] = process.argv.slice(2);
/** Extra characters appended to every event id (to check how growth scales with id length). */
const PAD = 'x'.repeat(Number(padArg ?? 0));
const TURNS = Number(turnsArg ?? 100);
const PER_TURN = Number(perTurnArg ?? 1000);
const EARLY = 10 * PER_TURN;
const TOTAL = TURNS * PER_TURN;

function script(prefix: string, count: number): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let t = 0; t < count; t++) {
    const events = [];
    for (let i = 0; i < PER_TURN; i++) events.push(ev.text(`${prefix}${t}-${i}${PAD}`, 'tok '));
    if (t < count - 1) events.push(ev.toolUse(`${prefix}u${t}`, 'echo', { text: 'x' }), ev.idle(`${prefix}i${t}`, 'requires_action'));
    else events.push(ev.idle(`${prefix}i${t}`, 'end_turn'));
    turns.push({ events });
  }
  return turns;
}
const provider = new ScriptedProvider({ id: 'scripted', mode: 'request_response', turns: script('t', TURNS) });

class Sampler implements EventConsumer {
  readonly id = 'sampler';
  deltas = 0;
  early = 0;
  late = 0;
  /** Heap after GC at 100,000 events when the session is longer than that. */
  mid = 0;
  onEvent(e: AgUiEvent): void {
    if (e.type !== 'TEXT_MESSAGE_CONTENT') return;
    this.deltas++;
    if (this.deltas === 100_000 && TOTAL > 100_000) {
      provider.history.length = 0;
      this.mid = memAfterGc().heapUsed;
    }
    if (this.deltas === EARLY || this.deltas === TOTAL) {
      provider.history.length = 0;
      const heap = memAfterGc().heapUsed;
      if (this.deltas === EARLY) this.early = heap;
      else this.late = heap;
    }
  }
}
const config = {
  provider: 'scripted',
  retainEvents: false,
  consumers: { terminal: false, queueLimit: 4 * PER_TURN },
  limits: { maxTurns: Math.min(1000, TURNS + 10) },
};

// Warm-up: a 20-turn session in its own AgentRx, so the code the measured session runs is already
// compiled (V8's optimized code lives in the heap too, and is not per-event state).
const warm = await AgentRx.create({
  config,
  providers: [new ScriptedProvider({ id: 'scripted', mode: 'request_response', turns: script('w', 20) })],
  tools: [EchoTool],
});
await warm.run({ prompt: 'go' });
await warm.stop();

const sampler = new Sampler();
const rx = await AgentRx.create({ config, providers: [provider], tools: [EchoTool], consumers: [sampler] });
const before = memAfterGc().heapUsed;
const t0 = performance.now();
const result = await rx.run({ prompt: 'go' });
const ms = performance.now() - t0;
provider.history.length = 0;
const after = memAfterGc().heapUsed;
process.stdout.write(
  JSON.stringify({
    turns: result.turns,
    terminal: result.terminal,
    deltas: sampler.deltas,
    events: result.events?.length ?? 0,
    before,
    early: sampler.early,
    mid: sampler.mid,
    late: sampler.late,
    after,
    ms,
  }) + '\n',
);
await rx.stop();
