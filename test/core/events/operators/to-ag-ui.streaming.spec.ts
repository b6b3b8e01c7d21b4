import { TestScheduler } from 'rxjs/testing';
import type { AgUiEvent } from '../../../../src/core/events/agui-event.js';
import { TOOL_CALL_ARGS_REPLACED_EVENT, toAgUi } from '../../../../src/core/events/operators/to-ag-ui.js';
import type { ToolUse } from '../../../../src/core/model.js';
import { EnvelopeFixtures as F, toolUse, translate, verified } from './fixtures.js';

const readFile = toolUse('call-1', 'read_file', { path: 'a.txt' });
const listDir = toolUse('call-2', 'list_dir', { dir: '.' });

/** `type` (and the id it concerns) of each event: enough to read an order at a glance. */
function shape(events: readonly AgUiEvent[]): string[] {
  return events.map((e) => {
    const id = 'toolCallId' in e ? e.toolCallId : 'messageId' in e ? e.messageId : 'name' in e ? e.name : undefined;
    return id === undefined ? e.type : `${e.type} ${id}`;
  });
}

/** Concatenated TOOL_CALL_ARGS deltas of one call. */
function argsOf(events: readonly AgUiEvent[], toolCallId: string): string {
  return events.flatMap((e) => (e.type === 'TOOL_CALL_ARGS' && e.toolCallId === toolCallId ? [e.delta] : [])).join('');
}

