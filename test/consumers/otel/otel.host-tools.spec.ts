import { OtelConsumer } from '../../../src/consumers/otel/otel.consumer.js';
import { Feed, T0, finished, result, runStarted, snapshot, toolCall } from './otel-feed.js';
import { SpanTree, endMs, isError, memoryTracing } from './otel-spans.js';

describe('RunSpans', () => {
  describe('.toolResult', () => {
    describe('when a host-run tool reports a failed result right after its call is announced', () => {
      it('should mark its tool span ERROR tool_error and close the turn at the snapshot', () => {
        const tracing = memoryTracing();
        const c = new OtelConsumer({ tracerProvider: tracing.provider });
        new Feed(c)
          .start()
          .at(T0, runStarted())
          .at(
            T0 + 100,
            ...toolCall('srv-1', 'web_fetch', '{}'),
            result('srv-1', 'denied', { type: 'agentrx.host_tool_result', toolUse: { id: 'srv-1' }, result: { content: 'denied', isError: true } }),
            snapshot(1, 'end_turn', 'end_turn'),
          )
          .at(T0 + 200, finished(1, 1, 1));
        c.stop('completed');
        const t = new SpanTree(tracing.spans());
        const tool = t.one('execute_tool');
        expect(isError(tool)).toBe(true);
        expect(tool.attributes).toMatchObject({ 'error.type': 'tool_error', 'agentrx.tool.result_received': true });
        expect(tool.attributes['agentrx.tool.replayed']).toBeUndefined();
        expect(endMs(t.one('agentrx.turn'))).toBe(T0 + 100);
      });
    });
  });
});
