import type { Writable } from 'node:stream';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import type { RunFinished } from '../../core/events/session-event.js';
import type { ConsumerContext, ConsumerContextOf, EventConsumer, StopReason, ToolCallResult } from '../../core/plugin/event-consumer.js';

/** Options of the terminal renderer. */
export interface TerminalConsumerOptions {
  /** Where output goes (default process.stdout). The consumer is its sole writer while live; logs go to stderr. */
  readonly out?: Writable & { isTTY?: boolean; columns?: number };
  /** Live status line with spinners (default: when `out` is a TTY). Off → plain, deterministic lines. */
  readonly live?: boolean;
  /** ANSI colors (default: when live and NO_COLOR is unset). */
  readonly color?: boolean;
  /** Environment consulted for NO_COLOR (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Clock for elapsed times (tests pass a fake one). */
  readonly now?: () => number;
  /**
   * `events`: elapsed times come from the events' own times (`ctx.at`), as when a recorded
   * session is replayed; `wall` (default): from `now`.
   */
  readonly clock?: 'wall' | 'events';
  /** Redraw period of the live line in ms (default 100, i.e. at most 10 redraws a second). */
  readonly refreshMs?: number;
}

interface ToolState {
  readonly id: string;
  readonly name: string;
  args: string;
  /** Set when the arguments are complete: the tool is running locally from then on. */
  runningSince?: number;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const ARGS_MAX = 60;
const RESULT_MAX = 80;

/**
 * Renders a session for people. Assistant text streams as it arrives; each running tool has a
 * spinner and its elapsed time on one live status line (parallel tools side by side, redrawn at
 * most 10 times a second and flushed at once on lifecycle events); a finished tool prints
 * `⚙ name(args) → result`; errors are red with their code; a summary (turns, tool calls, tokens,
 * duration) closes each run. Reasoning (REASONING_*) is not shown: the terminal is for the answer
 * and the tools, and a model's thinking can be long. Without a TTY (or with `live: false`) there is no status line and
 * the output is plain lines, deterministic apart from timings; NO_COLOR turns colors off.
 */
export class TerminalConsumer implements EventConsumer {
  readonly id = 'terminal';
  private readonly out: Writable & { isTTY?: boolean; columns?: number };
  private readonly live: boolean;
  private readonly color: boolean;
  private readonly now: () => number;
  private readonly refreshMs: number;
  private readonly tools = new Map<string, ToolState>();
  private toolCalls = 0;
  private runStartedAt = 0;
  private atLineStart = true;
  private statusShown = false;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The time of the event being handled (the clock of `clock: 'events'`; 0 before the first). */
  private eventAt = 0;

  constructor(opts: TerminalConsumerOptions = {}) {
    const env = opts.env ?? process.env;
    this.out = opts.out ?? process.stdout;
    this.live = opts.live ?? this.out.isTTY === true;
    this.color = opts.color ?? (this.live && !env['NO_COLOR']);
    this.now = opts.clock === 'events' ? () => this.eventAt : (opts.now ?? Date.now);
    this.refreshMs = opts.refreshMs ?? 100;
  }

  /** A session starts: nothing is running yet. */
  start(): void {
    this.tools.clear();
    this.toolCalls = 0;
    this.runStartedAt = this.now();
  }

  /** Called first for every event: keeps the event clock (`clock: 'events'`). */
  onEvent(_ev: AgUiEvent, ctx: ConsumerContext): void {
    this.eventAt = ctx.at;
  }

  /** A run starts: its summary counts from here. */
  onRunStarted(): void {
    this.runStartedAt = this.now();
    this.toolCalls = 0;
  }

  /** Streams assistant text as it arrives (below the status line, which is redrawn after it). */
  onTextContent(_messageId: string, delta: string): void {
    this.clearStatus();
    this.write(neutralizeControls(delta));
    this.drawStatus();
  }

  /** Ends the message's line. */
  onTextEnd(): void {
    this.clearStatus();
    this.endLine();
    this.drawStatus();
  }

  /** Remembers a call, to print it with its arguments once it ran. */
  onToolStart(toolCallId: string, toolName: string): void {
    this.tools.set(toolCallId, { id: toolCallId, name: neutralizeControls(toolName), args: '' });
  }

  /** Collects a call's arguments. */
  onToolArgs(toolCallId: string, argsDelta: string): void {
    const t = this.tools.get(toolCallId);
    if (t) t.args += neutralizeControls(argsDelta);
  }

  /** The arguments are complete: a local tool runs from here (its spinner starts). */
  onToolArgsEnd(toolCallId: string): void {
    const t = this.tools.get(toolCallId);
    if (t) t.runningSince = this.now();
    this.refresh();
  }

  /** A streamed call's final arguments replaced what its fragments spelled out. */
  onToolArgsReplaced(toolCallId: string, args: string): void {
    const t = this.tools.get(toolCallId);
    if (t) t.args = neutralizeControls(args);
  }

