import type { Context, Span, Tracer } from '@opentelemetry/api';
import { otelApi } from './otel-api.js';
import type { RunFinished, TurnEnd } from '../../core/events/session-event.js';
import type { Usage } from '../../core/model.js';
import type { ToolResultSource } from '../../core/plugin/event-consumer.js';
import {
  Attr,
  chatSpan,
  fail,
  finishReason,
  outputMessages,
  runAttributes,
  toolSpan,
  type Failure,
  type SpanLabels,
  type ToolCallInfo,
  type ToolOutcome,
} from './otel.attributes.js';

/** What {@link RunSpans} needs: the tracer, the labels, and whether to record content. */
export interface RunSpansOptions extends SpanLabels {
  readonly tracer: Tracer;
  readonly captureContent: boolean;
}

/** A span with the start time it was given (the API does not expose it; ends are clamped to it). */
export interface Timed {
  readonly span: Span;
  readonly startAt: number;
}

interface ToolCall extends ToolCallInfo {
  /** When the call's execution began: its TOOL_CALL_END (arguments complete), else its START. */
  startAt: number;
  args: string;
}

interface TurnState extends Timed {
  readonly ctx: Context;
  readonly chat: Timed;
  chatOpen: boolean;
  snapshotAt?: number;
  lastResultAt?: number;
  text: string;
  readonly calls: ToolCall[];
  readonly pending: Map<string, ToolCall>;
}

/**
 * The spans of one run: the `invoke_agent` span, one `agentrx.turn` span per turn with its
 * `chat` span (the model request), and one `execute_tool` span per tool call.
 *
 * A turn starts when the previous one ended (or at RUN_STARTED) and ends at its turn end (CUSTOM `agentrx.turn_end`) or
 * at its last tool result, whichever is later; a tool span starts when the call is announced, so
 * it includes any wait for a concurrency slot. A tool call that never gets a result (a host-side
 * tool, or a run that failed first) still gets a span, with `agentrx.tool.result_received: false`.
 * Times are the events' timestamps, passed in as `at`.
 */
export class RunSpans implements Timed {
  readonly span: Span;
  private readonly ctx: Context;
  /** Where the next model request starts: RUN_STARTED, then the end of the previous turn. */
  private nextTurnAt: number;
  private turns = 0;
  private readonly usage: Usage = { inputTokens: 0, outputTokens: 0 };
  private turn: TurnState | undefined;

  /** Opens the `invoke_agent` span at `startAt`, as a child of `parent` (the session span's context). */
  constructor(
    private readonly opts: RunSpansOptions,
    parent: Context,
    private readonly threadId: string,
    runId: string,
    readonly startAt: number,
  ) {
    this.span = opts.tracer.startSpan(
      `invoke_agent ${opts.agentName}`,
      { kind: otelApi().SpanKind.INTERNAL, startTime: startAt, attributes: runAttributes(opts, threadId, runId) },
      parent,
    );
    this.ctx = otelApi().trace.setSpan(parent, this.span);
    this.nextTurnAt = startAt;
  }

  /** A text message starts: it belongs to the model request of the open turn (or opens one). */
  textStart(at: number): void {
    this.turnFor(at);
  }

  /** A text fragment (kept for `gen_ai.output.messages` only with `captureContent`). */
  textContent(delta: string, at: number): void {
    const turn = this.turnFor(at);
    if (this.opts.captureContent) turn.text += delta;
  }

  /** A tool call is announced: its span starts here unless its arguments were still streaming. */
  toolStart(toolCallId: string, toolName: string, at: number): void {
    const turn = this.turnFor(at);
    const call: ToolCall = { id: toolCallId, name: toolName, startAt: at, args: '' };
    turn.calls.push(call);
    turn.pending.set(call.id, call);
  }

  /** A fragment of a call's arguments, until its turn ended. */
  toolArgs(toolCallId: string, delta: string): void {
    const turn = this.turn;
    const call = turn?.snapshotAt === undefined ? turn?.pending.get(toolCallId) : undefined;
    if (call) call.args += delta;
  }

