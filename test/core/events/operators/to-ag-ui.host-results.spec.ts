import { TestScheduler } from 'rxjs/testing';
import type { AgUiEvent } from '../../../../src/core/events/agui-event.js';
import type { SessionEvent } from '../../../../src/core/events/session-event.js';
import { MAX_HELD_RESULTS, toAgUi } from '../../../../src/core/events/operators/to-ag-ui.js';
import { EnvelopeFixtures as F, toolUse, translate, verified } from './fixtures.js';

const search = toolUse('srv-1', 'web_search', { q: 'rxjs' });
const fetchTool = toolUse('srv-2', 'web_fetch', { url: 'https://example.test' });

/** The TOOL_CALL_RESULT `toAgUi` builds for a host-run tool result envelope. */
function hostResult(env: SessionEvent, timestamp: number): AgUiEvent {
  const raw = env.raw as { toolUse: { id: string }; result: { content: string } };
  return {
    type: 'TOOL_CALL_RESULT',
    messageId: `${raw.toolUse.id}:result`,
    toolCallId: raw.toolUse.id,
    content: raw.result.content,
    role: 'tool',
    rawEvent: env.raw,
    timestamp,
  };
}

/** The call triad `toAgUi` announces for a tool use at a turn's end. */
function triad(id: string, name: string, args: string, timestamp: number): AgUiEvent[] {
  return [
    { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: name, timestamp },
    { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: args, timestamp },
    { type: 'TOOL_CALL_END', toolCallId: id, timestamp },
  ];
}

