import { from, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgUiEvent } from '../../../../src/core/events/agui-event.js';
import type { SessionEvent } from '../../../../src/core/events/session-event.js';
import { toAgUi, type ToAgUiOptions } from '../../../../src/core/events/operators/to-ag-ui.js';
import { EnvelopeFixtures as F, toolUse } from './fixtures.js';

const THREAD = F.threadId;
const usage = F.usage;

/** The AG-UI events the tests expect, spelled out field by field. */
const Expected = {
  runStarted: (timestamp: number, runId = 'run-1'): AgUiEvent => ({ type: 'RUN_STARTED', threadId: THREAD, runId, timestamp }),
  msgStart: (timestamp: number, messageId = 'msg-1'): AgUiEvent => ({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant', timestamp }),
  msgContent: (timestamp: number, delta: string, messageId = 'msg-1'): AgUiEvent => ({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta, timestamp }),
  msgEnd: (timestamp: number, messageId = 'msg-1'): AgUiEvent => ({ type: 'TEXT_MESSAGE_END', messageId, timestamp }),
  snapshot: (timestamp: number, turn = 1): AgUiEvent => ({
    type: 'CUSTOM',
    name: 'agentrx.turn_end',
    value: { turn, terminal: 'end_turn', stopReason: 'end_turn', usage },
    timestamp,
  }),
  runFinished: (timestamp: number, runId = 'run-1'): AgUiEvent => ({
    type: 'RUN_FINISHED',
    threadId: THREAD,
    runId,
    result: { terminal: 'end_turn', stopReason: 'end_turn', turns: 1, usage },
    timestamp,
  }),
  runError: (timestamp: number, message: string, code: string): AgUiEvent => ({ type: 'RUN_ERROR', message, code, timestamp }),
};

describe('toAgUi', () => {
  let scheduler: TestScheduler;

  beforeEach(() => {
    scheduler = new TestScheduler((a, e) => expect(a).toEqual(e));
  });

  /** Runs `envelopes` through `toAgUi(opts)` as one synchronous, completing stream; expects `events`. */
  const expectTranslation = (envelopes: SessionEvent[], events: AgUiEvent[], opts?: ToAgUiOptions): void => {
    scheduler.run(({ expectObservable }) => {
      expectObservable(from(envelopes).pipe(toAgUi(opts), toArray())).toBe('(x|)', { x: events });
    });
  };

  /** Collects every event, for checks `toEqual` cannot make (absent keys). */
  const collect = (envelopes: SessionEvent[], opts?: ToAgUiOptions): AgUiEvent[] => {
    const out: AgUiEvent[] = [];
    scheduler.run(() => {
      from(envelopes)
        .pipe(toAgUi(opts))
        .subscribe((e) => out.push(e));
    });
    return out;
  };

  describe('when a run streams text, ends a turn and finishes', () => {
    it('should emit a well-ordered AG-UI run, each event stamped with its envelope time', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('s---t---u---e---f---|', {
          s: F.runStarted(100),
          t: F.textDelta(200, 'Hel'),
          u: F.textDelta(300, 'lo'),
          e: F.turnEnd(400),
          f: F.runFinished(500),
        });
        expectObservable(source.pipe(toAgUi())).toBe('R---(MC)D---(XP)F---|', {
          R: Expected.runStarted(100),
          M: Expected.msgStart(200),
          C: Expected.msgContent(200, 'Hel'),
          D: Expected.msgContent(300, 'lo'),
          X: Expected.msgEnd(400),
          P: Expected.snapshot(400),
          F: Expected.runFinished(500),
        });
        expectSubscriptions(source.subscriptions).toBe('^-------------------!');
      });
    });
  });

  describe('when a turn ends with a message open and tool uses', () => {
    it('should close the message, then emit a call triad per custom then server tool use, then the snapshot', () => {
      const custom = toolUse('tu-1', 'read_file', { path: 'a.txt' });
      const server = toolUse('tu-2', 'web_search', { q: 'rxjs' });
      expectTranslation(
        [
          F.runStarted(1),
          F.textDelta(2, 'Let me look'),
          F.turnEnd(3, { terminal: 'requires_action', stopReason: 'tool_use', customToolUses: [custom], serverToolUses: [server] }),
          F.runFinished(4),
        ],
        [
          Expected.runStarted(1),
          Expected.msgStart(2),
          Expected.msgContent(2, 'Let me look'),
          Expected.msgEnd(3),
          { type: 'TOOL_CALL_START', toolCallId: 'tu-1', toolCallName: 'read_file', parentMessageId: 'msg-1', timestamp: 3 },
          { type: 'TOOL_CALL_ARGS', toolCallId: 'tu-1', delta: '{"path":"a.txt"}', timestamp: 3 },
          { type: 'TOOL_CALL_END', toolCallId: 'tu-1', timestamp: 3 },
          { type: 'TOOL_CALL_START', toolCallId: 'tu-2', toolCallName: 'web_search', parentMessageId: 'msg-1', timestamp: 3 },
          { type: 'TOOL_CALL_ARGS', toolCallId: 'tu-2', delta: '{"q":"rxjs"}', timestamp: 3 },
          { type: 'TOOL_CALL_END', toolCallId: 'tu-2', timestamp: 3 },
          { type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn: 1, terminal: 'requires_action', stopReason: 'tool_use', usage }, timestamp: 3 },
          Expected.runFinished(4),
        ],
      );
    });
  });

  describe('when a tool use input cannot be serialized', () => {
    it('should announce the call without an arguments fragment', () => {
      const bad = toolUse('tu-1', 'count', { n: BigInt(1) });
      expectTranslation(
        [F.runStarted(1), F.turnEnd(2, { customToolUses: [bad] }), F.runFinished(3)],
        [
          Expected.runStarted(1),
          { type: 'TOOL_CALL_START', toolCallId: 'tu-1', toolCallName: 'count', timestamp: 2 },
          { type: 'TOOL_CALL_END', toolCallId: 'tu-1', timestamp: 2 },
          Expected.snapshot(2),
          Expected.runFinished(3),
        ],
      );
    });
  });

  describe('when the run finishes with a message still open', () => {
    it('should end the message before RUN_FINISHED', () => {
      expectTranslation(
        [F.runStarted(1), F.textDelta(2, 'Done.'), F.runFinished(3)],
        [Expected.runStarted(1), Expected.msgStart(2), Expected.msgContent(2, 'Done.'), Expected.msgEnd(3), Expected.runFinished(3)],
      );
    });
  });

  describe('when several messages are open at once', () => {
    it('should start each id once and end them all in open order', () => {
      expectTranslation(
        [F.runStarted(1), F.textDelta(2, 'a', 'm-a'), F.textDelta(3, 'b', 'm-b'), F.textDelta(4, 'c', 'm-a'), F.turnEnd(5), F.runFinished(6)],
        [
          Expected.runStarted(1),
          Expected.msgStart(2, 'm-a'),
          Expected.msgContent(2, 'a', 'm-a'),
          Expected.msgStart(3, 'm-b'),
          Expected.msgContent(3, 'b', 'm-b'),
          Expected.msgContent(4, 'c', 'm-a'),
          Expected.msgEnd(5, 'm-a'),
          Expected.msgEnd(5, 'm-b'),
          Expected.snapshot(5),
          Expected.runFinished(6),
        ],
      );
    });
  });

  describe('when a message id reappears after its turn ended', () => {
    it('should start it again', () => {
      expectTranslation(
        [F.runStarted(1), F.textDelta(2, 'a'), F.turnEnd(3), F.textDelta(4, 'b'), F.runFinished(5)],
        [
          Expected.runStarted(1),
          Expected.msgStart(2),
          Expected.msgContent(2, 'a'),
          Expected.msgEnd(3),
          Expected.snapshot(3),
          Expected.msgStart(4),
          Expected.msgContent(4, 'b'),
          Expected.msgEnd(5),
          Expected.runFinished(5),
        ],
      );
    });
  });

  describe('when a tool result arrives', () => {
    it('should emit TOOL_CALL_RESULT keyed by the tool use id', () => {
      const tu = toolUse('tu-7', 'read_file', { path: 'a.txt' });
      const result = F.toolResult(2, tu, 'file body');
      expectTranslation(
        [F.runStarted(1), result, F.runFinished(3)],
        [
          Expected.runStarted(1),
          { type: 'TOOL_CALL_RESULT', messageId: 'tu-7:result', toolCallId: 'tu-7', content: 'file body', role: 'tool', timestamp: 2, rawEvent: result.raw },
          Expected.runFinished(3),
        ],
      );
    });
  });

  describe('when the run errors with a message open', () => {
    it('should end the message, then emit RUN_ERROR with the message and code', () => {
      expectTranslation(
        [F.runStarted(1), F.textDelta(2, 'Hel'), F.runError(3, 'run-1', 'host failed', 'provider_error')],
        [
          Expected.runStarted(1),
          Expected.msgStart(2),
          Expected.msgContent(2, 'Hel'),
          Expected.msgEnd(3),
          Expected.runError(3, 'host failed', 'provider_error'),
        ],
      );
    });
  });

  describe('when events arrive before the run starts', () => {
    it('should emit nothing for them, even with raw, until RUN_STARTED', () => {
      expectTranslation(
        [
          F.textDelta(1, 'early'),
          F.turnEnd(2),
          F.provider({ type: 'message_start', id: 'p-1' }, 3),
          F.diagnostic(4, 'bad frame'),
          F.runFinished(5),
          F.runError(6),
          F.runStarted(7),
          F.runFinished(8),
        ],
        [Expected.runStarted(7), Expected.runFinished(8)],
        { raw: true },
      );
    });
  });

  describe('when run_started arrives while a run is open', () => {
    it('should ignore it', () => {
      expectTranslation(
        [F.runStarted(1, 'run-1'), F.runStarted(2, 'run-2'), F.runFinished(3, 'run-1')],
        [Expected.runStarted(1, 'run-1'), Expected.runFinished(3, 'run-1')],
      );
    });
  });

  describe('when a terminal arrives for a run that already ended', () => {
    it('should emit exactly one terminal and nothing after it', () => {
      expectTranslation(
        [F.runStarted(1), F.runFinished(2), F.runFinished(3), F.runError(4), F.textDelta(5, 'late'), F.turnEnd(6)],
        [Expected.runStarted(1), Expected.runFinished(2)],
      );
    });

    it('should not follow RUN_ERROR with RUN_FINISHED', () => {
      expectTranslation([F.runStarted(1), F.runError(2), F.runFinished(3)], [Expected.runStarted(1), Expected.runError(2, 'host failed', 'provider_error')]);
    });
  });

  describe('when the stream carries several runs', () => {
    it('should translate each run with its own ids and clean message state', () => {
      expectTranslation(
        [
          F.runStarted(1, 'run-1'),
          F.textDelta(2, 'one'),
          F.runFinished(3, 'run-1'),
          F.runStarted(4, 'run-2'),
          F.textDelta(5, 'two'),
          F.runError(6, 'run-2', 'quota', 'rate_limited'),
          F.runStarted(7, 'run-3'),
          F.runFinished(8, 'run-3'),
        ],
        [
          Expected.runStarted(1, 'run-1'),
          Expected.msgStart(2),
          Expected.msgContent(2, 'one'),
          Expected.msgEnd(3),
          Expected.runFinished(3, 'run-1'),
          Expected.runStarted(4, 'run-2'),
          Expected.msgStart(5),
          Expected.msgContent(5, 'two'),
          Expected.msgEnd(6),
          Expected.runError(6, 'quota', 'rate_limited'),
          Expected.runStarted(7, 'run-3'),
          Expected.runFinished(8, 'run-3'),
        ],
      );
    });
  });

  describe('when raw is true', () => {
    it('should forward provider events as RAW and other agentrx events as CUSTOM', () => {
      const provider = F.provider({ type: 'message_start', id: 'p-1' }, 2);
      const diagnostic = F.diagnostic(3, 'bad frame');
      const started = F.toolStarted(4, toolUse('tu-1', 'read_file'));
      expectTranslation(
        [F.runStarted(1), provider, diagnostic, started, F.runFinished(5)],
        [
          Expected.runStarted(1),
          { type: 'RAW', event: provider.raw, source: 'fake', timestamp: 2 },
          { type: 'CUSTOM', name: 'agentrx.diagnostic', value: diagnostic.raw, timestamp: 3 },
          { type: 'CUSTOM', name: 'agentrx.tool_started', value: started.raw, timestamp: 4 },
          Expected.runFinished(5),
        ],
        { raw: true },
      );
    });
  });

  describe('when raw is not set', () => {
    it('should drop provider events and agentrx events without an AG-UI equivalent', () => {
      expectTranslation(
        [F.runStarted(1), F.provider({ type: 'message_start' }, 2), F.diagnostic(3, 'bad frame'), F.toolStarted(4, toolUse('tu-1', 'x')), F.runFinished(5)],
        [Expected.runStarted(1), Expected.runFinished(5)],
      );
    });
  });

  describe('when optional values are undefined', () => {
    it('should omit their keys instead of emitting undefined', () => {
      const out = collect([
        F.runStarted(1),
        F.turnEnd(2, { stopReason: undefined, customToolUses: [toolUse('tu-1', 'x')] }),
        F.runFinished(3, 'run-1', { stopReason: undefined }),
      ]);
      expect(out).toEqual([
        Expected.runStarted(1),
        { type: 'TOOL_CALL_START', toolCallId: 'tu-1', toolCallName: 'x', timestamp: 2 },
        { type: 'TOOL_CALL_ARGS', toolCallId: 'tu-1', delta: '{}', timestamp: 2 },
        { type: 'TOOL_CALL_END', toolCallId: 'tu-1', timestamp: 2 },
        { type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn: 1, terminal: 'end_turn', usage }, timestamp: 2 },
        { type: 'RUN_FINISHED', threadId: THREAD, runId: 'run-1', result: { terminal: 'end_turn', turns: 1, usage }, timestamp: 3 },
      ]);
      const keys = out.map((e) => Object.keys(e).sort());
      expect(keys).toEqual([
        ['runId', 'threadId', 'timestamp', 'type'],
        ['timestamp', 'toolCallId', 'toolCallName', 'type'],
        ['delta', 'timestamp', 'toolCallId', 'type'],
        ['timestamp', 'toolCallId', 'type'],
        ['name', 'timestamp', 'type', 'value'],
        ['result', 'runId', 'threadId', 'timestamp', 'type'],
      ]);
      const turnEnd = out[4] as { value: object };
      const finished = out[5] as { result: object };
      expect(Object.keys(turnEnd.value).sort()).toEqual(['terminal', 'turn', 'usage']);
      expect(Object.keys(finished.result).sort()).toEqual(['terminal', 'turns', 'usage']);
    });
  });

  describe('when a hand-built run_error has no code', () => {
    it('should omit the code key', () => {
      const out = collect([F.runStarted(1), F.hostile({ type: 'agentrx.run_error', runId: 'run-1', threadId: THREAD, message: 'host failed' }, 2)]);
      expect(out).toEqual([Expected.runStarted(1), { type: 'RUN_ERROR', message: 'host failed', timestamp: 2 }]);
      expect(Object.keys(out[1]!).sort()).toEqual(['message', 'timestamp', 'type']);
    });
  });

  describe('when envelopes are malformed', () => {
    it('should drop them without erroring', () => {
      const agentrx = (raw: Record<string, unknown>, at: number): SessionEvent => F.hostile(raw, at);
      expectTranslation(
        [
          agentrx({ type: 'agentrx.run_started', threadId: THREAD }, 1),
          { ...F.runStarted(2), source: 'elsewhere' } as unknown as SessionEvent,
          null as unknown as SessionEvent,
          F.runStarted(3),
          { ...F.textDelta(4, 'x'), raw: null } as unknown as SessionEvent,
          agentrx({ type: 'agentrx.text_delta', text: 7, messageId: 'msg-1' }, 5),
          agentrx({ type: 42 }, 6),
          agentrx({ type: 'agentrx.tool_result', toolUse: { id: 'tu-1' } }, 7),
          agentrx({ type: 'agentrx.turn_end', customToolUses: [null, { name: 'no-id' }] }, 8),
          F.runFinished(9),
        ],
        [Expected.runStarted(3), { type: 'CUSTOM', name: 'agentrx.turn_end', value: {}, timestamp: 8 }, Expected.runFinished(9)],
        { raw: true },
      );
    });
  });

  describe('when the source completes while a run is open', () => {
    it('should end open messages and synthesize an incomplete RUN_ERROR before completing', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('s---t---|', { s: F.runStarted(100), t: F.textDelta(200, 'Hel') });
        expectObservable(source.pipe(toAgUi())).toBe('R---(MC)(XE|)', {
          R: Expected.runStarted(100),
          M: Expected.msgStart(200),
          C: Expected.msgContent(200, 'Hel'),
          X: Expected.msgEnd(200),
          E: Expected.runError(200, 'event stream ended without a terminal event', 'incomplete'),
        });
      });
    });
  });

  describe('when the source completes after the run ended', () => {
    it('should just complete', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('s-f|', { s: F.runStarted(1), f: F.runFinished(2) });
        expectObservable(source.pipe(toAgUi())).toBe('R-F|', { R: Expected.runStarted(1), F: Expected.runFinished(2) });
      });
    });
  });

  describe('when the source is empty', () => {
    it('should complete without emitting', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<SessionEvent>('|').pipe(toAgUi())).toBe('|');
      });
    });
  });

  describe('when the source never completes', () => {
    it('should emit nothing for a silent source', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold<SessionEvent>('-');
        expectObservable(source.pipe(toAgUi())).toBe('-');
        expectSubscriptions(source.subscriptions).toBe('^');
      });
    });

    it('should leave an open run open', () => {
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('s--', { s: F.runStarted(1) }).pipe(toAgUi())).toBe('R--', { R: Expected.runStarted(1) });
      });
    });
  });

  describe('when the source errors immediately', () => {
    it('should pass the error through without a RUN_ERROR', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const error = new Error('boom');
        expectObservable(cold<SessionEvent>('#', undefined, error).pipe(toAgUi())).toBe('#', undefined, error);
      });
    });
  });

  describe('when the source errors mid-run', () => {
    it('should end open messages, emit a stream_error RUN_ERROR, then propagate the error', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('socket hang up');
        const source = cold('s---t---#', { s: F.runStarted(100), t: F.textDelta(200, 'Hel') }, error);
        expectObservable(source.pipe(toAgUi())).toBe(
          'R---(MC)(XE#)',
          {
            R: Expected.runStarted(100),
            M: Expected.msgStart(200),
            C: Expected.msgContent(200, 'Hel'),
            X: Expected.msgEnd(200),
            E: Expected.runError(200, 'socket hang up', 'stream_error'),
          },
          error,
        );
        expectSubscriptions(source.subscriptions).toBe('^-------!');
      });
    });

    it('should use a non-Error value as the message', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('s-#', { s: F.runStarted(1) }, 'gone');
        expectObservable(source.pipe(toAgUi())).toBe('R-(E#)', { R: Expected.runStarted(1), E: Expected.runError(1, 'gone', 'stream_error') }, 'gone');
      });
    });
  });

  describe('when the source errors between runs', () => {
    it('should only propagate the error', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const error = new Error('boom');
        const source = cold('s-f-#', { s: F.runStarted(1), f: F.runFinished(2) }, error);
        expectObservable(source.pipe(toAgUi())).toBe('R-F-#', { R: Expected.runStarted(1), F: Expected.runFinished(2) }, error);
      });
    });
  });

  describe('when the subscriber unsubscribes early', () => {
    it('should stop emitting, synthesize no terminal and unsubscribe from the source', () => {
      scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('s---t---u---', { s: F.runStarted(1), t: F.textDelta(2, 'a'), u: F.textDelta(3, 'b') });
        expectObservable(source.pipe(toAgUi()), '^----!').toBe('R---(MC)', {
          R: Expected.runStarted(1),
          M: Expected.msgStart(2),
          C: Expected.msgContent(2, 'a'),
        });
        expectSubscriptions(source.subscriptions).toBe('^----!');
      });
    });
  });

  describe('when the operated observable is subscribed again', () => {
    it('should start with no open run and no open messages', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const events = cold('s-t-----', { s: F.runStarted(1), t: F.textDelta(2, 'a') }).pipe(toAgUi());
        const values = { R: Expected.runStarted(1), M: Expected.msgStart(2), C: Expected.msgContent(2, 'a') };
        // The first subscription leaves a run and a message open when it unsubscribes.
        expectObservable(events, '^---!').toBe('R-(MC)', values);
        expectObservable(events, '-----^').toBe('-----R-(MC)', values);
      });
    });
  });
});
