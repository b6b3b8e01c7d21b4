import { OtelConsumer } from '../../../src/consumers/otel/otel.consumer.js';
import { CMA_PROVIDER_ID } from '../../../src/plugins/providers/claude-managed-agents/cma.module.js';
import type { OtelConsumerOptions } from '../../../src/consumers/otel/otel.config.js';
import { Feed, T0, finished, result, runStarted, snapshot, text, toolCall, toolResultRaw } from './otel-feed.js';
import { CONTENT_KEYS, SpanTree, endMs, isError, memoryTracing, startMs } from './otel-spans.js';

/** The run, turn, chat and tool spans (RunSpans), fed through the consumer that owns them. */
describe('RunSpans', () => {
  let tracing: ReturnType<typeof memoryTracing>;
  // The Claude Managed Agents provider as its module registers it (its telemetry name).
  const consumer = (opts: OtelConsumerOptions = {}): OtelConsumer =>
    new OtelConsumer({ tracerProvider: tracing.provider, ...opts }, undefined, undefined, [
      { id: CMA_PROVIDER_ID, service: class {} as never, telemetryName: 'anthropic' },
    ]);
  const tree = (): SpanTree => new SpanTree(tracing.spans());
  beforeEach(() => {
    tracing = memoryTracing();
  });

  describe('.onEvent, .finish and .fail', () => {
    describe('when a run has a text turn with a tool call, then a final text turn', () => {
      let t: SpanTree;
      beforeEach(() => {
        const c = consumer({ providerId: 'claude-managed-agents', requestModel: 'claude-x' });
        new Feed(c)
          .start()
          .at(T0, runStarted())
          .at(T0 + 100, ...text('m1', 'Let me check.'))
          .at(
            T0 + 200,
            { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
            ...toolCall('t1', 'lookup', '{"q":"secret query"}'),
            snapshot(1, 'requires_action', { type: 'requires_action' }, 10, 5),
          )
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
        expect(t.one('invoke_agent').attributes).toMatchObject({
          'gen_ai.provider.name': 'anthropic',
          'agentrx.run.id': 'run-1',
          'gen_ai.usage.input_tokens': 30,
          'gen_ai.usage.output_tokens': 12,
        });
        expect(t.one('agentrx.session').attributes).toMatchObject({
          'agentrx.provider': 'claude-managed-agents',
          'agentrx.session.id': 'thread-1',
          'gen_ai.conversation.id': 'thread-1',
        });
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
          {
            role: 'assistant',
            parts: [
              { type: 'text', content: 'Let me check.' },
              { type: 'tool_call', id: 't1', name: 'lookup', arguments: { q: 'x' } },
            ],
            finish_reason: 'tool_calls',
          },
        ]);
        expect(JSON.parse(chat2!.attributes['gen_ai.output.messages'] as string)).toEqual([
          { role: 'assistant', parts: [{ type: 'text', content: 'Done.' }], finish_reason: 'stop' },
        ]);
        expect(t.one('execute_tool').attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"q":"x"}', 'gen_ai.tool.call.result': 'found' });
      });
    });

    describe('when a result carries the verbatim agentrx.tool_result with isError', () => {
      it('should mark the tool span ERROR tool_error and record its duration', () => {
        const c = consumer();
        const raw = toolResultRaw('t1', 'lookup', 'boom', { isError: true, durationMs: 42 });
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
        const raw = toolResultRaw('old', 'lookup', 'ok', { replayed: true, durationMs: 30 });
        new Feed(c)
          .start()
          .at(T0, runStarted())
          .at(T0 + 100, result('old', 'ok', raw))
          .at(T0 + 200, snapshot(1, 'end_turn', 'stop'), finished(1, 1, 1));
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
  });
});
