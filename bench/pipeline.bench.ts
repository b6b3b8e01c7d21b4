/**
 * Pipeline throughput: provider events through the Session's own Ingestion (dedupe → text-delta
 * extraction → envelope stamping, with its bounded request history) → turn grouping → AG-UI
 * translation → 3 consumers, against a hand-written loop doing the same work in the same process.
 * Target: ≥ 1,000,000 events/s and ≤ 3× the hand loop.
 */
import 'reflect-metadata';
import { Subject, filter, map, share } from 'rxjs';
import type { AgUiEvent } from '../src/core/events/agui-event.js';
import { dedupeById, extractTextDeltas, groupTurns } from '../src/core/events/operators/index.js';
import { withAgUi } from '../src/core/events/translated-event.js';
import type { EventDraft, ProviderEnvelope, SessionEvent } from '../src/core/events/session-event.js';
import { defaultEventId } from '../src/core/plugin/agent-provider.js';
import { NO_HOST_EVENTS } from '../src/core/plugin/host-event.js';
import { Ingestion } from '../src/core/session/ingestion.js';
import { LimitsConfig } from '../src/core/config/agentrx.config.js';
import { ConsumerHub } from '../src/core/session/consumer-hub.js';
import type { RawEvent } from '../src/core/model.js';
import type { EventConsumer } from '../src/core/plugin/event-consumer.js';
import { loadavg } from 'node:os';
import { environmentRows, median, report, type BenchResult } from './harness.js';

const N = Number(process.env['BENCH_N'] ?? 1_000_000);
const TURN = 50;
/** The dedupe window a Session uses by default (`limits.dedupeWindow`). */
const WINDOW = new LimitsConfig().dedupeWindow;

/** N provider events: text with ids, a boundary every TURN events, 1% re-delivered duplicates. */
function workload(): RawEvent[] {
  const out: RawEvent[] = [];
  for (let i = 0; out.length < N; i++) {
    const ev = i % TURN === TURN - 1 ? { type: 'idle', id: `e${i}` } : { type: 'text', id: `e${i}`, text: 'tok ' };
    out.push(ev);
    if (i % 100 === 7) out.push(ev);
  }
  return out.slice(0, N);
}

const textDelta = (e: RawEvent) =>
  e['type'] === 'text' ? { text: e['text'] as string, messageId: `m${Math.floor(Number(String(e['id']).slice(1)) / TURN)}` } : undefined;
const isBoundary = (e: ProviderEnvelope) => e.raw['type'] === 'idle';

class Counter implements EventConsumer {
  count = 0;
  chars = 0;
  constructor(readonly id: string) {}
  onEvent(ev: AgUiEvent): void {
    this.count++;
    if (ev.type === 'TEXT_MESSAGE_CONTENT') this.chars += ev.delta.length;
  }
}

/**
 * The operator chain alone, as this bench measured it before the Session was split (runs A–G):
 * stamping is a `map` inside the pipe and the bus a `share()`, with no request history and a
 * constant `at`. Kept so results stay comparable across runs; the Session's real path is
 * `viaIngestion`.
 */
