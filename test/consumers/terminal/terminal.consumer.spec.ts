import { jest } from '@jest/globals';
import { PassThrough } from 'node:stream';
import type { AgentRxEvent } from '../../../src/core/events/session-event.js';
import type { ToolUse } from '../../../src/core/model.js';
import { TerminalConsumer } from '../../../src/consumers/terminal/terminal.consumer.js';
import { HubFeed } from '../feed-hub.js';

class Screen extends PassThrough {
  text = '';
  writes = 0;
  constructor(
    readonly isTTY: boolean,
    readonly columns = 100,
  ) {
    super();
    this.on('data', (c: Buffer) => {
      this.text += c.toString();
      this.writes++;
    });
  }
}

const usage = { inputTokens: 0, outputTokens: 0 };
const started: AgentRxEvent = { type: 'agentrx.run_started', runId: 'r', threadId: 't', resumed: false };
const text = (messageId: string, t: string): AgentRxEvent => ({ type: 'agentrx.text_delta', text: t, messageId });
const turnEnd = (customToolUses: ToolUse[], serverToolUses: ToolUse[] = []): AgentRxEvent => ({
  type: 'agentrx.turn_end',
  turn: 1,
  terminal: 'requires_action',
  stopReason: 'tool_calls',
  usage,
  customToolUses,
  serverToolUses,
});
const toolResult = (id: string, name: string, content: string, isError: boolean): AgentRxEvent => ({
  type: 'agentrx.tool_result',
  toolUse: { id, name, input: {} },
  result: { toolUseId: id, content, isError },
  replayed: false,
  durationMs: 5,
});
const finished = (turns: number, inputTokens = 0, outputTokens = 0): AgentRxEvent => ({
  type: 'agentrx.run_finished',
  runId: 'r',
  threadId: 't',
  terminal: 'end_turn',
  stopReason: 'end_turn',
  turns,
  usage: { inputTokens, outputTokens },
});
const failed = (code: string, message: string): AgentRxEvent => ({ type: 'agentrx.run_error', runId: 'r', threadId: 't', code, message });

/**
 * A run with text, two tool calls (one failing) and a summary. Its AG-UI translation: 0 RUN_STARTED,
 * 1–3 the first message, 4 its end, 5–10 the two calls, 11 the turn's end, 12–13 the results, …
 */
const run: AgentRxEvent[] = [
  started,
  text('m1', 'Let me '),
  text('m1', 'check.'),
  turnEnd([
    { id: 'a', name: 'calculate', input: { expression: '2+2' } },
    { id: 'b', name: 'read_file', input: { path: 'nope.txt' } },
  ]),
  toolResult('a', 'calculate', '2+2 = 4', false),
  toolResult('b', 'read_file', "tool 'read_file' failed: 'nope.txt' does not exist", true),
  text('m2', 'It is 4.'),
  finished(2, 120, 30),
];

/** Feeds `events` to the consumer through the consumer hub, then stops it. */
async function play(c: TerminalConsumer, events: AgentRxEvent[]): Promise<void> {
  await new HubFeed([c]).push(...events).close();
}

