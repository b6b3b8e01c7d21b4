import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { OtelConsumer } from '../../../src/consumers/otel/otel.consumer.js';
import type { OtelConsumerOptions } from '../../../src/consumers/otel/otel.config.js';
import { Container } from '../../../src/core/util/inversify.js';
import { AgentRxConfigToken } from '../../../src/core/config/config-tokens.js';
import { AgentRxConfig } from '../../../src/core/config/agentrx.config.js';
import { EventConsumer } from '../../../src/core/plugin/event-consumer.js';
import { otelConsumerModule } from '../../../src/consumers/otel/otel.module.js';
import { agentCoreProviderModule } from '../../../src/plugins/providers/bedrock-agentcore/agentcore.module.js';
import { OtelConfig, OtelConfigOptions } from '../../../src/consumers/otel/otel.config.js';
import { Feed, T0, finished, runStarted, snapshot, text, toolCall, result } from './otel-feed.js';
import { SpanTree, isError, memoryTracing } from './otel-spans.js';

describe('OtelConsumer', () => {
  let tracing: ReturnType<typeof memoryTracing>;
  const consumer = (opts: OtelConsumerOptions = {}): OtelConsumer => new OtelConsumer({ tracerProvider: tracing.provider, ...opts });
  const tree = (): SpanTree => new SpanTree(tracing.spans());
  beforeEach(() => {
    tracing = memoryTracing();
  });

  describe('.onEvent', () => {
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
        expect(
          sessions.map((s) => [s.attributes['gen_ai.conversation.id'], t.spans.filter((x) => x.spanContext().traceId === s.spanContext().traceId).length]),
        ).toEqual([
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
        expect(
          tree()
            .named('agentrx.session')
            .map((s) => s.attributes['gen_ai.conversation.id']),
        ).toEqual(['done']);
        c.stop('completed');
        expect(
          tree()
            .named('agentrx.session')
            .map((s) => s.attributes['gen_ai.conversation.id']),
        ).toEqual(['done', 'idle']);
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
        expect(
          tree()
            .named('agentrx.session')
            .map((s) => s.attributes['gen_ai.conversation.id']),
        ).toEqual(['failed']);
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
        container.load(otelConsumerModule({ tracerProvider: tracing.provider, agentName: 'from-options' }), agentCoreProviderModule);
        const config = Object.assign(new AgentRxConfig(), {
          provider: 'bedrock-agentcore',
          providers: { 'bedrock-agentcore': { model: 'claude-on-bedrock' } },
        });
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
