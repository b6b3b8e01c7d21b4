import { verifyEvents } from '@ag-ui/client';
import { from, lastValueFrom, toArray } from 'rxjs';
import { AgentRx } from '../../../src/agentrx.js';
import { toWireEvent } from '../../../src/servers/agui-http/agui-http.stream.js';
import type { ProviderMode } from '../../../src/core/plugin/agent-provider.js';
import type { EventConsumer, ToolCallResult } from '../../../src/core/plugin/event-consumer.js';
import { RecordingConsumer } from '../../../src/testing/recording-consumer.js';
import { ScriptedProvider, ev } from '../../../src/testing/scripted-provider.js';
import { AddToolHandler, ThrowingToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';

/** Records the typed tool hooks of every session, in call order. */
class ToolHookRecorder implements EventConsumer {
  readonly id = 'tool-hooks';
  readonly calls: string[] = [];
  readonly results = new Map<string, ToolCallResult>();
  onToolStart(id: string, name: string): void {
    this.calls.push(`start:${id}:${name}`);
  }
  onToolArgs(id: string, delta: string): void {
    this.calls.push(`args:${id}:${delta}`);
  }
  onToolResult(id: string, result: ToolCallResult): void {
    this.calls.push(`result:${id}`);
    this.results.set(id, result);
  }
  onToolEnd(id: string): void {
    this.calls.push(`end:${id}`);
  }
}

describe.each<ProviderMode>(['request_response', 'streaming'])('Session consumer tool hooks (%s)', (mode) => {
  describe('when a turn has a host-run tool whose result precedes the turn end, a local tool and a failing one', () => {
    const hooks = new ToolHookRecorder();
    const recorder = new RecordingConsumer();
    beforeAll(async () => {
      resetFakeTools();
      const provider = new ScriptedProvider({
        mode,
        turns: [
          {
            events: [
              ev.serverToolUse('srv-1', 'web_search', { q: 'rxjs' }),
              ev.hostToolResult('r1', 'srv-1', 'three hits'),
              ev.toolUse('u1', 'add', { a: 1, b: 2 }),
              ev.toolUse('u2', 'throws'),
              ev.idle('i1', 'requires_action', ['u1', 'u2']),
            ],
          },
          { events: [ev.text('t2', 'Done'), ev.idle('i2', 'end_turn')] },
        ],
      });
      const app = await AgentRx.create({
        defaults: false,
        providers: [provider],
        tools: [AddToolHandler, ThrowingToolHandler],
        consumers: [hooks, recorder],
        config: { provider: provider.id, consumers: { terminal: false } },
      });
      await app.run({ prompt: 'go' });
      await app.stop();
    });

    it('should report each call start, args, then its result and only then its end', () => {
      expect(hooks.calls).toEqual([
        'start:u1:add',
        'args:u1:{"a":1,"b":2}',
        'start:u2:throws',
        'args:u2:{}',
        'start:srv-1:web_search',
        'args:srv-1:{"q":"rxjs"}',
        'result:srv-1',
        'end:srv-1',
        'result:u1',
        'end:u1',
        'result:u2',
        'end:u2',
      ]);
    });

    it('should give the host-run result with hostRun, and the local results with their flags and values', () => {
      expect(hooks.results.get('srv-1')).toEqual({ value: 'three hits', content: 'three hits', isError: false, hostRun: true, replayed: false });
      expect(hooks.results.get('u1')).toMatchObject({ value: { sum: 3 }, content: '{"sum":3}', isError: false, hostRun: false, replayed: false });
      const failed = hooks.results.get('u2')!;
      expect(failed).toMatchObject({ isError: true, hostRun: false, replayed: false });
      expect(failed.value).toBe(failed.content);
    });

    it("should leave an AG-UI stream that @ag-ui/client's verifier accepts", async () => {
      const events = recorder.events;
      expect(events.filter((e) => e.type === 'TOOL_CALL_RESULT')).toHaveLength(3);
      await expect(lastValueFrom(from(events.map(toWireEvent)).pipe(verifyEvents(false), toArray()))).resolves.toHaveLength(events.length);
    });
  });
});
