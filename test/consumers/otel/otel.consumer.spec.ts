import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { OtelConsumer } from '../../../src/consumers/otel/otel.consumer.js';
import type { OtelConsumerOptions } from '../../../src/consumers/otel/otel.config.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import { Container } from '../../../src/core/di/inversify.js';
import { AgentRxConfigToken } from '../../../src/core/config/config-tokens.js';
import { AgentRxConfig } from '../../../src/core/config/agentrx.config.js';
import { EventConsumer } from '../../../src/core/plugin/event-consumer.js';
import { otelConsumerModule } from '../../../src/consumers/otel/otel.module.js';
import { OtelConfig, OtelConfigOptions } from '../../../src/consumers/otel/otel.config.js';
import { CONTENT_KEYS, SpanTree, endMs, isError, memoryTracing, startMs } from './otel-spans.js';

/** Feeds AG-UI events to one consumer as the kernel would, with explicit timestamps. */
class Feed {
  private seq = 0;
  runId = 'run-1';
  constructor(
    readonly consumer: OtelConsumer,
    readonly threadId = 'thread-1',
  ) {}

  start(): this {
    this.consumer.start({ sessionId: this.threadId, threadId: this.threadId });
    return this;
  }

  at(timestamp: number, ...events: AgUiEvent[]): this {
    for (const ev of events) {
      if (ev.type === 'RUN_STARTED') this.runId = ev.runId;
      this.consumer.onEvent({ ...ev, timestamp }, { sessionId: this.threadId, threadId: this.threadId, runId: this.runId, seq: ++this.seq, at: timestamp });
    }
    return this;
  }
}

const T0 = 1_700_000_000_000;
const runStarted = (threadId = 'thread-1', runId = 'run-1'): AgUiEvent => ({ type: 'RUN_STARTED', threadId, runId });
const toolCall = (id: string, name: string, args: string): AgUiEvent[] => [
  { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: name },
  { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: args },
  { type: 'TOOL_CALL_END', toolCallId: id },
];
const snapshot = (turn: number, terminal: string, stopReason: unknown, inputTokens = 10, outputTokens = 5): AgUiEvent => ({ type: 'STATE_SNAPSHOT', snapshot: { turn, terminal, stopReason, usage: { inputTokens, outputTokens } } });
const result = (id: string, content: string, rawEvent?: unknown): AgUiEvent => ({ type: 'TOOL_CALL_RESULT', messageId: `${id}:result`, toolCallId: id, content, role: 'tool', ...(rawEvent !== undefined ? { rawEvent } : {}) });
const finished = (turns: number, inputTokens: number, outputTokens: number, terminal = 'end_turn', threadId = 'thread-1', runId = 'run-1'): AgUiEvent => ({
  type: 'RUN_FINISHED',
  threadId,
  runId,
  result: { terminal, stopReason: 'stop', turns, usage: { inputTokens, outputTokens } },
});
const text = (id: string, delta: string): AgUiEvent[] => [
  { type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta },
];

