import { SpanKind } from '@opentelemetry/api';
import { AgentRx } from '../../../src/agentrx.js';
import { DEMO_PROMPT } from '../../../src/cli/cli.js';
import { OtelConsumer } from '../../../src/consumers/otel/otel.consumer.js';
import { otelConsumerModule } from '../../../src/consumers/otel/otel.module.js';
import { isAgentRxError } from '../../../src/core/errors.js';
import type { SessionResult } from '../../../src/core/model.js';
import { demoToolsModule } from '../../../src/plugins/tools/tools.module.js';
import { startOpenAiEmulator, type FaultPlan, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { CONTENT_KEYS, SpanTree, endMs, isError, memoryTracing, startMs } from './otel-spans.js';

describe('OtelConsumer on a demo session', () => {
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;
  afterEach(async () => {
    await rx?.stop();
    await emulator?.close();
    rx = undefined;
    emulator = undefined;
  });

  /** The `agentrx demo` setup (emulator with the demo model, Local provider, demo tools) plus tracing. */
  async function demo(opts: { otel?: Record<string, unknown>; faults?: FaultPlan } = {}) {
    const tracing = memoryTracing();
    emulator = await startOpenAiEmulator({ model: 'demo', faults: opts.faults });
    const config = {
      provider: 'local' as const,
      providers: { local: { baseUrl: emulator.baseUrl, model: 'agentrx-demo', maxRetries: 0 } },
      limits: { runTimeoutMs: 10_000 },
      ...(opts.otel ? { otel: opts.otel } : {}),
    };
    rx = await AgentRx.create({ config, modules: [demoToolsModule, otelConsumerModule({ tracerProvider: tracing.provider })] });
    return { rx, tracing, emulator };
  }

  describe('.run', () => {
    describe('when the demo prompt runs (three parallel tools, then an answer)', () => {
      let result: SessionResult;
      let tree: SpanTree;
      beforeEach(async () => {
        const { rx, tracing } = await demo();
        result = await rx.run({ prompt: DEMO_PROMPT });
        tree = new SpanTree(tracing.spans());
      });

      it('should put every span in one trace under one session span', () => {
        expect(tree.traceIds.size).toBe(1);
        const session = tree.one('agentrx.session');
        expect(session.parentSpanContext).toBeUndefined();
        expect(tree.spans.filter((s) => s.parentSpanContext === undefined)).toEqual([session]);
        expect(tree.spans.every((s) => s.ended)).toBe(true);
      });

      it('should keep every span within its parent in time', () => {
        for (const span of tree.spans) {
          const parent = tree.parentOf(span);
          if (!parent) continue;
          expect([span.name, startMs(span) >= startMs(parent), endMs(span) <= endMs(parent)]).toEqual([span.name, true, true]);
        }
      });

      it('should nest session → invoke_agent → turns → chat and tools', () => {
        const session = tree.one('agentrx.session');
        const run = tree.one('invoke_agent');
        expect(run.name).toBe('invoke_agent agentrx');
        expect(tree.parentOf(run)).toBe(session);
        const turns = tree.named('agentrx.turn');
        expect(turns.map((t) => t.attributes['agentrx.turn.number'])).toEqual([1, 2]);
        for (const turn of turns) expect(tree.parentOf(turn)).toBe(run);
        const [first, second] = turns as [(typeof turns)[0], (typeof turns)[0]];
        expect(
          tree
            .children(first)
            .map((s) => s.name)
            .sort(),
        ).toEqual(['chat agentrx-demo', 'execute_tool calculate', 'execute_tool get_time', 'execute_tool read_file']);
        expect(tree.children(second).map((s) => s.name)).toEqual(['chat agentrx-demo']);
        expect(result.turns).toBe(2);
      });

      it('should carry token counts: per model request, per run and per session', () => {
        const chats = tree.named('chat');
        expect(chats).toHaveLength(2);
        for (const chat of chats) {
          expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
          expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
        }
        const sum = (key: string): number => chats.reduce((n, c) => n + (c.attributes[key] as number), 0);
        expect(sum('gen_ai.usage.input_tokens')).toBe(result.usage.inputTokens);
        expect(sum('gen_ai.usage.output_tokens')).toBe(result.usage.outputTokens);
        expect(tree.one('invoke_agent').attributes).toMatchObject({
          'gen_ai.usage.input_tokens': result.usage.inputTokens,
          'gen_ai.usage.output_tokens': result.usage.outputTokens,
          'agentrx.run.turns': 2,
          'agentrx.run.terminal': 'end_turn',
        });
        expect(tree.one('agentrx.session').attributes).toMatchObject({
          'agentrx.usage.input_tokens': result.usage.inputTokens,
          'agentrx.usage.output_tokens': result.usage.outputTokens,
          'agentrx.session.runs': 1,
          'agentrx.session.stop_reason': 'completed',
        });
      });

      it('should use GenAI semantic-convention attributes and span kinds', () => {
        const session = tree.one('agentrx.session');
        expect(session.attributes['gen_ai.conversation.id']).toEqual(expect.any(String));
        const conversation = session.attributes['gen_ai.conversation.id'];
        expect(tree.one('invoke_agent').attributes).toMatchObject({
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.provider.name': 'openai',
          'gen_ai.agent.name': 'agentrx',
          'gen_ai.request.model': 'agentrx-demo',
          'gen_ai.conversation.id': conversation,
        });
        const [chat1, chat2] = tree.named('chat');
        expect(chat1!.kind).toBe(SpanKind.CLIENT);
        expect(chat1!.attributes).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'agentrx-demo',
          'gen_ai.response.finish_reasons': ['tool_calls'],
        });
        expect(chat2!.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
        const calculate = tree.one('execute_tool calculate');
        expect(calculate.kind).toBe(SpanKind.INTERNAL);
        expect(calculate.attributes).toMatchObject({
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'calculate',
          'gen_ai.tool.type': 'function',
          'agentrx.tool.result_received': true,
        });
        const callIds = tree.named('execute_tool').map((s) => s.attributes['gen_ai.tool.call.id']);
        expect(new Set(callIds).size).toBe(3);
        expect(tree.spans.every((s) => !isError(s))).toBe(true);
      });

      it('should record no prompt, text or tool content', () => {
        for (const key of CONTENT_KEYS) expect(tree.attributeKeys).not.toContain(key);
        const strings = tree.attributeStrings.join('\n');
        expect(strings).not.toContain('README');
        expect(strings).not.toContain('17 + 25');
        expect(strings).not.toContain(result.text.slice(0, 20));
      });

      it('should order the spans in time: tools after their model request, turn 2 after the tools', () => {
        const [first, second] = tree.named('agentrx.turn') as [ReturnType<SpanTree['one']>, ReturnType<SpanTree['one']>];
        const chat1 = tree.children(first).find((s) => s.name.startsWith('chat'))!;
        const tools = tree.named('execute_tool');
        for (const tool of tools) {
          expect(startMs(tool)).toBeGreaterThanOrEqual(endMs(chat1));
          expect(endMs(tool)).toBeLessThanOrEqual(endMs(first));
        }
        expect(endMs(first)).toBe(Math.max(...tools.map(endMs)));
        expect(startMs(second)).toBe(endMs(first));
        expect(endMs(tree.one('invoke_agent'))).toBeGreaterThanOrEqual(endMs(second));
      });
    });

    describe('when captureContent is set in the otel config section', () => {
      it('should record the answer, tool calls, arguments and results', async () => {
        const { rx, tracing } = await demo({ otel: { captureContent: true } });
        const result = await rx.run({ prompt: DEMO_PROMPT });
        const tree = new SpanTree(tracing.spans());

        const [chat1, chat2] = tree.named('chat');
        const calls = JSON.parse(chat1!.attributes['gen_ai.output.messages'] as string) as {
          role: string;
          parts: { type: string; name?: string }[];
          finish_reason: string;
        }[];
        expect(calls).toEqual([{ role: 'assistant', parts: expect.any(Array), finish_reason: 'tool_calls' }]);
        expect(calls[0]!.parts.map((p) => `${p.type}:${p.name}`).sort()).toEqual(['tool_call:calculate', 'tool_call:get_time', 'tool_call:read_file']);
        const answer = JSON.parse(chat2!.attributes['gen_ai.output.messages'] as string) as unknown;
        expect(answer).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: result.text }], finish_reason: 'stop' }]);
        const read = tree.one('execute_tool read_file');
        expect(JSON.parse(read.attributes['gen_ai.tool.call.arguments'] as string)).toEqual({ path: 'README.md' });
        expect(read.attributes['gen_ai.tool.call.result']).toEqual(expect.stringContaining('agentrx'));
        expect(tree.one('execute_tool calculate').attributes['gen_ai.tool.call.result']).toBe('(17 + 25) * 3 = 126');
      });
    });

    describe('when the model endpoint fails the first request (HTTP 400)', () => {
      it('should mark the chat, turn, run and session spans ERROR with the error code', async () => {
        const { rx, tracing } = await demo({ faults: { 0: { kind: 'status', status: 400 } } });
        const failure = await rx.run({ prompt: DEMO_PROMPT }).catch((e: unknown) => e);
        expect(isAgentRxError(failure) && failure.code).toBe('http_error');
        const tree = new SpanTree(tracing.spans());

        expect(tree.traceIds.size).toBe(1);
        for (const name of ['agentrx.session', 'invoke_agent', 'agentrx.turn', 'chat']) {
          const span = tree.one(name);
          expect(isError(span)).toBe(true);
          expect(span.attributes['error.type']).toBe('http_error');
        }
        expect(tree.one('invoke_agent').status.message).toBe((failure as Error).message);
        expect(tree.one('agentrx.session').attributes['agentrx.session.stop_reason']).toBe('error');
        expect(tree.named('execute_tool')).toHaveLength(0);
      });
    });

    describe('when the run is cancelled while the model request hangs', () => {
      it('should end every span, with error.type cancelled', async () => {
        const { rx, tracing, emulator } = await demo({ faults: { 0: { kind: 'hang' } } });
        const ctrl = new AbortController();
        const running = rx.run({ prompt: DEMO_PROMPT, signal: ctrl.signal }).catch((e: unknown) => e);
        await emulator.waitForRequest(0);
        ctrl.abort();
        const failure = await running;
        expect(isAgentRxError(failure) && failure.code).toBe('cancelled');
        const tree = new SpanTree(tracing.spans());

        expect(tree.spans.map((s) => s.name).sort()).toEqual(['agentrx.session', 'agentrx.turn', 'chat agentrx-demo', 'invoke_agent agentrx']);
        expect(tree.spans.every((s) => s.ended && isError(s) && s.attributes['error.type'] === 'cancelled')).toBe(true);
        expect(tree.one('agentrx.session').attributes['agentrx.session.stop_reason']).toBe('cancelled');
      });
    });
  });

  describe('.start', () => {
    describe('when a live session runs two requests, then closes', () => {
      it('should make one trace: one session span over two invoke_agent spans', async () => {
        const tracing = memoryTracing();
        emulator = await startOpenAiEmulator({ model: 'demo' });
        rx = await AgentRx.create({
          config: { providers: { local: { baseUrl: emulator.baseUrl, model: 'agentrx-demo' } } },
          modules: [demoToolsModule],
          consumers: [new OtelConsumer({ tracerProvider: tracing.provider, agentName: 'helper', requestModel: 'agentrx-demo', providerId: 'local' })],
        });
        const session = rx.start({ prompt: 'what time is it?' });
        const results: SessionResult[] = [];
        const second = new Promise<void>((resolve) =>
          session.results$.subscribe((r) => {
            results.push(r);
            if (results.length === 1) session.message('hello');
            else resolve();
          }),
        );
        await second;
        session.close();
        await session.closed;
        const tree = new SpanTree(tracing.spans());

        expect(tree.traceIds.size).toBe(1);
        const root = tree.one('agentrx.session');
        const runs = tree.named('invoke_agent');
        expect(runs.map((r) => r.name)).toEqual(['invoke_agent helper', 'invoke_agent helper']);
        expect(runs.map((r) => tree.parentOf(r))).toEqual([root, root]);
        expect(runs.map((r) => r.attributes['agentrx.run.turns'])).toEqual([2, 1]);
        expect(root.attributes).toMatchObject({
          'agentrx.session.runs': 2,
          'agentrx.usage.input_tokens': results[0]!.usage.inputTokens + results[1]!.usage.inputTokens,
          'agentrx.session.stop_reason': 'completed',
        });
        expect(tree.named('execute_tool').map((t) => tree.parentOf(tree.parentOf(t)!))).toEqual([runs[0]]);
      });
    });
  });
});