describe('toAgUi', () => {
  let scheduler: TestScheduler;

  beforeEach(() => {
    scheduler = new TestScheduler((a, e) => expect(a).toEqual(e));
  });

  describe('when a tool call streams its arguments and the turn end names it', () => {
    it('should open it at its first fragment (with its parent message), send each fragment as ARGS, and only close it at the turn end', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('s--t---a--b--c--e' + '-'.repeat(4) + 'f|', {
          s: F.runStarted(10),
          t: F.textDelta(20, 'Reading.', 'chatcmpl-1'),
          a: F.toolCallDelta(30, 'call-1', '', { name: 'read_file', parentMessageId: 'chatcmpl-1' }),
          b: F.toolCallDelta(40, 'call-1', '{"path":'),
          c: F.toolCallDelta(50, 'call-1', '"a.txt"}'),
          e: F.turnEnd(60, { terminal: 'requires_action', customToolUses: [readFile] }),
          f: F.runFinished(70),
        });
        expectObservable(source.pipe(toAgUi())).toBe('R--(MC)S--A--B--(XEP)F|', {
          R: { type: 'RUN_STARTED', threadId: F.threadId, runId: 'run-1', timestamp: 10 },
          M: { type: 'TEXT_MESSAGE_START', messageId: 'chatcmpl-1', role: 'assistant', timestamp: 20 },
          C: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'chatcmpl-1', delta: 'Reading.', timestamp: 20 },
          S: { type: 'TOOL_CALL_START', toolCallId: 'call-1', toolCallName: 'read_file', parentMessageId: 'chatcmpl-1', timestamp: 30 },
          A: { type: 'TOOL_CALL_ARGS', toolCallId: 'call-1', delta: '{"path":', timestamp: 40 },
          B: { type: 'TOOL_CALL_ARGS', toolCallId: 'call-1', delta: '"a.txt"}', timestamp: 50 },
          X: { type: 'TEXT_MESSAGE_END', messageId: 'chatcmpl-1', timestamp: 60 },
          E: { type: 'TOOL_CALL_END', toolCallId: 'call-1', timestamp: 60 },
          P: {
            type: 'CUSTOM',
            name: 'agentrx.turn_end',
            value: { turn: 1, terminal: 'requires_action', stopReason: 'end_turn', usage: F.usage },
            timestamp: 60,
          },
          F: {
            type: 'RUN_FINISHED',
            threadId: F.threadId,
            runId: 'run-1',
            result: { terminal: 'end_turn', stopReason: 'end_turn', turns: 1, usage: F.usage },
            timestamp: 70,
          },
        });
      });
    });

    it('should give the call the open text message as parent when the fragment names none', () => {
      const events = translate([F.runStarted(10), F.textDelta(20, 'x', 'm-7'), F.toolCallDelta(30, 'call-1', '{}', { name: 'read_file' })]);
      expect(events.find((e) => e.type === 'TOOL_CALL_START')).toEqual({
        type: 'TOOL_CALL_START',
        toolCallId: 'call-1',
        toolCallName: 'read_file',
        parentMessageId: 'm-7',
        timestamp: 30,
      });
    });
  });

  describe('when parallel calls stream interleaved', () => {
    it('should keep each call apart by id, rebuild both arguments, and end both at the turn end (verified by @ag-ui/client)', async () => {
      const events = translate([
        F.runStarted(10),
        F.toolCallDelta(20, 'call-1', '', { name: 'read_file', parentMessageId: 'm-1' }),
        F.toolCallDelta(21, 'call-2', '', { name: 'list_dir', parentMessageId: 'm-1' }),
        F.toolCallDelta(22, 'call-1', '{"path":'),
        F.toolCallDelta(23, 'call-2', '{"dir":'),
        F.toolCallDelta(24, 'call-1', '"a.txt"}'),
        F.toolCallDelta(25, 'call-2', '"."}'),
        F.turnEnd(30, { terminal: 'requires_action', customToolUses: [readFile, listDir] }),
        F.toolResult(40, readFile, 'hello'),
        F.toolResult(41, listDir, 'a.txt'),
        F.runFinished(50),
      ]);
      expect(shape(events)).toEqual([
        'RUN_STARTED',
        'TOOL_CALL_START call-1',
        'TOOL_CALL_START call-2',
        'TOOL_CALL_ARGS call-1',
        'TOOL_CALL_ARGS call-2',
        'TOOL_CALL_ARGS call-1',
        'TOOL_CALL_ARGS call-2',
        'TOOL_CALL_END call-1',
        'TOOL_CALL_END call-2',
        'CUSTOM agentrx.turn_end',
        'TOOL_CALL_RESULT call-1',
        'TOOL_CALL_RESULT call-2',
        'RUN_FINISHED',
      ]);
      expect(JSON.parse(argsOf(events, 'call-1'))).toEqual(readFile.input);
      expect(JSON.parse(argsOf(events, 'call-2'))).toEqual(listDir.input);
      await expect(verified(events)).resolves.toHaveLength(events.length);
    });
  });

  describe('when one call streams and another of the turn does not', () => {
    it('should close the streamed one and announce the other whole', () => {
      const events = translate([
        F.runStarted(10),
        F.toolCallDelta(20, 'call-1', '{"path":"a.txt"}', { name: 'read_file' }),
        F.turnEnd(30, { terminal: 'requires_action', customToolUses: [readFile, listDir] }),
        F.runFinished(40),
      ]);
      expect(shape(events)).toEqual([
        'RUN_STARTED',
        'TOOL_CALL_START call-1',
        'TOOL_CALL_ARGS call-1',
        'TOOL_CALL_END call-1',
        'TOOL_CALL_START call-2',
        'TOOL_CALL_ARGS call-2',
        'TOOL_CALL_END call-2',
        'CUSTOM agentrx.turn_end',
        'RUN_FINISHED',
      ]);
    });
  });

  describe('when a call was renamed (a reused id given a derived one) and streamed under it', () => {
    it('should use that id from START to RESULT, apart from the earlier call of the model id', async () => {
      const first = toolUse('call_a', 'read_file', { path: 'a.txt' });
      const again = toolUse('call_a#2.0', 'read_file', { path: 'b.txt' });
      const events = translate([
        F.runStarted(10),
        F.turnEnd(20, { terminal: 'requires_action', customToolUses: [first] }),
        F.toolResult(21, first, 'A'),
        F.toolCallDelta(30, 'call_a#2.0', '{"path":', { name: 'read_file' }),
        F.toolCallDelta(31, 'call_a#2.0', '"b.txt"}'),
        F.turnEnd(40, { turn: 2, terminal: 'requires_action', customToolUses: [again] }),
        F.toolResult(41, again, 'B'),
        F.runFinished(50),
      ]);
      const ofRenamed = events.filter((e) => 'toolCallId' in e && e.toolCallId === 'call_a#2.0').map((e) => e.type);
      expect(ofRenamed).toEqual(['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT']);
      await expect(verified(events)).resolves.toHaveLength(events.length);
    });
  });

  describe('when the final arguments differ from what the fragments spelled out', () => {
    it('should close the call and say what the tool runs with in a CUSTOM tool_call_args_replaced', () => {
      const events = translate([
        F.runStarted(10),
        F.toolCallDelta(20, 'call-1', '{"path":"draft.txt"}', { name: 'read_file' }),
        F.turnEnd(30, { terminal: 'requires_action', customToolUses: [readFile] }),
        F.runFinished(40),
      ]);
      const end = events.findIndex((e) => e.type === 'TOOL_CALL_END');
      expect(events[end + 1]).toEqual({
        type: 'CUSTOM',
        name: TOOL_CALL_ARGS_REPLACED_EVENT,
        value: { toolCallId: 'call-1', args: '{"path":"a.txt"}' },
        timestamp: 30,
      });
    });

    it('should say nothing more when they are the same JSON (key order and spacing aside), empty for {}, or undecodable', () => {
      const twoKeys = toolUse('call-1', 'copy', { from: 'a', to: 'b' });
      const none = toolUse('call-2', 'now', {});
      const broken: ToolUse = { id: 'call-3', name: 'copy', input: {}, inputError: 'Tool arguments are not valid JSON' };
      const events = translate([
        F.runStarted(10),
        F.toolCallDelta(20, 'call-1', '{ "to": "b",\n "from": "a" }', { name: 'copy' }),
        F.toolCallDelta(21, 'call-2', '', { name: 'now' }),
        F.toolCallDelta(22, 'call-3', '{"from":', { name: 'copy' }),
        F.turnEnd(30, { terminal: 'requires_action', customToolUses: [twoKeys, none, broken] }),
        F.runFinished(40),
      ]);
      expect(events.filter((e) => e.type === 'CUSTOM' && e.name === TOOL_CALL_ARGS_REPLACED_EVENT)).toEqual([]);
      expect(events.filter((e) => e.type === 'TOOL_CALL_START')).toHaveLength(3);
    });
  });

  describe('when a streamed call is not named by the turn end', () => {
    it('should close it with the turn and attach a host result reported for it', async () => {
      const events = translate([
        F.runStarted(10),
        F.toolCallDelta(20, 'dup-1', '{}', { name: 'read_file' }),
        F.hostToolResult(25, 'dup-1', 'duplicate call'),
        F.turnEnd(30),
        F.runFinished(40),
      ]);
      expect(shape(events)).toEqual([
        'RUN_STARTED',
        'TOOL_CALL_START dup-1',
        'TOOL_CALL_ARGS dup-1',
        'TOOL_CALL_END dup-1',
        'TOOL_CALL_RESULT dup-1',
        'CUSTOM agentrx.turn_end',
        'RUN_FINISHED',
      ]);
      await expect(verified(events)).resolves.toHaveLength(events.length);
    });
  });

  describe('when fragments cannot open a call', () => {
    it("should drop a nameless first fragment (and the call's later ones), then announce the call whole at the turn end", () => {
      const events = translate([
        F.runStarted(10),
        F.toolCallDelta(20, 'call-1', '{"path":'),
        F.toolCallDelta(21, 'call-1', '"a.txt"}', { name: 'read_file' }),
        F.turnEnd(30, { terminal: 'requires_action', customToolUses: [readFile] }),
        F.runFinished(40),
      ]);
      expect(shape(events)).toEqual([
        'RUN_STARTED',
        'TOOL_CALL_START call-1',
        'TOOL_CALL_ARGS call-1',
        'TOOL_CALL_END call-1',
        'CUSTOM agentrx.turn_end',
        'RUN_FINISHED',
      ]);
      expect(argsOf(events, 'call-1')).toBe('{"path":"a.txt"}');
    });

    it('should drop a fragment of a call already announced in the run (never reopening it) and malformed fragments', () => {
      const events = translate([
        F.runStarted(10),
        F.turnEnd(20, { terminal: 'requires_action', customToolUses: [readFile] }),
        F.toolCallDelta(30, 'call-1', '{}', { name: 'read_file' }),
        F.agentrx({ type: 'agentrx.tool_call_delta', toolUseId: '', argsDelta: '{}', name: 'x' }, 31),
        F.agentrx({ type: 'agentrx.tool_call_delta', toolUseId: 'call-9', argsDelta: 5 as unknown as string, name: 'x' }, 32),
        F.runFinished(40),
      ]);
      expect(events.filter((e) => e.type === 'TOOL_CALL_START')).toHaveLength(1);
      expect(events.at(-1)?.type).toBe('RUN_FINISHED');
    });
  });

  describe('when the model reasons before it answers', () => {
    it('should stream a REASONING span and message, and close both before the text starts', () => {
      scheduler.run(({ cold, expectObservable }) => {
        const source = cold('s--r----q--t' + '-'.repeat(5) + 'e---f|', {
          s: F.runStarted(10),
          r: F.reasoningDelta(20, 'Let me '),
          q: F.reasoningDelta(30, 'think.'),
          t: F.textDelta(40, 'Done.', 'msg-1'),
          e: F.turnEnd(50),
          f: F.runFinished(60),
        });
        expectObservable(source.pipe(toAgUi())).toBe('R--(GHK)K--(IJMC)(XP)F|', {
          R: { type: 'RUN_STARTED', threadId: F.threadId, runId: 'run-1', timestamp: 10 },
          G: { type: 'REASONING_START', messageId: 'msg-1.reasoning', timestamp: 20 },
          H: { type: 'REASONING_MESSAGE_START', messageId: 'msg-1.reasoning', role: 'reasoning', timestamp: 20 },
          K: {
            type: 'REASONING_MESSAGE_CONTENT',
            messageId: 'msg-1.reasoning',
            delta: expect.any(String) as unknown as string,
            timestamp: expect.any(Number) as unknown as number,
          },
          I: { type: 'REASONING_MESSAGE_END', messageId: 'msg-1.reasoning', timestamp: 40 },
          J: { type: 'REASONING_END', messageId: 'msg-1.reasoning', timestamp: 40 },
          M: { type: 'TEXT_MESSAGE_START', messageId: 'msg-1', role: 'assistant', timestamp: 40 },
          C: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg-1', delta: 'Done.', timestamp: 40 },
          X: { type: 'TEXT_MESSAGE_END', messageId: 'msg-1', timestamp: 50 },
          P: { type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn: 1, terminal: 'end_turn', stopReason: 'end_turn', usage: F.usage }, timestamp: 50 },
          F: {
            type: 'RUN_FINISHED',
            threadId: F.threadId,
            runId: 'run-1',
            result: { terminal: 'end_turn', stopReason: 'end_turn', turns: 1, usage: F.usage },
            timestamp: 60,
          },
        });
      });
    });

    it('should close the reasoning before a streamed tool call starts, and open a new one for another id (verified by @ag-ui/client)', async () => {
      const events = translate([
        F.runStarted(10),
        F.reasoningDelta(20, 'I need the file.', 'r-1'),
        F.toolCallDelta(30, 'call-1', '{"path":"a.txt"}', { name: 'read_file' }),
        F.turnEnd(40, { terminal: 'requires_action', customToolUses: [readFile] }),
        F.toolResult(45, readFile, 'hello'),
        F.reasoningDelta(50, 'It says hello.', 'r-2'),
        F.reasoningDelta(51, ' Now answer.', 'r-3'),
        F.textDelta(60, 'hello', 'm-2'),
        F.turnEnd(70, { turn: 2 }),
        F.runFinished(80),
      ]);
      expect(shape(events)).toEqual([
        'RUN_STARTED',
        'REASONING_START r-1',
        'REASONING_MESSAGE_START r-1',
        'REASONING_MESSAGE_CONTENT r-1',
        'REASONING_MESSAGE_END r-1',
        'REASONING_END r-1',
        'TOOL_CALL_START call-1',
        'TOOL_CALL_ARGS call-1',
        'TOOL_CALL_END call-1',
        'CUSTOM agentrx.turn_end',
        'TOOL_CALL_RESULT call-1',
        'REASONING_START r-2',
        'REASONING_MESSAGE_START r-2',
        'REASONING_MESSAGE_CONTENT r-2',
        'REASONING_MESSAGE_END r-2',
        'REASONING_END r-2',
        'REASONING_START r-3',
        'REASONING_MESSAGE_START r-3',
        'REASONING_MESSAGE_CONTENT r-3',
        'REASONING_MESSAGE_END r-3',
        'REASONING_END r-3',
        'TEXT_MESSAGE_START m-2',
        'TEXT_MESSAGE_CONTENT m-2',
        'TEXT_MESSAGE_END m-2',
        'CUSTOM agentrx.turn_end',
        'RUN_FINISHED',
      ]);
      await expect(verified(events)).resolves.toHaveLength(events.length);
    });

    it('should close the reasoning at the turn end when nothing else of the turn started, and drop empty or malformed reasoning', () => {
      const events = translate([
        F.runStarted(10),
        F.reasoningDelta(20, ''),
        F.agentrx({ type: 'agentrx.reasoning_delta', text: 'x', messageId: '' }, 21),
        F.reasoningDelta(22, 'only thinking'),
        F.turnEnd(30),
        F.runFinished(40),
      ]);
      expect(shape(events)).toEqual([
        'RUN_STARTED',
        'REASONING_START msg-1.reasoning',
        'REASONING_MESSAGE_START msg-1.reasoning',
        'REASONING_MESSAGE_CONTENT msg-1.reasoning',
        'REASONING_MESSAGE_END msg-1.reasoning',
        'REASONING_END msg-1.reasoning',
        'CUSTOM agentrx.turn_end',
        'RUN_FINISHED',
      ]);
    });
  });

  describe('when the run errors with a streamed call and reasoning open', () => {
    it('should close the reasoning, the text and the call before RUN_ERROR (verified by @ag-ui/client)', async () => {
      const events = translate([
        F.runStarted(10),
        F.textDelta(20, 'Reading.', 'm-1'),
        F.toolCallDelta(30, 'call-1', '{"path":', { name: 'read_file' }),
        F.reasoningDelta(40, 'hmm', 'r-1'),
        F.runError(50),
      ]);
      expect(shape(events).slice(-5)).toEqual(['REASONING_MESSAGE_END r-1', 'REASONING_END r-1', 'TEXT_MESSAGE_END m-1', 'TOOL_CALL_END call-1', 'RUN_ERROR']);
      await expect(verified(events)).resolves.toHaveLength(events.length);
    });

    it('should close them before the RUN_ERROR synthesized when the source ends or errors mid-run', () => {
      const open = [F.runStarted(10), F.toolCallDelta(20, 'call-1', '{', { name: 'read_file' }), F.reasoningDelta(30, 'hmm', 'r-1')];
      scheduler.run(({ cold, expectObservable }) => {
        const values = { s: open[0]!, c: open[1]!, r: open[2]! };
        const ends = { S: expect.anything(), A: expect.anything(), T: expect.anything(), G: expect.anything(), H: expect.anything(), K: expect.anything() };
        expectObservable(cold('sc---r----|', values).pipe(toAgUi())).toBe('S(TA)(GHK)(IJEZ|)', {
          ...ends,
          I: { type: 'REASONING_MESSAGE_END', messageId: 'r-1', timestamp: 30 },
          J: { type: 'REASONING_END', messageId: 'r-1', timestamp: 30 },
          E: { type: 'TOOL_CALL_END', toolCallId: 'call-1', timestamp: 30 },
          Z: { type: 'RUN_ERROR', message: 'event stream ended without a terminal event', code: 'incomplete', timestamp: 30 },
        });
        expectObservable(cold('sc---r----#', values, new Error('wire broke')).pipe(toAgUi())).toBe(
          'S(TA)(GHK)(IJEZ#)',
          {
            ...ends,
            I: { type: 'REASONING_MESSAGE_END', messageId: 'r-1', timestamp: 30 },
            J: { type: 'REASONING_END', messageId: 'r-1', timestamp: 30 },
            E: { type: 'TOOL_CALL_END', toolCallId: 'call-1', timestamp: 30 },
            Z: { type: 'RUN_ERROR', message: 'wire broke', code: 'stream_error', timestamp: 30 },
          },
          new Error('wire broke'),
        );
      });
    });
  });

  describe('when a new run follows one that ended with items open', () => {
    it('should start the new run clean: the same call id and reasoning id open again', async () => {
      const events = translate([
        F.runStarted(10, 'run-1'),
        F.toolCallDelta(20, 'call-1', '{', { name: 'read_file' }),
        F.reasoningDelta(21, 'hmm', 'r-1'),
        F.runError(30, 'run-1'),
        F.runStarted(40, 'run-2'),
        F.reasoningDelta(50, 'again', 'r-1'),
        F.toolCallDelta(60, 'call-1', '{}', { name: 'read_file' }),
        F.turnEnd(70, { terminal: 'requires_action', customToolUses: [toolUse('call-1', 'read_file', {})] }),
        F.runFinished(80, 'run-2'),
      ]);
      expect(events.filter((e) => e.type === 'TOOL_CALL_START')).toHaveLength(2);
      expect(events.filter((e) => e.type === 'REASONING_START')).toHaveLength(2);
      await expect(verified(events)).resolves.toHaveLength(events.length);
    });
  });
});