  /** The arguments are complete. */
  toolArgsEnd(toolCallId: string, at: number): void {
    // Arguments that streamed took the model's time, not the tool's: the execution starts here.
    const call = this.turn?.pending.get(toolCallId);
    if (call) call.startAt = at;
  }

  /** The arguments the call runs with are `args`, not what its fragments spelled out. */
  toolArgsReplaced(toolCallId: string, args: string): void {
    const call = this.turn?.pending.get(toolCallId);
    if (call) call.args = args;
  }

  /** RUN_FINISHED: ends the open turn and the run span. Returns the run's usage. */
  finish(outcome: RunFinished, at: number): Usage {
    if (this.turn) this.closeTurn(this.turn, at);
    const usage = outcome.usage;
    this.span.setAttributes({ [Attr.inputTokens]: usage.inputTokens, [Attr.outputTokens]: usage.outputTokens, [Attr.runTurns]: outcome.turns });
    this.span.setAttribute(Attr.runTerminal, outcome.terminal);
    const reason = finishReason(outcome.stopReason);
    if (reason !== undefined) this.span.setAttribute(Attr.finishReasons, [reason]);
    // `terminated`: the host ended the session, or the run gave up (e.g. no_terminal_tool).
    if (outcome.terminal === 'terminated')
      fail(this.span, { type: 'terminated', message: `the run ended with terminal 'terminated'${reason !== undefined ? ` (${reason})` : ''}` });
    end(this, at);
    return usage;
  }

  /** Ends the run and everything open in it with status ERROR. Returns the run's usage so far. */
  fail(failure: Failure, at: number): Usage {
    // No turn open: the run failed between model requests, i.e. in the next one.
    const turn = this.turn ?? this.openTurn(at);
    this.closeTurn(turn, at, failure);
    this.span.setAttributes({ [Attr.inputTokens]: this.usage.inputTokens, [Attr.outputTokens]: this.usage.outputTokens, [Attr.runTurns]: this.turns });
    fail(this.span, failure);
    end(this, at);
    return this.usage;
  }

  /** The open turn, or a new one when the previous turn already had its snapshot. */
  private turnFor(at: number): TurnState {
    const current = this.turn;
    if (current && current.snapshotAt === undefined) return current;
    if (current) this.closeTurn(current, at);
    return this.openTurn(at);
  }

  private openTurn(at: number): TurnState {
    const startAt = Math.min(this.nextTurnAt, at);
    const number = this.turns + 1;
    const span = this.opts.tracer.startSpan(
      'agentrx.turn',
      { kind: otelApi().SpanKind.INTERNAL, startTime: startAt, attributes: { [Attr.turnNumber]: number } },
      this.ctx,
    );
    const ctx = otelApi().trace.setSpan(this.ctx, span);
    const { name, attributes } = chatSpan(this.opts, this.threadId);
    const chat = this.opts.tracer.startSpan(name, { kind: otelApi().SpanKind.CLIENT, startTime: startAt, attributes }, ctx);
    const turn: TurnState = { span, startAt, ctx, chat: { span: chat, startAt }, chatOpen: true, text: '', calls: [], pending: new Map() };
    this.turns = number;
    this.turn = turn;
    return turn;
  }

  /** The turn's end: the model request of the turn is over; the turn ends once its tools have. */
  turnEnd(snap: TurnEnd, at: number): void {
    const turn = this.turnFor(at);
    this.turns = Math.max(this.turns, snap.turn);
    turn.span.setAttribute(Attr.turnNumber, snap.turn);
    turn.span.setAttribute(Attr.turnTerminal, snap.terminal);
    turn.span.setAttribute(Attr.turnToolCalls, turn.calls.length);
    const chat = turn.chat.span;
    chat.setAttributes({ [Attr.inputTokens]: snap.usage.inputTokens, [Attr.outputTokens]: snap.usage.outputTokens });
    this.usage.inputTokens += snap.usage.inputTokens;
    this.usage.outputTokens += snap.usage.outputTokens;
    const reason = finishReason(snap.stopReason);
    if (reason !== undefined) chat.setAttribute(Attr.finishReasons, [reason]);
    if (this.opts.captureContent) chat.setAttribute(Attr.outputMessages, outputMessages(turn.text, turn.calls, reason ?? snap.terminal));
    end(turn.chat, at);
    turn.chatOpen = false;
    turn.snapshotAt = at;
    if (turn.pending.size === 0) this.closeTurn(turn, at);
  }

