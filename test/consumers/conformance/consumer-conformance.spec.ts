import { verifyEvents } from '@ag-ui/client';
import { PassThrough } from 'node:stream';
import { from, lastValueFrom, Subject, toArray } from 'rxjs';
import { toWireEvent } from '../../../src/servers/agui-http/agui-http.stream.js';
import { JsonlConsumer } from '../../../src/consumers/jsonl/jsonl.consumer.js';
import { TerminalConsumer } from '../../../src/consumers/terminal/terminal.consumer.js';
import { OtelConsumer } from '../../../src/consumers/otel/otel.consumer.js';
import { memoryTracing } from '../otel/otel-spans.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import { withAgUi } from '../../../src/core/events/translated-event.js';
import type { AgentRxEnvelope, AgentRxEvent, SessionEvent } from '../../../src/core/events/session-event.js';
import { ConsumerHub, type ConsumerError } from '../../../src/core/session/consumer-hub.js';
import type { EventConsumer, StopReason } from '../../../src/core/plugin/event-consumer.js';
import { RecordingConsumer } from '../../../src/testing/recording-consumer.js';
import { ThrowingConsumer } from '../../fakes/fake-consumers.js';

/** Builds a session's envelope stream from synthesized events. */
function envelopes(events: AgentRxEvent[]): SessionEvent[] {
  return events.map((raw, i): AgentRxEnvelope => ({ seq: i + 1, sessionId: 's', turn: 1, provider: 'scripted', source: 'agentrx', raw, at: 1_000 + i }));
}

const usage = { inputTokens: 5, outputTokens: 2 };
const started = (n: number): AgentRxEvent => ({ type: 'agentrx.run_started', runId: `t:run-${n}`, threadId: 't', resumed: false });
const text = (id: string, t: string): AgentRxEvent => ({ type: 'agentrx.text_delta', text: t, messageId: id });
const finished = (n: number): AgentRxEvent => ({
  type: 'agentrx.run_finished',
  runId: `t:run-${n}`,
  threadId: 't',
  terminal: 'end_turn',
  stopReason: 'end_turn',
  turns: 1,
  usage,
});
const failed = (n: number, code = 'http_error'): AgentRxEvent => ({
  type: 'agentrx.run_error',
  runId: `t:run-${n}`,
  threadId: 't',
  code,
  message: `run ${n} failed`,
});
const turnWithTools = (ids: string[]): AgentRxEvent => ({
  type: 'agentrx.turn_end',
  turn: 1,
  terminal: 'requires_action',
  stopReason: 'requires_action',
  usage,
  customToolUses: ids.map((id) => ({ id, name: 'echo', input: { text: id } })),
  serverToolUses: [],
});
const turnWithServerTools = (ids: string[]): AgentRxEvent => ({
  type: 'agentrx.turn_end',
  turn: 1,
  terminal: 'end_turn',
  stopReason: 'end_turn',
  usage,
  customToolUses: [],
  serverToolUses: ids.map((id) => ({ id, name: 'web_search', input: { q: id } })),
});
const hostToolResult = (id: string, isError = false): AgentRxEvent => ({
  type: 'agentrx.host_tool_result',
  toolUse: { id },
  result: { content: `found ${id}`, isError },
});
const toolResult = (id: string): AgentRxEvent => ({
  type: 'agentrx.tool_result',
  toolUse: { id, name: 'echo', input: { text: id } },
  result: { toolUseId: id, content: id.toUpperCase(), isError: false },
  replayed: false,
  durationMs: 3,
});

interface Fixture {
  readonly name: string;
  readonly events: AgentRxEvent[];
  readonly reason: StopReason;
  readonly runs: number;
}

const fixtures: Fixture[] = [
  { name: 'an empty run', events: [started(1), finished(1)], reason: 'completed', runs: 1 },
  { name: 'an error-first run', events: [started(1), failed(1)], reason: 'error', runs: 1 },
  {
    name: 'three runs in one thread with a failed middle run',
    events: [started(1), text('a', 'one'), finished(1), started(2), text('b', 'tw'), failed(2), started(3), text('c', 'three'), finished(3)],
    reason: 'completed',
    runs: 3,
  },
  {
    name: 'parallel tool calls',
    events: [started(1), text('a', 'calling'), turnWithTools(['x', 'y']), toolResult('y'), toolResult('x'), text('b', 'done'), finished(1)],
    reason: 'completed',
    runs: 1,
  },
  {
    name: 'host-run tool results, one held until its call is announced',
    events: [started(1), hostToolResult('h1'), turnWithServerTools(['h1', 'h2']), hostToolResult('h2', true), hostToolResult('h3'), finished(1)],
    reason: 'completed',
    runs: 1,
  },
  { name: 'a mid-stream cancel', events: [started(1), text('a', 'half a sen'), failed(1, 'cancelled')], reason: 'cancelled', runs: 1 },
  { name: 'a stream that ends without a terminal event', events: [started(1), text('a', 'cut off')], reason: 'error', runs: 1 },
];