  /** Prints the finished call `⚙ name(args) → result`, red when its result is an error. */
  onToolResult(toolCallId: string, result: ToolCallResult): void {
    this.toolDone(toolCallId, neutralizeControls(result.content), result.isError);
  }

  /** Prints the run's error with its code, in red. */
  onError(message: string, code: string | undefined): void {
    this.clearStatus();
    this.endLine();
    this.line(this.paint('31', `✗ error${code ? ` [${neutralizeControls(code)}]` : ''}: ${neutralizeControls(message)}`));
    this.settle();
  }

  /** Prints the run's summary: terminal, turns, tool calls, tokens, duration. */
  onRunFinished(_threadId: string, _runId: string, ctx: ConsumerContextOf<RunFinished>): void {
    this.clearStatus();
    this.endLine();
    this.line(this.summary(ctx.source));
    this.settle();
  }

  /** The session ended: clears the status line and stops its timer. */
  stop(_reason: StopReason): void {
    this.clearStatus();
    this.endLine();
    this.stopTimer();
  }

  private toolDone(id: string, content: string, failed: boolean): void {
    const t = this.tools.get(id);
    this.tools.delete(id);
    this.toolCalls++;
    this.clearStatus();
    this.endLine();
    const mark = this.paint(failed ? '31' : '36', '⚙');
    this.line(`${mark} ${t?.name ?? id}(${short(t?.args ?? '', ARGS_MAX)}) → ${short(content, RESULT_MAX)}`);
    this.refresh();
  }

  private summary(r: RunFinished): string {
    const secs = ((this.now() - this.runStartedAt) / 1000).toFixed(1);
    const tokens = `${r.usage.inputTokens} in / ${r.usage.outputTokens} out`;
    const ok = r.terminal !== 'terminated';
    const head = ok ? `✓ ${r.terminal}` : `✗ terminated${typeof r.stopReason === 'string' ? ` (${r.stopReason})` : ''}`;
    return this.paint(ok ? '32' : '33', head) + this.paint('2', ` · turns ${r.turns} · tool calls ${this.toolCalls} · tokens ${tokens} · ${secs}s`);
  }

  // ------------------------------------------------------------- live status line

  /** Redraws now (lifecycle events) and keeps a ≤10 Hz timer while tools run. */
  private refresh(): void {
    if (!this.live) return;
    this.clearStatus();
    this.drawStatus();
    const running = [...this.tools.values()].some((t) => t.runningSince !== undefined);
    if (running && !this.timer) {
      this.timer = setInterval(() => {
        this.frame++;
        this.clearStatus();
        this.drawStatus();
      }, this.refreshMs);
      this.timer.unref();
    } else if (!running) {
      this.stopTimer();
    }
  }

  private drawStatus(): void {
    if (!this.live || !this.atLineStart) return;
    const running = [...this.tools.values()].flatMap((t) => (t.runningSince === undefined ? [] : [{ name: t.name, since: t.runningSince }]));
    if (running.length === 0) return;
    const spin = SPINNER[this.frame % SPINNER.length] ?? '';
    const parts = running.map((t) => `${this.paint('36', spin)} ${t.name} ${((this.now() - t.since) / 1000).toFixed(1)}s`);
    const width = Math.max(20, (this.out.columns ?? 80) - 1);
    this.out.write(truncateVisible(parts.join('  '), width));
    this.statusShown = true;
  }

  private clearStatus(): void {
    if (!this.statusShown) return;
    this.out.write('\r\u001b[2K');
    this.statusShown = false;
  }

  private settle(): void {
    this.tools.clear();
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  // ------------------------------------------------------------- plain output

  private write(text: string): void {
    if (text.length === 0) return;
    this.out.write(text);
    this.atLineStart = text.endsWith('\n');
  }

  private line(text: string): void {
    this.write(`${text}\n`);
  }

  private endLine(): void {
    if (!this.atLineStart) this.write('\n');
  }

  private paint(code: string, text: string): string {
    return this.color ? `\u001b[${code}m${text}\u001b[0m` : text;
  }
}

function short(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Cuts a string with ANSI color codes to `width` visible characters. */
function truncateVisible(s: string, width: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\u001b') {
      const end = s.indexOf('m', i);
      out += s.slice(i, end + 1);
      i = end;
      continue;
    }
    if (visible >= width) break;
    out += s[i];
    visible++;
  }
  return out;
}

/**
 * `text` from a model, a tool or a file made safe for a terminal: every control character except
 * tab and newline is shown as its Unicode control picture (ESC as ␛, CR as ␍, DEL as ␡) and C1
 * controls as U+FFFD, so an escape sequence in the text (a title change, a screen clear, a
 * hyperlink) is printed, never executed. The renderer's own colours are added after this.
 */
export function neutralizeControls(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? '\u2421' : '\ufffd';
  });
}