describe('toAgUi', () => {
  let scheduler: TestScheduler;

  beforeEach(() => {
    scheduler = new TestScheduler((a, e) => expect(a).toEqual(e));
  });

  describe('when a host-run tool result arrives before the turn end announces its call', () => {
    it("should hold it and emit it right after that call's TOOL_CALL_END, before the next call and the snapshot", () => {
      scheduler.run(({ cold, expectObservable }) => {
        const h = F.hostToolResult(20, 'srv-1', 'three results');
        const source = cold('s--h--e' + '-'.repeat(11) + 'f--|', {
          s: F.runStarted(10),
          h,
          e: F.turnEnd(30, { serverToolUses: [search, fetchTool] }),
          f: F.runFinished(40),
        });
        expectObservable(source.pipe(toAgUi())).toBe('R-----(SAEQTBDP)--F--|', {
          R: { type: 'RUN_STARTED', threadId: F.threadId, runId: 'run-1', timestamp: 10 },
          S: triad('srv-1', 'web_search', '{"q":"rxjs"}', 30)[0],
          A: triad('srv-1', 'web_search', '{"q":"rxjs"}', 30)[1],
          E: triad('srv-1', 'web_search', '{"q":"rxjs"}', 30)[2],
          Q: hostResult(h, 30),
          T: triad('srv-2', 'web_fetch', '{"url":"https://example.test"}', 30)[0],
          B: triad('srv-2', 'web_fetch', '{"url":"https://example.test"}', 30)[1],
          D: triad('srv-2', 'web_fetch', '{"url":"https://example.test"}', 30)[2],
          P: { type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn: 1, terminal: 'end_turn', stopReason: 'end_turn', usage: F.usage }, timestamp: 30 },
          F: {
            type: 'RUN_FINISHED',
            threadId: F.threadId,
            runId: 'run-1',
            result: { terminal: 'end_turn', stopReason: 'end_turn', turns: 1, usage: F.usage },
            timestamp: 40,
          },
        });
      });
    });
  });

  describe('when a host-run tool result arrives after its call was announced', () => {
    it('should emit it at once, stamped with its own envelope time', () => {
      const h = F.hostToolResult(40, 'srv-1', 'denied by the user', true);
      const events = translate([F.runStarted(10), F.turnEnd(30, { terminal: 'requires_action', serverToolUses: [search] }), h, F.runFinished(50)]);
      expect(events.map((e) => e.type)).toEqual([
        'RUN_STARTED',
        'TOOL_CALL_START',
        'TOOL_CALL_ARGS',
        'TOOL_CALL_END',
        'CUSTOM',
        'TOOL_CALL_RESULT',
        'RUN_FINISHED',
      ]);
      expect(events[5]).toEqual(hostResult(h, 40));
    });
  });

  describe('when a host-run tool result names a call the run never announces', () => {
    it('should never emit it, not even when a later run announces that id', () => {
      const events = translate([
        F.runStarted(10),
        F.hostToolResult(20, 'srv-1', 'orphan'),
        F.turnEnd(30),
        F.runFinished(40),
        F.runStarted(50, 'run-2'),
        F.turnEnd(60, { serverToolUses: [search] }),
        F.runFinished(70, 'run-2'),
      ]);
      expect(events.filter((e) => e.type === 'TOOL_CALL_RESULT')).toEqual([]);
      expect(events.filter((e) => e.type === 'TOOL_CALL_START')).toHaveLength(1);
    });

    it('should drop it when the run errors or the source completes, too', () => {
      const errored = translate([
        F.runStarted(10),
        F.hostToolResult(20, 'srv-1', 'orphan'),
        F.runError(30),
        F.runStarted(40, 'run-2'),
        F.turnEnd(50, { serverToolUses: [search] }),
      ]);
      expect(errored.filter((e) => e.type === 'TOOL_CALL_RESULT')).toEqual([]);
      expect(errored.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'incomplete' });
    });
  });

  describe('when the host reports a result twice for one call', () => {
    it('should emit the first only, whether it was held or not', () => {
      const first = F.hostToolResult(20, 'srv-1', 'first');
      const events = translate([
        F.runStarted(10),
        first,
        F.hostToolResult(21, 'srv-1', 'second, held'),
        F.turnEnd(30, { serverToolUses: [search] }),
        F.hostToolResult(31, 'srv-1', 'third, after the call'),
        F.runFinished(40),
      ]);
      expect(events.filter((e) => e.type === 'TOOL_CALL_RESULT')).toEqual([hostResult(first, 30)]);
    });
  });

  describe('when the log holds a local result twice, the second replayed from the ledger in a later run (a takeover)', () => {
    it('should emit one TOOL_CALL_RESULT for the call, the first', () => {
      const lookup = toolUse('tu-1', 'lookup', { q: 'a' });
      const first = F.toolResult(20, lookup, 'found');
      const replayed = F.agentrx(
        { type: 'agentrx.tool_result', toolUse: lookup, result: { toolUseId: 'tu-1', content: 'found', isError: false }, replayed: true, durationMs: 0 },
        51,
      );
      const events = translate([F.runStarted(10), first, F.runFinished(30), F.runStarted(50, 'run-2'), replayed, F.runFinished(60, 'run-2')]);
      const results = events.filter((e) => e.type === 'TOOL_CALL_RESULT');
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ toolCallId: 'tu-1', timestamp: 20 });
    });
  });

  describe('when a host-run result comes for a call a local result already answered', () => {
    it('should not send a second TOOL_CALL_RESULT for it', () => {
      const events = translate([
        F.runStarted(10),
        F.turnEnd(20, { serverToolUses: [search] }),
        F.toolResult(30, search, 'local'),
        F.hostToolResult(31, 'srv-1', 'host'),
        F.runFinished(40),
      ]);
      expect(events.filter((e) => e.type === 'TOOL_CALL_RESULT')).toEqual([expect.objectContaining({ content: 'local', timestamp: 30 })]);
    });
  });

  describe('when more results are held than the bound', () => {
    it('should drop the oldest held result and keep the newest', () => {
      const held: SessionEvent[] = [];
      for (let i = 0; i <= MAX_HELD_RESULTS; i++) held.push(F.hostToolResult(20, `srv-${i}`, `r${i}`));
      const events = translate([
        F.runStarted(10),
        ...held,
        F.turnEnd(30, { serverToolUses: [toolUse('srv-0', 'a'), toolUse(`srv-${MAX_HELD_RESULTS}`, 'b')] }),
        F.runFinished(40),
      ]);
      expect(events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => (e.type === 'TOOL_CALL_RESULT' ? e.content : ''))).toEqual([
        `r${MAX_HELD_RESULTS}`,
      ]);
    });
  });

  describe('when a host-run result envelope is malformed', () => {
    it('should drop it without erroring', () => {
      const events = translate([
        F.runStarted(10),
        F.hostile({ type: 'agentrx.host_tool_result', toolUse: { id: '' }, result: { content: 'x', isError: false } }, 20),
        F.hostile({ type: 'agentrx.host_tool_result', toolUse: { id: 'srv-1' }, result: { content: 42, isError: false } }, 21),
        F.hostile({ type: 'agentrx.host_tool_result', toolUse: 'srv-1' }, 22),
        F.turnEnd(30, { serverToolUses: [search] }),
        F.runFinished(40),
      ]);
      expect(events.map((e) => e.type)).toEqual(['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'CUSTOM', 'RUN_FINISHED']);
    });
  });

  describe('when local and host-run results, held and late, mix over two runs', () => {
    it("should give a stream @ag-ui/client's verifier accepts, with one result per result-bearing call", async () => {
      const local = toolUse('tu-1', 'echo', { text: 'hi' });
      const events = translate([
        F.runStarted(10),
        F.textDelta(11, 'Searching'),
        F.hostToolResult(12, 'srv-1', 'found'),
        F.turnEnd(13, { terminal: 'requires_action', customToolUses: [local], serverToolUses: [search, fetchTool] }),
        F.toolResult(14, local, 'HI'),
        F.hostToolResult(15, 'srv-2', 'fetched'),
        F.hostToolResult(16, 'srv-9', 'never announced'),
        F.textDelta(17, 'Done', 'msg-2'),
        F.turnEnd(18, { turn: 2 }),
        F.runFinished(19),
        F.runStarted(20, 'run-2'),
        F.hostToolResult(21, 'srv-1', 'a new call, same id'),
        F.turnEnd(22, { serverToolUses: [search] }),
        F.runFinished(23, 'run-2'),
      ]);
      await expect(verified(events)).resolves.toHaveLength(events.length);
      expect(events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => (e.type === 'TOOL_CALL_RESULT' ? `${e.toolCallId}=${e.content}` : ''))).toEqual([
        'srv-1=found',
        'tu-1=HI',
        'srv-2=fetched',
        'srv-1=a new call, same id',
      ]);
    });
  });
});