describe('TerminalConsumer', () => {
  describe('hooks (fed through the consumer hub)', () => {
    describe('when stdout is not a TTY', () => {
      it('should print plain, deterministic lines with a summary', async () => {
        let t = 1_000;
        const screen = new Screen(false);
        await play(new TerminalConsumer({ out: screen, env: {}, now: () => (t += 100) }), run);
        expect(screen.text).toBe(
          [
            'Let me check.',
            '⚙ calculate({"expression":"2+2"}) → 2+2 = 4',
            '⚙ read_file({"path":"nope.txt"}) → tool \'read_file\' failed: \'nope.txt\' does not exist',
            'It is 4.',
            '✓ end_turn · turns 2 · tool calls 2 · tokens 120 in / 30 out · 0.3s',
            '',
          ].join('\n'),
        );
      });
    });

    describe("when the clock is the events' own (a replay)", () => {
      it('should time the run from its events, not from the wall clock', async () => {
        const screen = new Screen(false);
        await new HubFeed([new TerminalConsumer({ out: screen, env: {}, clock: 'events', now: () => 99_999 })])
          .at(5_000, started)
          .at(7_500, finished(1))
          .close();
        expect(screen.text).toBe('✓ end_turn · turns 1 · tool calls 0 · tokens 0 in / 0 out · 2.5s\n');
      });
    });

    describe('when the run errors', () => {
      it('should print the code and message', async () => {
        const screen = new Screen(false);
        await play(new TerminalConsumer({ out: screen, env: {} }), [run[0]!, run[1]!, failed('timeout', 'the run did not finish within 40 ms')]);
        expect(screen.text).toBe('Let me \n✗ error [timeout]: the run did not finish within 40 ms\n');
      });
    });

    describe('when the text, a tool call or its result carries terminal escape sequences (untrusted model or file text)', () => {
      it('should print them as visible control pictures, never execute them', async () => {
        const screen = new Screen(false);
        const title = '\u001b]0;pwned\u0007';
        const clear = '\u001b[2J\u001b[H';
        await play(new TerminalConsumer({ out: screen, env: {} }), [
          started,
          text('m1', `hi${title}${clear}\r\u009b31m`),
          turnEnd([{ id: 'a', name: `read${clear}`, input: { path: title } }]),
          toolResult('a', `read${clear}`, `file${clear}`, false),
          failed('timeout', `bad${title}`),
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

      it('should show running tools side by side on a live line redrawn at most 10 times a second', async () => {
        const screen = new Screen(true);
        const feed = new HubFeed([new TerminalConsumer({ out: screen, env: { NO_COLOR: '1' }, now: () => Date.now() })]);
        feed.push(...run.slice(0, 4));
        expect(screen.text).toMatch(/⠋ calculate 0\.0s {2}⠋ read_file 0\.0s$/);
        const before = screen.writes;
        jest.advanceTimersByTime(1_000);
        // Each redraw is a clear plus a draw: at most 10 redraws in a second.
        expect((screen.writes - before) / 2).toBeLessThanOrEqual(10);
        expect(screen.text).toMatch(/calculate 1\.0s {2}\S+ read_file 1\.0s$/);
        feed.push(run[4]!);
        const done = '\r\u001b[2K⚙ calculate({"expression":"2+2"}) → 2+2 = 4\n';
        expect(screen.text).toContain(done);
        expect(screen.text.slice(screen.text.lastIndexOf(done) + done.length)).toMatch(/^\S+ read_file 1\.0s$/);
        await feed.push(...run.slice(5)).close();
        expect(jest.getTimerCount()).toBe(0);
        expect(screen.text).not.toContain('\u001b[3');
      });

      it('should mark a tool whose result is an error red, and the others cyan', async () => {
        const screen = new Screen(true);
        await play(new TerminalConsumer({ out: screen, env: {} }), run);
        expect(screen.text).toContain('\u001b[36m⚙\u001b[0m calculate({"expression":"2+2"}) → 2+2 = 4\n');
        expect(screen.text).toContain('\u001b[31m⚙\u001b[0m read_file({"path":"nope.txt"}) → tool \'read_file\' failed');
      });

      it('should mark a host-run tool whose result is an error red, also when the result came before its call', async () => {
        const screen = new Screen(true);
        const denied: AgentRxEvent = { type: 'agentrx.host_tool_result', toolUse: { id: 'h' }, result: { content: 'denied', isError: true } };
        await play(new TerminalConsumer({ out: screen, env: {} }), [started, denied, turnEnd([], [{ id: 'h', name: 'web_fetch', input: {} }]), finished(1)]);
        expect(screen.text).toContain('\u001b[31m⚙\u001b[0m web_fetch({}) → denied\n');
      });

      it('should color errors red unless NO_COLOR is set', async () => {
        const screen = new Screen(true);
        await play(new TerminalConsumer({ out: screen, env: {} }), [started, failed('http_error', 'boom')]);
        expect(screen.text).toContain('\u001b[31m✗ error [http_error]: boom\u001b[0m');
      });
    });
  });
});

describe('TerminalConsumer with streamed calls and reasoning', () => {
  describe('hooks (fed through the consumer hub)', () => {
    describe('when a call streams its arguments, the model reasons first, and the final arguments replace the streamed ones', () => {
      it('should print no reasoning and show the call with the arguments it ran with', async () => {
        const screen = new Screen(false);
        await play(new TerminalConsumer({ out: screen, env: {}, now: () => 0 }), [
          started,
          { type: 'agentrx.reasoning_delta', text: 'secret thoughts', messageId: 'x' },
          { type: 'agentrx.tool_call_delta', toolUseId: 'a', name: 'read_file', argsDelta: '{"path":' },
          { type: 'agentrx.tool_call_delta', toolUseId: 'a', argsDelta: '"draft.txt"}' },
          turnEnd([{ id: 'a', name: 'read_file', input: { path: 'a.txt' } }]),
          toolResult('a', 'read_file', 'hello', false),
          finished(1),
        ]);
        expect(screen.text).not.toContain('secret');
        expect(screen.text.split('\n')[0]).toBe('⚙ read_file({"path":"a.txt"}) → hello');
      });
    });
  });
});