  /** A tool's result: its span ends here (a result with no announced call gets a span of its own). */
  toolResult(toolCallId: string, source: ToolResultSource, at: number): void {
    const local = source.type === 'agentrx.tool_result' ? source : undefined;
    // A host-run tool's result (no duration, never replayed) still says whether it failed.
    const outcome: ToolOutcome = {
      received: true,
      content: source.result.content,
      isError: source.result.isError,
      ...(local ? { replayed: local.replayed } : {}),
      ...(local && isCount(local.durationMs) ? { durationMs: local.durationMs } : {}),
    };
    const turn = this.turn;
    const call = turn?.pending.get(toolCallId);
    if (turn && call) {
      turn.pending.delete(toolCallId);
      turn.lastResultAt = Math.max(turn.lastResultAt ?? at, at);
      this.toolSpan(turn.ctx, call, at, outcome);
      if (turn.snapshotAt !== undefined && turn.pending.size === 0) this.closeTurn(turn, at);
      return;
    }
    // A result without an announced call (a redrive after a reconnect or a resume): its own span.
    const startAt = outcome.durationMs !== undefined ? at - outcome.durationMs : at;
    this.toolSpan(turn?.ctx ?? this.ctx, { id: toolCallId, name: local?.toolUse.name ?? '', startAt, args: '' }, at, outcome);
    // Between turns, the next model request waits for this result.
    if (!turn) this.nextTurnAt = Math.max(this.nextTurnAt, at);
  }

  private toolSpan(parent: Context, call: ToolCall, at: number, outcome: ToolOutcome): void {
    const { name, attributes } = toolSpan(call, outcome, this.threadId, this.opts.captureContent);
    const span = this.opts.tracer.startSpan(name, { kind: otelApi().SpanKind.INTERNAL, startTime: call.startAt, attributes }, parent);
    if (outcome.error) fail(span, outcome.error);
    else if (outcome.isError === true) fail(span, { type: 'tool_error', message: 'the tool returned an error result' });
    end({ span, startAt: call.startAt }, at);
  }

  /**
   * Ends a turn: its chat span if still open, a span for every call still without a result,
   * then the turn span. Normally at the later of its snapshot and its last result; with a
   * `failure`, at `at`, everything with status ERROR.
   */
  private closeTurn(turn: TurnState, at: number, failure?: Failure): void {
    const endAt = failure ? at : Math.max(turn.snapshotAt ?? at, turn.lastResultAt ?? 0);
    if (turn.chatOpen) {
      turn.chatOpen = false;
      if (failure) fail(turn.chat.span, failure);
      end(turn.chat, endAt);
    }
    for (const call of turn.pending.values()) {
      // Without a failure, a call that never got a result ran on the host (a server tool): its duration is unknown.
      this.toolSpan(turn.ctx, call, failure ? at : call.startAt, failure ? { received: false, error: failure } : { received: false });
    }
    turn.pending.clear();
    if (failure) fail(turn.span, failure);
    end(turn, endAt);
    this.nextTurnAt = Math.max(endAt, turn.startAt);
    if (this.turn === turn) this.turn = undefined;
  }
}

/** A finite, non-negative number (a duration a log written elsewhere may lack). */
function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/** Ends a span at `at`, never before its start. */
export function end(t: Timed, at: number): void {
  t.span.end(Math.max(at, t.startAt));
}