/** Counts the stops of the consumer under test (its own `stop`, wrapped on the instance: every other hook stays its own). */
function instrument(c: EventConsumer): { consumer: EventConsumer; stops: StopReason[] } {
  const stops: StopReason[] = [];
  const stop = c.stop?.bind(c);
  c.stop = (reason, ctx) => {
    stops.push(reason);
    return stop?.(reason, ctx);
  };
  return { consumer: c, stops };
}

/** A consumer that takes a macrotask per event. */
class SlowConsumer implements EventConsumer {
  readonly id = 'slow';
  readonly seen: string[] = [];
  async onEvent(ev: AgUiEvent): Promise<void> {
    await new Promise((r) => setImmediate(r));
    this.seen.push(ev.type);
  }
}

interface Subject_ {
  readonly make: () => { consumer: EventConsumer; check: (events: AgUiEvent[], fixture: Fixture) => void };
}

const subjects: Record<string, Subject_> = {
  recording: {
    make: () => {
      const c = new RecordingConsumer('under-test');
      return { consumer: c, check: (events) => expect(c.events).toEqual(events) };
    },
  },
  jsonl: {
    make: () => {
      const out = new PassThrough();
      let text = '';
      out.on('data', (b: Buffer) => (text += b.toString()));
      return {
        consumer: new JsonlConsumer(out),
        check: (events) =>
          expect(
            text
              .trim()
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l)),
          ).toEqual(JSON.parse(JSON.stringify(events))),
      };
    },
  },
  otel: {
    make: () => {
      const tracing = memoryTracing();
      return {
        consumer: new OtelConsumer({ tracerProvider: tracing.provider, newTrace: true }),
        check: (events) => {
          const spans = tracing.spans();
          const runs = spans.filter((sp) => sp.name.startsWith('invoke_agent'));
          expect(runs).toHaveLength(events.filter((e) => e.type === 'RUN_STARTED').length);
          expect(new Set(spans.map((sp) => sp.spanContext().traceId)).size).toBe(1);
          expect(spans.every((sp) => sp.ended)).toBe(true);
        },
      };
    },
  },
  terminal: {
    make: () => {
      const out = new PassThrough();
      let text = '';
      out.on('data', (b: Buffer) => (text += b.toString()));
      return {
        consumer: new TerminalConsumer({ out, env: {}, live: false }),
        check: (events) => {
          const terminals = events.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR').length;
          expect((text.match(/^(✓|✗) /gm) ?? []).length).toBe(terminals);
          expect(text.endsWith('\n')).toBe(true);
        },
      };
    },
  },
};

describe.each(Object.keys(subjects))('consumer conformance: %s', (name) => {
  describe.each(fixtures)('when fed $name', (fixture) => {
    it('should get every event in order, stop once, not fault, and leave a valid AG-UI stream beside a throwing and a slow consumer', async () => {
      const { consumer, check } = subjects[name]!.make();
      const { consumer: wrapped, stops } = instrument(consumer);
      const witness = new RecordingConsumer('witness');
      const slow = new SlowConsumer();
      const errors: ConsumerError[] = [];
      const errors$ = new Subject<ConsumerError>();
      errors$.subscribe((e) => errors.push(e));
      const source = new Subject<SessionEvent>();
      // Bounds far above the work (no consumer here hangs): the slow one's macrotask per event took
      // over a second in all on a loaded machine (two CPU hogs), and its drain was cut at 1 s.
      const hub = new ConsumerHub(
        [new ThrowingConsumer(), wrapped, slow, witness],
        { handlerTimeoutMs: 30_000, queueLimit: 1000, stopTimeoutMs: 30_000 },
        errors$,
      );
      const attachment = hub.attach(source.pipe(withAgUi()), () => 's');
      for (const env of envelopes(fixture.events)) source.next(env);
      source.complete();
      await attachment.close(fixture.reason);

      const events = witness.events;
      expect(events.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR')).toHaveLength(fixture.runs);
      await expect(lastValueFrom(from(events.map(toWireEvent)).pipe(verifyEvents(false), toArray()))).resolves.toHaveLength(events.length);
      expect(errors.filter((e) => e.consumerId !== 'throwing')).toEqual([]);
      expect(errors.filter((e) => e.consumerId === 'throwing')).toHaveLength(events.length);
      expect(slow.seen).toEqual(events.map((e) => e.type));
      expect(stops).toEqual([fixture.reason]);
      check(events, fixture);
    });
  });
});