async function viaOperators(events: RawEvent[]): Promise<{ ms: number; delivered: number }> {
  const drafts = new Subject<EventDraft>();
  const consumers = [new Counter('a'), new Counter('b'), new Counter('c')];
  const hub = new ConsumerHub(consumers, { handlerTimeoutMs: 5_000, queueLimit: N * 4, stopTimeoutMs: 60_000 }, new Subject());
  let seq = 0;
  let turns = 0;
  const stamp = (d: EventDraft): SessionEvent => {
    if (d.source === 'agentrx') return { seq: ++seq, sessionId: 's', turn: 1, provider: 'bench', source: 'agentrx', raw: d.raw, at: 0 };
    return d.id !== undefined
      ? { seq: ++seq, sessionId: 's', turn: 1, provider: 'bench', source: 'provider', id: d.id, raw: d.raw, at: 0 }
      : { seq: ++seq, sessionId: 's', turn: 1, provider: 'bench', source: 'provider', raw: d.raw, at: 0 };
  };
  const bus = drafts.pipe(
    dedupeById((d: EventDraft) => (d.source === 'provider' ? d.id : undefined), { window: WINDOW }),
    extractTextDeltas(textDelta),
    map(stamp),
    share(),
  );
  const turnsSub = bus
    .pipe(
      filter((e): e is ProviderEnvelope => e.source === 'provider'),
      groupTurns(isBoundary),
    )
    .subscribe(() => turns++);
  const attachment = hub.attach(bus.pipe(withAgUi()), () => 's');
  const t0 = performance.now();
  drafts.next({ source: 'agentrx', raw: { type: 'agentrx.run_started', runId: 'r', threadId: 't', resumed: false }, turn: 0 });
  for (const raw of events) drafts.next({ source: 'provider', id: raw['id'] as string, raw, turn: 1 });
  drafts.next({
    source: 'agentrx',
    raw: {
      type: 'agentrx.run_finished',
      runId: 'r',
      threadId: 't',
      terminal: 'end_turn',
      stopReason: 'end_turn',
      turns,
      usage: { inputTokens: 0, outputTokens: 0 },
    },
    turn: 1,
  });
  await attachment.close('completed');
  const ms = performance.now() - t0;
  turnsSub.unsubscribe();
  return { ms, delivered: consumers[0]!.count };
}

/**
 * The Session's real path: its Ingestion (dedupe → deltas → seq stamped with the time, into a
 * Subject, keeping the bounded request history), turn grouping, and `agui$` (toAgUi + share) into
 * the consumer lanes.
 */
async function viaIngestion(events: RawEvent[]): Promise<{ ms: number; delivered: number }> {
  const ingestion = new Ingestion({
    providerId: 'bench',
    eventId: defaultEventId,
    decode: (e) => {
      // As a provider decodes: one literal per event, the shared empty array for an event that says nothing.
      const d = textDelta(e);
      return d ? [{ kind: 'text', text: d.text, messageId: d.messageId }] : NO_HOST_EVENTS;
    },
    dedupeWindow: WINDOW,
    retainEvents: false,
  });
  const consumers = [new Counter('a'), new Counter('b'), new Counter('c')];
  const hub = new ConsumerHub(consumers, { handlerTimeoutMs: 5_000, queueLimit: N * 4, stopTimeoutMs: 60_000 }, new Subject());
  let turns = 0;
  const turnsSub = ingestion.events$
    .pipe(
      filter((e): e is ProviderEnvelope => e.source === 'provider'),
      groupTurns(isBoundary),
    )
    .subscribe(() => turns++);
  const attachment = hub.attach(ingestion.events$.pipe(withAgUi(), share()), () => 's');
  const t0 = performance.now();
  ingestion.emit({ type: 'agentrx.run_started', runId: 'r', threadId: 't', resumed: false });
  for (const raw of events) ingestion.ingest(raw);
  ingestion.emit({
    type: 'agentrx.run_finished',
    runId: 'r',
    threadId: 't',
    terminal: 'end_turn',
    stopReason: 'end_turn',
    turns,
    usage: { inputTokens: 0, outputTokens: 0 },
  });
  await attachment.close('completed');
  const ms = performance.now() - t0;
  turnsSub.unsubscribe();
  return { ms, delivered: consumers[0]!.count };
}

