import { OtelConsumer } from '../../../src/consumers/otel/otel.consumer.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import type { HostToolResultEvent } from '../../../src/core/events/session-event.js';
import { Feed, T0, finished, runStarted, snapshot, toolCall } from './otel-feed.js';
import { SpanTree, endMs, isError, memoryTracing } from './otel-spans.js';

/** The TOOL_CALL_RESULT `toAgUi` emits for a host-run tool, with its verbatim `agentrx.host_tool_result`. */
function hostResult(id: string, content: string, isError: boolean): AgUiEvent {
  const rawEvent: HostToolResultEvent = { type: 'agentrx.host_tool_result', toolUse: { id }, result: { content, isError } };
  return { type: 'TOOL_CALL_RESULT', messageId: `${id}:result`, toolCallId: id, content, role: 'tool', rawEvent };
}

describe('RunSpans', () => {
  describe('.onEvent', () => {
    describe('when a host-run tool reports a failed result right after its call is announced', () => {
      it('should mark its tool span ERROR tool_error and close the turn at the snapshot', () => {
        const tracing = memoryTracing();
        const c = new OtelConsumer({ tracerProvider: tracing.provider });
        new Feed(c)
          .start()
          .at(T0, runStarted())
          .at(T0 + 100, ...toolCall('srv-1', 'web_fetch', '{}'), hostResult('srv-1', 'denied', true), snapshot(1, 'end_turn', 'end_turn'))
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
