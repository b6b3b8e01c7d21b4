import type { Writable } from 'node:stream';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import type { ConsumerContext, EventConsumer, StopReason } from '../../core/plugin/event-consumer.js';

/** Options of the terminal renderer. */
export interface TerminalConsumerOptions {
  /** Where output goes (default process.stdout). The consumer is its sole writer while live. */
  readonly out?: Writable & { isTTY?: boolean };
  /** Colors: default on for a TTY unless NO_COLOR is set. */
  readonly color?: boolean;
  /** Clock for durations (tests pass a fixed one). */
  readonly now?: () => number;
}

interface ToolLine {
  name: string;
  args: string;
}

/**
 * Renders a session for people: streamed assistant text, one line per finished tool call
 * (name, short arguments, result summary), errors with their code, and a final summary
 * (turns, tool calls, tokens, duration). Plain lines when colors are off.
 */
export class TerminalConsumer implements EventConsumer {
  readonly id = 'terminal';
  private readonly out: Writable & { isTTY?: boolean };
  private readonly color: boolean;
  private readonly now: () => number;
  private readonly tools = new Map<string, ToolLine>();
  private toolCalls = 0;
  private startedAt = 0;
  private atLineStart = true;

  constructor(opts: TerminalConsumerOptions = {}) {
    this.out = opts.out ?? process.stdout;
    this.color = opts.color ?? (this.out.isTTY === true && !process.env['NO_COLOR']);
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    this.startedAt = this.now();
    this.toolCalls = 0;
    this.tools.clear();
  }

  onEvent(ev: AgUiEvent, _ctx: ConsumerContext): void {
    switch (ev.type) {
      case 'TEXT_MESSAGE_CONTENT':
        this.write(ev.delta);
        break;
      case 'TEXT_MESSAGE_END':
        this.endLine();
        break;
      case 'TOOL_CALL_START':
        this.tools.set(ev.toolCallId, { name: ev.toolCallName, args: '' });
        break;
      case 'TOOL_CALL_ARGS': {
        const t = this.tools.get(ev.toolCallId);
        if (t) t.args += ev.delta;
        break;
      }
      case 'TOOL_CALL_RESULT': {
        const t = this.tools.get(ev.toolCallId);
        this.toolCalls++;
        this.endLine();
        const failed = /^(\{"error"|tool '|unknown tool|invalid )/.test(ev.content);
        this.line(`${this.paint(failed ? '31' : '36', '⚙')} ${t?.name ?? ev.toolCallId}(${short(t?.args ?? '', 60)}) → ${short(ev.content, 80)}`);
        break;
      }
      case 'RUN_ERROR':
        this.endLine();
        this.line(this.paint('31', `✗ error${ev.code ? ` [${ev.code}]` : ''}: ${ev.message}`));
        break;
      case 'RUN_FINISHED': {
        this.endLine();
        const r = (ev.result ?? {}) as { turns?: number; usage?: { inputTokens?: number; outputTokens?: number }; terminal?: string };
        const secs = ((this.now() - this.startedAt) / 1000).toFixed(1);
        const tokens = `${r.usage?.inputTokens ?? 0} in / ${r.usage?.outputTokens ?? 0} out`;
        this.line(this.paint('32', `✓ ${r.terminal ?? 'done'}`) + this.paint('2', ` · turns ${r.turns ?? 0} · tool calls ${this.toolCalls} · tokens ${tokens} · ${secs}s`));
        break;
      }
      default:
        break;
    }
  }

  stop(_reason: StopReason): void {
    this.endLine();
  }

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
