import { jest } from '@jest/globals';
import { PassThrough } from 'node:stream';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import type { ToolResultEvent } from '../../../src/core/events/session-event.js';
import type { ConsumerContext } from '../../../src/core/plugin/event-consumer.js';
import { TerminalConsumer } from '../../../src/consumers/terminal/terminal.consumer.js';

class Screen extends PassThrough {
  text = '';
  writes = 0;
  constructor(readonly isTTY: boolean, readonly columns = 100) {
    super();
    this.on('data', (c: Buffer) => {
      this.text += c.toString();
      this.writes++;
    });
  }
}

const ctx: ConsumerContext = { sessionId: 's', threadId: 't', runId: 'r', seq: 1, at: 0 };
/** The verbatim `agentrx.tool_result` that toAgUi puts in TOOL_CALL_RESULT.rawEvent. */
const toolResultRaw = (id: string, name: string, content: string, isError: boolean): ToolResultEvent => ({
  type: 'agentrx.tool_result',
  toolUse: { id, name, input: {} },
  result: { toolUseId: id, content, isError },
  replayed: false,
  durationMs: 5,
});

const run: AgUiEvent[] = [
  { type: 'RUN_STARTED', threadId: 't', runId: 'r' },
  { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Let me ' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'check.' },
  { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
  { type: 'TOOL_CALL_START', toolCallId: 'a', toolCallName: 'calculate' },
  { type: 'TOOL_CALL_ARGS', toolCallId: 'a', delta: '{"expression":"2+2"}' },
  { type: 'TOOL_CALL_END', toolCallId: 'a' },
  { type: 'TOOL_CALL_START', toolCallId: 'b', toolCallName: 'read_file' },
  { type: 'TOOL_CALL_ARGS', toolCallId: 'b', delta: '{"path":"nope.txt"}' },
  { type: 'TOOL_CALL_END', toolCallId: 'b' },
  { type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn: 1 } },
  { type: 'TOOL_CALL_RESULT', messageId: 'a:r', toolCallId: 'a', content: '2+2 = 4', rawEvent: toolResultRaw('a', 'calculate', '2+2 = 4', false) },
  { type: 'TOOL_CALL_RESULT', messageId: 'b:r', toolCallId: 'b', content: "tool 'read_file' failed: 'nope.txt' does not exist", rawEvent: toolResultRaw('b', 'read_file', "tool 'read_file' failed: 'nope.txt' does not exist", true) },
  { type: 'TEXT_MESSAGE_START', messageId: 'm2', role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm2', delta: 'It is 4.' },
  { type: 'TEXT_MESSAGE_END', messageId: 'm2' },
  { type: 'RUN_FINISHED', threadId: 't', runId: 'r', result: { terminal: 'end_turn', turns: 2, usage: { inputTokens: 120, outputTokens: 30 } } },
];

function play(c: TerminalConsumer, events: AgUiEvent[]): void {
  c.start();
  for (const e of events) c.onEvent(e, ctx);
  c.stop('completed');
}

describe('TerminalConsumer', () => {
  describe('.onEvent', () => {
    describe('when stdout is not a TTY', () => {
      it('should print plain, deterministic lines with a summary', () => {
        let t = 1_000;
        const screen = new Screen(false);
        play(new TerminalConsumer({ out: screen, env: {}, now: () => (t += 100) }), run);
        expect(screen.text).toBe(
          [
            'Let me check.',
            '⚙ calculate({"expression":"2+2"}) → 2+2 = 4',
            "⚙ read_file({\"path\":\"nope.txt\"}) → tool 'read_file' failed: 'nope.txt' does not exist",
            'It is 4.',
            '✓ end_turn · turns 2 · tool calls 2 · tokens 120 in / 30 out · 0.3s',
            '',
          ].join('\n'),
        );
      });
    });

    describe('when the run errors', () => {
      it('should print the code and message', () => {
        const screen = new Screen(false);
        play(new TerminalConsumer({ out: screen, env: {} }), [run[0]!, run[1]!, run[2]!, { type: 'RUN_ERROR', message: 'the run did not finish within 40 ms', code: 'timeout' }]);
        expect(screen.text).toBe('Let me \n✗ error [timeout]: the run did not finish within 40 ms\n');
      });
    });

    describe('when the text, a tool call or its result carries terminal escape sequences (untrusted model or file text)', () => {
      it('should print them as visible control pictures, never execute them', () => {
        const screen = new Screen(false);
        const title = '\u001b]0;pwned\u0007';
        const clear = '\u001b[2J\u001b[H';
        play(new TerminalConsumer({ out: screen, env: {} }), [
          run[0]!,
          { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' },
          { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: `hi${title}${clear}\r\u009b31m` },
          { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
          { type: 'TOOL_CALL_START', toolCallId: 'a', toolCallName: `read${clear}` },
          { type: 'TOOL_CALL_ARGS', toolCallId: 'a', delta: `{"path":"${title}"}` },
          { type: 'TOOL_CALL_END', toolCallId: 'a' },
          { type: 'TOOL_CALL_RESULT', messageId: 'r1', toolCallId: 'a', content: `file${clear}` },
          { type: 'RUN_ERROR', message: `bad${title}`, code: 'timeout' },
        ]);
        // eslint-disable-next-line no-control-regex -- the test looks for the very characters the renderer must neutralize
        expect(screen.text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
        expect(screen.text).toContain('hi␛]0;pwned␇␛[2J␛[H␍\ufffd31m');
        expect(screen.text).toContain('read␛[2J␛[H');
        expect(screen.text).toContain('✗ error [timeout]: bad␛]0;pwned␇');
      });
    });

    describe('when stdout is a TTY', () => {
      beforeEach(() => jest.useFakeTimers());
      afterEach(() => jest.useRealTimers());

      it('should show running tools side by side on a live line redrawn at most 10 times a second', () => {
        const screen = new Screen(true);
        const c = new TerminalConsumer({ out: screen, env: { NO_COLOR: '1' }, now: () => Date.now() });
        c.start();
        for (const e of run.slice(0, 12)) c.onEvent(e, ctx);
        expect(screen.text).toMatch(/⠋ calculate 0\.0s {2}⠋ read_file 0\.0s$/);
        const before = screen.writes;
        jest.advanceTimersByTime(1_000);
        // Each redraw is a clear plus a draw: at most 10 redraws in a second.
        expect((screen.writes - before) / 2).toBeLessThanOrEqual(10);
        expect(screen.text).toMatch(/calculate 1\.0s {2}\S+ read_file 1\.0s$/);
        c.onEvent(run[12]!, ctx);
        const done = '\r\u001b[2K⚙ calculate({"expression":"2+2"}) → 2+2 = 4\n';
        expect(screen.text).toContain(done);
        expect(screen.text.slice(screen.text.lastIndexOf(done) + done.length)).toMatch(/^\S+ read_file 1\.0s$/);
        for (const e of run.slice(13)) c.onEvent(e, ctx);
        c.stop('completed');
        expect(jest.getTimerCount()).toBe(0);
        expect(screen.text).not.toContain('\u001b[3');
      });

      it('should mark a tool whose verbatim result is an error red, and the others cyan', () => {
        const screen = new Screen(true);
        play(new TerminalConsumer({ out: screen, env: {} }), run);
        expect(screen.text).toContain('\u001b[36m⚙\u001b[0m calculate({"expression":"2+2"}) → 2+2 = 4\n');
        expect(screen.text).toContain("\u001b[31m⚙\u001b[0m read_file({\"path\":\"nope.txt\"}) → tool 'read_file' failed");
      });

      it('should mark a host-run tool whose result is an error red', () => {
        const screen = new Screen(true);
        const denied: AgUiEvent[] = [
          { type: 'RUN_STARTED', threadId: 't', runId: 'r' },
          { type: 'TOOL_CALL_START', toolCallId: 'h', toolCallName: 'web_fetch' },
          { type: 'TOOL_CALL_ARGS', toolCallId: 'h', delta: '{}' },
          { type: 'TOOL_CALL_END', toolCallId: 'h' },
          { type: 'TOOL_CALL_RESULT', messageId: 'h:result', toolCallId: 'h', content: 'denied', rawEvent: { type: 'agentrx.host_tool_result', toolUse: { id: 'h' }, result: { content: 'denied', isError: true } } },
          { type: 'RUN_FINISHED', threadId: 't', runId: 'r', result: { terminal: 'end_turn', turns: 1 } },
        ];
        play(new TerminalConsumer({ out: screen, env: {} }), denied);
        expect(screen.text).toContain('\u001b[31m⚙\u001b[0m web_fetch({}) → denied\n');
      });

      it('should color errors red unless NO_COLOR is set', () => {
        const screen = new Screen(true);
        play(new TerminalConsumer({ out: screen, env: {} }), [run[0]!, { type: 'RUN_ERROR', message: 'boom', code: 'http_error' }]);
        expect(screen.text).toContain('\u001b[31m✗ error [http_error]: boom\u001b[0m');
      });
    });
  });
});

describe('TerminalConsumer with streamed calls and reasoning', () => {
  describe('.onEvent', () => {
    describe('when a call streams its arguments, the model reasons first, and the final arguments replace the streamed ones', () => {
      it('should print no reasoning and show the call with the arguments it ran with', () => {
        const screen = new Screen(false);
        play(new TerminalConsumer({ out: screen, env: {}, now: () => 0 }), [
          { type: 'RUN_STARTED', threadId: 't', runId: 'r' },
          { type: 'REASONING_START', messageId: 'x' },
          { type: 'REASONING_MESSAGE_START', messageId: 'x', role: 'reasoning' },
          { type: 'REASONING_MESSAGE_CONTENT', messageId: 'x', delta: 'secret thoughts' },
          { type: 'REASONING_MESSAGE_END', messageId: 'x' },
          { type: 'REASONING_END', messageId: 'x' },
          { type: 'TOOL_CALL_START', toolCallId: 'a', toolCallName: 'read_file' },
          { type: 'TOOL_CALL_ARGS', toolCallId: 'a', delta: '{"path":' },
          { type: 'TOOL_CALL_ARGS', toolCallId: 'a', delta: '"draft.txt"}' },
          { type: 'TOOL_CALL_END', toolCallId: 'a' },
          { type: 'CUSTOM', name: 'agentrx.tool_call_args_replaced', value: { toolCallId: 'a', args: '{"path":"a.txt"}' } },
          { type: 'TOOL_CALL_RESULT', messageId: 'a:r', toolCallId: 'a', content: 'hello', rawEvent: toolResultRaw('a', 'read_file', 'hello', false) },
          { type: 'RUN_FINISHED', threadId: 't', runId: 'r', result: { terminal: 'end_turn', turns: 1 } },
        ]);
        expect(screen.text).not.toContain('secret');
        expect(screen.text.split('\n')[0]).toBe('⚙ read_file({"path":"a.txt"}) → hello');
      });
    });
  });
});