describe('OtelConsumer', () => {
  let tracing: ReturnType<typeof memoryTracing>;
  const consumer = (opts: OtelConsumerOptions = {}): OtelConsumer => new OtelConsumer({ tracerProvider: tracing.provider, ...opts });
  const tree = (): SpanTree => new SpanTree(tracing.spans());
  beforeEach(() => {
    tracing = memoryTracing();
  });

  describe('.onEvent', () => {
    describe('when a run has a text turn with a tool call, then a final text turn', () => {
      let t: SpanTree;
      beforeEach(() => {
        const c = consumer({ providerId: 'claude-managed-agents', requestModel: 'claude-x' });
        new Feed(c)
          .start()
          .at(T0, runStarted())
          .at(T0 + 100, ...text('m1', 'Let me check.'))
          .at(T0 + 200, { type: 'TEXT_MESSAGE_END', messageId: 'm1' }, ...toolCall('t1', 'lookup', '{"q":"secret query"}'), snapshot(1, 'requires_action', { type: 'requires_action' }, 10, 5))
          .at(T0 + 500, result('t1', 'secret result'))
          .at(T0 + 900, ...text('m2', 'The answer.'))
          .at(T0 + 1000, { type: 'TEXT_MESSAGE_END', messageId: 'm2' }, snapshot(2, 'end_turn', 'end_turn', 20, 7), finished(2, 30, 12));
        c.stop('completed');
        t = tree();
      });

      it('should time each span from the event timestamps', () => {
        const [turn1, turn2] = t.named('agentrx.turn');
        const [chat1, chat2] = t.named('chat');
        expect([startMs(turn1!), endMs(turn1!)]).toEqual([T0, T0 + 500]);
        expect([startMs(chat1!), endMs(chat1!)]).toEqual([T0, T0 + 200]);
        expect([startMs(t.one('execute_tool')), endMs(t.one('execute_tool'))]).toEqual([T0 + 200, T0 + 500]);
        expect([startMs(turn2!), endMs(turn2!)]).toEqual([T0 + 500, T0 + 1000]);
        expect([startMs(chat2!), endMs(chat2!)]).toEqual([T0 + 500, T0 + 1000]);
        expect([startMs(t.one('invoke_agent')), endMs(t.one('invoke_agent'))]).toEqual([T0, T0 + 1000]);
      });

      it('should map the provider id to gen_ai.provider.name and name chat spans after the model', () => {
        expect(t.one('invoke_agent').attributes).toMatchObject({ 'gen_ai.provider.name': 'anthropic', 'agentrx.run.id': 'run-1', 'gen_ai.usage.input_tokens': 30, 'gen_ai.usage.output_tokens': 12 });
        expect(t.one('agentrx.session').attributes).toMatchObject({ 'agentrx.provider': 'claude-managed-agents', 'agentrx.session.id': 'thread-1', 'gen_ai.conversation.id': 'thread-1' });
        expect(t.named('chat').map((s) => [s.name, s.attributes['gen_ai.response.finish_reasons'], s.attributes['gen_ai.usage.input_tokens']])).toEqual([
          ['chat claude-x', ['requires_action'], 10],
          ['chat claude-x', ['end_turn'], 20],
        ]);
      });

      it('should record no content', () => {
        for (const key of CONTENT_KEYS) expect(t.attributeKeys).not.toContain(key);
        expect(t.attributeStrings.join('|')).not.toMatch(/secret|Let me check|The answer/);
      });
    });

    describe('when captureContent is on', () => {
      it('should record output messages, tool arguments and results', () => {
        const c = consumer({ captureContent: true });
        new Feed(c)
          .start()
          .at(T0, runStarted(), ...text('m1', 'Let me check.'))
          .at(T0 + 1, ...toolCall('t1', 'lookup', '{"q":"x"}'), snapshot(1, 'requires_action', 'tool_calls'))
          .at(T0 + 2, result('t1', 'found'), ...text('m2', 'Done.'), snapshot(2, 'end_turn', 'stop'), finished(2, 20, 10));
        c.stop('completed');
        const t = tree();
        const [chat1, chat2] = t.named('chat');
        expect(JSON.parse(chat1!.attributes['gen_ai.output.messages'] as string)).toEqual([
          { role: 'assistant', parts: [{ type: 'text', content: 'Let me check.' }, { type: 'tool_call', id: 't1', name: 'lookup', arguments: { q: 'x' } }], finish_reason: 'tool_calls' },
        ]);
        expect(JSON.parse(chat2!.attributes['gen_ai.output.messages'] as string)).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'Done.' }], finish_reason: 'stop' }]);
        expect(t.one('execute_tool').attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"q":"x"}', 'gen_ai.tool.call.result': 'found' });
      });
    });

    describe('when a result carries the verbatim agentrx.tool_result with isError', () => {
      it('should mark the tool span ERROR tool_error and record its duration', () => {
        const c = consumer();
        const raw = { type: 'agentrx.tool_result', toolUse: { id: 't1', name: 'lookup', input: {} }, result: { toolUseId: 't1', content: 'boom', isError: true }, replayed: false, durationMs: 42 };
        new Feed(c)
          .start()
          .at(T0, runStarted(), ...toolCall('t1', 'lookup', '{}'), snapshot(1, 'requires_action', 'tool_calls'))
          .at(T0 + 50, result('t1', 'boom', raw));
        const tool = tree().one('execute_tool');
        expect(isError(tool)).toBe(true);
        expect(tool.attributes).toMatchObject({ 'error.type': 'tool_error', 'agentrx.tool.duration_ms': 42, 'agentrx.tool.replayed': false });
        expect(isError(tree().one('agentrx.turn'))).toBe(false);
      });
    });

    describe('when a result arrives for a call this run never announced (a redrive)', () => {
      it('should give it its own tool span, back-dated by its duration, under the run', () => {
        const c = consumer();
        const raw = { type: 'agentrx.tool_result', toolUse: { id: 'old', name: 'lookup', input: {} }, result: { toolUseId: 'old', content: 'ok', isError: false }, replayed: true, durationMs: 30 };
        new Feed(c).start().at(T0, runStarted()).at(T0 + 100, result('old', 'ok', raw)).at(T0 + 200, snapshot(1, 'end_turn', 'stop'), finished(1, 1, 1));
        const t = tree();
        const tool = t.one('execute_tool lookup');
        expect([startMs(tool), endMs(tool)]).toEqual([T0 + 70, T0 + 100]);
        expect(tool.parentSpanContext?.spanId).toBe(t.one('invoke_agent').spanContext().spanId);
        expect(tool.attributes['agentrx.tool.replayed']).toBe(true);
        expect(startMs(t.one('agentrx.turn'))).toBe(T0 + 100);
      });
    });

    describe('when an end_turn turn announces a tool call that never gets a result (a host-side tool)', () => {
      it('should end the call with the turn, zero-length and marked result_received false, without error', () => {
        const c = consumer();
        new Feed(c)
          .start()
          .at(T0, runStarted())
          .at(T0 + 10, ...toolCall('s1', 'web_search', '{}'), snapshot(1, 'end_turn', 'end_turn'))
          .at(T0 + 20, finished(1, 10, 5));
        const t = tree();
        const tool = t.one('execute_tool web_search');
        expect(tool.attributes['agentrx.tool.result_received']).toBe(false);
        expect([startMs(tool), endMs(tool)]).toEqual([T0 + 10, T0 + 10]);
        expect(t.spans.some(isError)).toBe(false);
        expect(endMs(t.one('agentrx.turn'))).toBe(T0 + 10);
      });
    });

    describe('when the run fails while tools are pending (max_turns_exceeded)', () => {
      it('should end the pending tool, the turn and the run with status ERROR and the code', () => {
        const c = consumer();
        new Feed(c)
          .start()
          .at(T0, runStarted(), ...toolCall('t1', 'lookup', '{}'), snapshot(1, 'requires_action', 'tool_calls'))
          .at(T0 + 5, { type: 'RUN_ERROR', message: 'the run reached maxTurns (1) without finishing', code: 'max_turns_exceeded' });
        c.stop('limit');
        const t = tree();
        for (const name of ['execute_tool lookup', 'agentrx.turn', 'invoke_agent', 'agentrx.session']) {
          const span = t.one(name);
          expect([name, isError(span), span.attributes['error.type']]).toEqual([name, true, 'max_turns_exceeded']);
        }
        expect(t.one('execute_tool').attributes['agentrx.tool.result_received']).toBe(false);
        expect(isError(t.one('chat'))).toBe(false);
        expect(t.one('invoke_agent').status.message).toBe('the run reached maxTurns (1) without finishing');
        expect(t.one('invoke_agent').attributes['gen_ai.usage.input_tokens']).toBe(10);
      });
    });

    describe('when the run fails between model requests', () => {
      it('should record the failure on a fresh turn whose chat span failed', () => {
        const c = consumer();
        new Feed(c)
          .start()
          .at(T0, runStarted(), ...toolCall('t1', 'lookup', '{}'), snapshot(1, 'requires_action', 'tool_calls'))
          .at(T0 + 10, result('t1', 'ok'))
          .at(T0 + 30, { type: 'RUN_ERROR', message: 'HTTP 500', code: 'http_error' });
        const t = tree();
        const [turn1, turn2] = t.named('agentrx.turn');
        expect(isError(turn1!)).toBe(false);
        expect([isError(turn2!), startMs(turn2!), endMs(turn2!), turn2!.attributes['agentrx.turn.number']]).toEqual([true, T0 + 10, T0 + 30, 2]);
        const chat2 = t.children(turn2!)[0]!;
        expect([chat2.name, isError(chat2), chat2.attributes['error.type']]).toEqual(['chat', true, 'http_error']);
      });
    });

    describe('when the run ends with terminal terminated', () => {
      it('should mark the run span ERROR terminated', () => {
        const c = consumer();
        new Feed(c).start().at(T0, runStarted(), snapshot(1, 'terminated', 'no_terminal_tool'), finished(1, 10, 5, 'terminated'));
        expect(tree().one('invoke_agent').attributes).toMatchObject({ 'error.type': 'terminated', 'agentrx.run.terminal': 'terminated' });
      });
    });

    describe('when two sessions interleave on one consumer', () => {
      it('should keep them apart: two traces, each with its own spans', () => {
        const c = consumer();
        const a = new Feed(c, 'thread-a').start();
        const b = new Feed(c, 'thread-b').start();
        a.at(T0, runStarted('thread-a', 'a1'));
        b.at(T0 + 1, runStarted('thread-b', 'b1'), ...toolCall('bt', 'lookup', '{}'), snapshot(1, 'requires_action', 'tool_calls'));
        a.at(T0 + 2, ...text('am', 'hi'), snapshot(1, 'end_turn', 'stop'), finished(1, 10, 5, 'end_turn', 'thread-a', 'a1'));
        b.at(T0 + 3, result('bt', 'ok'), snapshot(2, 'end_turn', 'stop'), finished(2, 20, 10, 'end_turn', 'thread-b', 'b1'));
        c.stop('completed', { threadId: 'thread-a' });
        c.stop('completed', { threadId: 'thread-b' });
        const t = tree();
        expect(t.traceIds.size).toBe(2);
        const sessions = t.named('agentrx.session');
        expect(sessions.map((s) => [s.attributes['gen_ai.conversation.id'], t.spans.filter((x) => x.spanContext().traceId === s.spanContext().traceId).length])).toEqual([
          ['thread-a', 4],
          ['thread-b', 7],
        ]);
        expect(t.one('execute_tool').spanContext().traceId).toBe(sessions[1]!.spanContext().traceId);
        expect(c.openSessions).toBe(0);
      });
    });
  });

  describe('.stop', () => {
    describe('when called without a session while two sessions are open', () => {
      it('should stop the most recently active session that has no open run', () => {
        const c = consumer();
        const idle = new Feed(c, 'idle').start();
        idle.at(T0, runStarted('idle'), snapshot(1, 'end_turn', 'stop'), finished(1, 1, 1, 'end_turn', 'idle'));
        const busy = new Feed(c, 'busy').start();
        busy.at(T0 + 1, runStarted('busy'));
        const done = new Feed(c, 'done').start();
        done.at(T0 + 2, runStarted('done'), snapshot(1, 'end_turn', 'stop'), finished(1, 1, 1, 'end_turn', 'done'));
        c.stop('completed');
        expect(tree().named('agentrx.session').map((s) => s.attributes['gen_ai.conversation.id'])).toEqual(['done']);
        c.stop('completed');
        expect(tree().named('agentrx.session').map((s) => s.attributes['gen_ai.conversation.id'])).toEqual(['done', 'idle']);
        expect(c.openSessions).toBe(1);
      });
    });

    describe('when a second session starts on the same thread before the first one stopped (a resume)', () => {
      it('should route the thread to the new session and give the first stop to the old one', () => {
        const c = consumer();
        new Feed(c).start().at(T0, runStarted('thread-1', 'old'), snapshot(1, 'end_turn', 'stop'), finished(1, 1, 1, 'end_turn', 'thread-1', 'old'));
        const fresh = new Feed(c).start().at(T0 + 10, runStarted('thread-1', 'new'));
        c.stop('completed');
        fresh.at(T0 + 20, snapshot(1, 'end_turn', 'stop', 7, 3), finished(1, 7, 3, 'end_turn', 'thread-1', 'new'));
        c.stop('completed');
        const t = tree();
        const [first, second] = t.named('agentrx.session');
        expect([first!.attributes['agentrx.session.runs'], first!.attributes['agentrx.usage.input_tokens']]).toEqual([1, 1]);
        expect([second!.attributes['agentrx.session.runs'], second!.attributes['agentrx.usage.input_tokens']]).toEqual([1, 7]);
        expect(t.named('invoke_agent').map((r) => [r.attributes['agentrx.run.id'], t.parentOf(r)])).toEqual([
          ['old', first],
          ['new', second],
        ]);
        expect(t.spans.some(isError)).toBe(false);
        expect(c.openSessions).toBe(0);
      });
    });

    describe('when the reason is an error and one idle session ended with a matching RUN_ERROR', () => {
      it('should pick that session over a more recent completed one', () => {
        const c = consumer();
        new Feed(c, 'failed').start().at(T0, runStarted('failed'), { type: 'RUN_ERROR', message: 'x', code: 'timeout' });
        new Feed(c, 'ok').start().at(T0 + 1, runStarted('ok'), snapshot(1, 'end_turn', 'stop'), finished(1, 1, 1, 'end_turn', 'ok'));
        c.stop('timeout');
        expect(tree().named('agentrx.session').map((s) => s.attributes['gen_ai.conversation.id'])).toEqual(['failed']);
      });
    });

    describe('when a session stops (cancelled) with a run, a turn and a tool still open', () => {
      it('should end every span with status ERROR cancelled', () => {
        const c = consumer();
        new Feed(c).start().at(T0, runStarted(), ...toolCall('t1', 'lookup', '{}'), snapshot(1, 'requires_action', 'tool_calls'));
        c.stop('cancelled');
        const t = tree();
        expect(t.spans.map((s) => s.name).sort()).toEqual(['agentrx.session', 'agentrx.turn', 'chat', 'execute_tool lookup', 'invoke_agent agentrx']);
        expect(t.spans.filter((s) => s.name !== 'chat').every((s) => isError(s) && s.attributes['error.type'] === 'cancelled')).toBe(true);
        expect(c.openSessions).toBe(0);
      });
    });

    describe('when a session stops completed but its run never got a terminal', () => {
      it('should end the run as incomplete', () => {
        const c = consumer();
        new Feed(c).start().at(T0, runStarted());
        c.stop('completed');
        const t = tree();
        expect(t.one('invoke_agent').attributes['error.type']).toBe('incomplete');
        expect(t.one('agentrx.session').attributes['error.type']).toBe('incomplete');
      });
    });

    describe('when no session is open', () => {
      it('should do nothing', () => {
        const c = consumer();
        c.stop('completed');
        expect(tracing.spans()).toEqual([]);
      });
    });
  });

  describe('.start', () => {
    describe('when a span is active in the caller context', () => {
      let manager: StackManager;
      beforeEach(() => {
        manager = new StackManager();
        context.setGlobalContextManager(manager);
      });
      afterEach(() => context.disable());

      it('should parent the session span to it by default, and not with newTrace', () => {
        const parent = tracing.provider.getTracer('host').startSpan('http request');
        const joined = consumer();
        const separate = consumer({ newTrace: true });
        context.with(trace.setSpan(ROOT_CONTEXT, parent), () => {
          joined.start({ sessionId: 'a', threadId: 'a' });
          separate.start({ sessionId: 'b', threadId: 'b' });
        });
        joined.stop('completed');
        separate.stop('completed');
        parent.end();
        const t = tree();
        const [a, b] = t.named('agentrx.session');
        expect(a!.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
        expect(a!.spanContext().traceId).toBe(parent.spanContext().traceId);
        expect(b!.parentSpanContext).toBeUndefined();
        expect(b!.spanContext().traceId).not.toBe(parent.spanContext().traceId);
      });
    });
  });

  describe('constructed by the container (otelConsumerModule)', () => {
    describe('when the config names a provider and the otel section sets options', () => {
      it('should derive provider, model and agent name from the config, and let programmatic options win', () => {
        const container = new Container();
        container.load(otelConsumerModule({ tracerProvider: tracing.provider, agentName: 'from-options' }));
        const config = Object.assign(new AgentRxConfig(), { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': { model: 'claude-on-bedrock' } } });
        container.bind(AgentRxConfigToken).toConstantValue(config);
        container.bind(OtelConfig).toConstantValue(Object.assign(new OtelConfigOptions(), { agentName: 'from-section', captureContent: true }));
        const [c] = container.getAll<OtelConsumer>(EventConsumer);
        expect(c).toBeInstanceOf(OtelConsumer);
        new Feed(c!).start().at(T0, runStarted(), ...text('m', 'hello'), snapshot(1, 'end_turn', 'stop'), finished(1, 1, 1));
        const run = tree().one('invoke_agent');
        expect(run.name).toBe('invoke_agent from-options');
        expect(run.attributes).toMatchObject({ 'gen_ai.provider.name': 'aws.bedrock', 'gen_ai.request.model': 'claude-on-bedrock' });
        expect(tree().one('chat').attributes['gen_ai.output.messages']).toContain('hello');
      });
    });
  });
});

/** A synchronous context manager for the test (the SDK's async-hooks one is not installed). */
class StackManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;
  active(): Context {
    return this.current;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.current;
    this.current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}