/** The same work written as one loop with no RxJS and no queues. */
function viaHandLoop(events: RawEvent[]): { ms: number; delivered: number } {
  const consumers = [new Counter('a'), new Counter('b'), new Counter('c')];
  const deliver = (ev: AgUiEvent): void => {
    for (const c of consumers) c.onEvent(ev);
  };
  const t0 = performance.now();
  // The same bounded dedupe as the operator: two generations of at most WINDOW ids each.
  let seen = new Set<string>();
  let older = new Set<string>();
  let seq = 0;
  let turn: ProviderEnvelope[] = [];
  let turns = 0;
  const open = new Set<string>();
  deliver({ type: 'RUN_STARTED', threadId: 't', runId: 'r', timestamp: 0 });
  for (const raw of events) {
    const id = raw['id'] as string;
    if (seen.has(id) || older.has(id)) continue;
    if (seen.size >= WINDOW) {
      older = seen;
      seen = new Set();
    }
    seen.add(id);
    const env: ProviderEnvelope = { seq: ++seq, sessionId: 's', turn: 1, provider: 'bench', source: 'provider', id, raw, at: 0 };
    turn.push(env);
    const d = textDelta(raw);
    if (d) {
      seq++;
      if (!open.has(d.messageId)) {
        open.add(d.messageId);
        deliver({ type: 'TEXT_MESSAGE_START', messageId: d.messageId, role: 'assistant', timestamp: 0 });
      }
      deliver({ type: 'TEXT_MESSAGE_CONTENT', messageId: d.messageId, delta: d.text, timestamp: 0 });
    }
    if (isBoundary(env)) {
      turns++;
      turn = [];
    }
  }
  for (const m of open) deliver({ type: 'TEXT_MESSAGE_END', messageId: m, timestamp: 0 });
  deliver({ type: 'RUN_FINISHED', threadId: 't', runId: 'r', result: { turns }, timestamp: 0 });
  return { ms: performance.now() - t0, delivered: consumers[0]!.count };
}

/**
 * Which path the bench measures: `ingestion` (default, the Session's real path) or `operators`
 * (`BENCH_PIPELINE=operators`, the historical measure of runs A–G). One per process: running both
 * in one process makes the shared operators polymorphic and slows both.
 */
const PATH = process.env['BENCH_PIPELINE'] === 'operators' ? 'operators' : 'ingestion';

export async function pipelineBench(rounds = 5): Promise<BenchResult> {
  const load0 = loadavg();
  const events = workload();
  const run = PATH === 'operators' ? viaOperators : viaIngestion;
  const pipe: number[] = [];
  const hand: number[] = [];
  let delivered = 0;
  for (let i = 0; i < rounds; i++) {
    const p = await run(events);
    const h = viaHandLoop(events);
    pipe.push(p.ms);
    hand.push(h.ms);
    delivered = p.delivered;
    if (p.delivered !== h.delivered) throw new Error(`pipeline delivered ${p.delivered} AG-UI events, hand loop ${h.delivered}`);
  }
  const pipeMs = median(pipe);
  const handMs = median(hand);
  const eventsPerSec = N / (pipeMs / 1000);
  const ratio = pipeMs / handMs;
  return report('pipeline throughput', [
    ...environmentRows('pipeline', load0),
    [
      'path measured',
      PATH === 'operators'
        ? 'operator chain as in runs A–G (BENCH_PIPELINE=operators)'
        : "the Session's Ingestion (default; BENCH_PIPELINE=operators for the historical operator chain)",
    ],
    ['provider events per round', N.toLocaleString('en-US')],
    ['AG-UI events delivered per consumer', delivered.toLocaleString('en-US')],
    ['agentrx pipeline (median of ' + rounds + ')', `${pipeMs.toFixed(0)} ms → ${Math.round(eventsPerSec).toLocaleString('en-US')} events/s`],
    ['hand-written loop (median)', `${handMs.toFixed(0)} ms → ${Math.round(N / (handMs / 1000)).toLocaleString('en-US')} events/s`],
    ['ratio pipeline / hand loop', ratio.toFixed(2) + '×'],
    ['target ≥ 1,000,000 events/s', eventsPerSec >= 1_000_000 ? 'met' : 'MISSED'],
    ['target ≤ 3× hand loop (runs A–F)', ratio <= 3 ? 'met' : 'MISSED'],
    ['target ≤ 2× hand loop (issue 17)', ratio <= 2 ? 'met' : 'MISSED'],
  ]);
}
