import { context as otelContext, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { AgentRxConfig } from '../../core/config/agentrx.config.js';
import { AgentRxConfigToken } from '../../core/config/config-tokens.js';
import { inject, injectable, optional } from '../../core/di/inversify.js';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import { stopReasonForCode, type ConsumerContext, type EventConsumer, type StopReason } from '../../core/plugin/event-consumer.js';
import { OtelConfig, OtelConsumerOptions } from './otel.config.js';

/** Instrumentation scope name of every span this consumer creates. */
export const OTEL_TRACER_NAME = 'agentrx';

/** Where a session's `stop` comes from; `threadId` pairs it with its session when given. */
export interface OtelStopContext {
  readonly sessionId?: string | undefined;
  readonly threadId?: string;
}

/** Attribute keys (OpenTelemetry GenAI semantic conventions, plus `agentrx.*`). */
const A = {
  operation: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  outputMessages: 'gen_ai.output.messages',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  errorType: 'error.type',
  provider: 'agentrx.provider',
  sessionId: 'agentrx.session.id',
  stopReason: 'agentrx.session.stop_reason',
  sessionRuns: 'agentrx.session.runs',
  totalInputTokens: 'agentrx.usage.input_tokens',
  totalOutputTokens: 'agentrx.usage.output_tokens',
  runId: 'agentrx.run.id',
  runTurns: 'agentrx.run.turns',
  runTerminal: 'agentrx.run.terminal',
  turnNumber: 'agentrx.turn.number',
  turnTerminal: 'agentrx.turn.terminal',
  turnToolCalls: 'agentrx.turn.tool_calls',
  toolResultReceived: 'agentrx.tool.result_received',
  toolDurationMs: 'agentrx.tool.duration_ms',
  toolReplayed: 'agentrx.tool.replayed',
} as const;

interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** A span with the start time it was given (the API does not expose it; ends are clamped to it). */
interface Timed {
  readonly span: Span;
  readonly startAt: number;
}

interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly startAt: number;
  args: string;
}

interface TurnState extends Timed {
  readonly ctx: Context;
  readonly chat: Timed;
  chatOpen: boolean;
  number: number;
  snapshotAt?: number;
  lastResultAt?: number;
  text: string;
  readonly calls: ToolCall[];
  readonly pending: Map<string, ToolCall>;
}

interface RunState extends Timed {
  readonly ctx: Context;
  readonly threadId: string;
  /** Where the next model request starts: RUN_STARTED, then the end of the previous turn. */
  nextTurnAt: number;
  turns: number;
  readonly usage: Usage;
  turn?: TurnState;
}

interface SessionSpan extends Timed {
  readonly ctx: Context;
}

interface SessionState {
  readonly threadId: string;
  readonly sessionId: string | undefined;
  /** The context active at `start`: the session span's parent (unless `newTrace`). */
  readonly parent: Context;
  /** Created at the first event, with its timestamp, so no child starts before its parent. */
  opened?: SessionSpan;
  runs: number;
  readonly usage: Usage;
  run?: RunState;
  /** Code of the last RUN_ERROR, if any. */
  errorCode?: string;
  /** Consumer-wide order of this session's latest event (pairs a context-less `stop` with it). */
  lastSeen: number;
}

/** A failure to record on a span: `error.type` and the status description. */
interface Failure {
  readonly type: string;
  readonly message: string;
}

interface ToolOutcome {
  readonly received: boolean;
  readonly content?: string;
  readonly isError?: boolean;
  readonly durationMs?: number;
  readonly replayed?: boolean;
  readonly error?: Failure;
}

interface ResolvedOptions {
  readonly tracer: Tracer;
  readonly captureContent: boolean;
  readonly agentName: string;
  readonly providerId: string | undefined;
  readonly providerName: string;
  readonly requestModel: string | undefined;
  readonly newTrace: boolean;
}

/**
 * Turns every session into one OpenTelemetry trace, using only `@opentelemetry/api`:
 *
 * ```
 * agentrx.session                     one per session (start → stop); gen_ai.conversation.id
 * └─ invoke_agent <agent>             one per run (RUN_STARTED → RUN_FINISHED | RUN_ERROR); run usage
 *    └─ agentrx.turn                  one per turn: its model request, then its tool calls
 *       ├─ chat <model>               the model request (turn start → STATE_SNAPSHOT); turn usage
 *       └─ execute_tool <tool>        one per tool call (TOOL_CALL_START → TOOL_CALL_RESULT)
 * ```
 *
 * Attributes follow the OpenTelemetry GenAI semantic conventions (`gen_ai.operation.name`,
 * `gen_ai.provider.name`, `gen_ai.agent.name`, `gen_ai.conversation.id`,
 * `gen_ai.request.model`, `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens` /
 * `output_tokens` on `chat` and `invoke_agent` spans only — so summing inference spans never
 * double-counts — `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`, `error.type`),
 * plus `agentrx.*` ids, turn numbers and session totals. No prompt, text, tool argument or
 * result content is recorded unless `captureContent` is set.
 *
 * Span times come from the events' timestamps, not from when this consumer handles them, so a
 * slow queue does not distort durations. A turn starts when the previous one ended (or at
 * RUN_STARTED) and ends at its STATE_SNAPSHOT or at its last tool result, whichever is later;
 * a tool span starts when the call is announced, so it includes any wait for a concurrency slot.
 * A tool call that never gets a result (a host-side tool, or a run that failed first) still gets
 * a span, with `agentrx.tool.result_received: false`. RUN_ERROR ends every open span of the run
 * with status ERROR and `error.type` set to the run's error code (`cancelled`, `timeout`,
 * `http_error`, …); when no turn is open, the failure is recorded on a fresh turn whose `chat`
 * span failed (the run was between model requests). `stop(reason)` ends whatever is still open
 * (status ERROR unless the reason is `completed`) and the session span.
 *
 * One instance serves every session of an AgentRx; events are told apart by `threadId`. The
 * consumer contract's `stop(reason)` carries no session, so when several sessions are open it
 * is paired with (1) a session replaced by a newer one on the same thread, else (2) the most
 * recently active session without an open run whose last terminal matches the reason; pass
 * the optional second argument to pair it by thread.
 *
 * Register it with `otelConsumerModule(options)` (which also reads the `otel` config section
 * and derives agent name, provider and model from the config), or pass an instance to
 * `AgentRx.create({ consumers: [new OtelConsumer({ tracerProvider })] })`.
 */
@injectable()
export class OtelConsumer implements EventConsumer {
  /** Stable consumer id. */
  readonly id = 'otel';
  private readonly opts: ResolvedOptions;
  private readonly sessions = new Map<string, SessionState>();
  /** Sessions replaced by a newer session on the same thread: they get no more events, only their stop. */
  private readonly superseded: SessionState[] = [];
  private eventCount = 0;

  /**
   * @param options Programmatic options (win over everything else).
   * @param section The validated `otel` config section, when `otelConsumerModule` is loaded.
   * @param config The validated AgentRx config (for agent name, provider id and model defaults).
   */
  constructor(
    @inject(OtelConsumerOptions) @optional() options?: OtelConsumerOptions,
    @inject(OtelConfig) @optional() section?: OtelConfig,
    @inject(AgentRxConfigToken) @optional() config?: AgentRxConfig,
  ) {
    const o = options ?? {};
    const providerId = o.providerId ?? config?.provider;
    this.opts = {
      tracer: (o.tracerProvider ?? trace.getTracerProvider()).getTracer(OTEL_TRACER_NAME),
      captureContent: o.captureContent ?? section?.captureContent ?? false,
      agentName: o.agentName ?? section?.agentName ?? config?.agent?.name ?? 'agentrx',
      providerId,
      providerName: o.providerName ?? section?.providerName ?? genAiProviderName(providerId),
      requestModel: o.requestModel ?? section?.requestModel ?? config?.agent?.model ?? sectionModel(config, providerId),
      newTrace: o.newTrace ?? section?.newTrace ?? false,
    };
  }

  /** Number of sessions whose span is open (for tests and health checks). */
  get openSessions(): number {
    return this.sessions.size + this.superseded.length;
  }

  /**
   * Registers a session and captures the active OpenTelemetry context as its parent; the
   * session span itself opens at the first event, with that event's timestamp. Called by the
   * kernel before the session's first event.
   */
  start(ctx: { readonly sessionId: string | undefined; readonly threadId: string }): void {
    const existing = this.sessions.get(ctx.threadId);
    // A second session on the same thread (a resume while the old one is still stopping): the
    // thread's events go to the new one; the old one waits for its own stop, which comes first.
    if (existing) this.superseded.push(existing);
    this.openSession(ctx.threadId, ctx.sessionId);
  }

  /**
   * Ends every open span of a session and its session span (status ERROR unless `completed`).
   * Called once per session by the kernel after its last event. `ctx` is optional because the
   * consumer contract does not pass it yet; without it the session is inferred (see the class doc).
   */
  stop(reason: StopReason, ctx?: OtelStopContext): void {
    const s = this.sessionToStop(reason, ctx);
    if (s) this.endSession(s, reason, Date.now());
  }

  /** Maps one AG-UI event onto spans. Never throws on malformed input (it is ignored). */
  onEvent(ev: AgUiEvent, ctx: ConsumerContext): void {
    const at = timeOf(ev, ctx);
    const s = this.sessions.get(ctx.threadId) ?? this.openSession(ctx.threadId, ctx.sessionId);
    const session = this.sessionSpan(s, at);
    s.lastSeen = ++this.eventCount;
    if (ev.type === 'RUN_STARTED') return this.runStarted(s, session, ev.runId, at);
    const run = s.run;
    if (!run) return;
    switch (ev.type) {
      case 'TEXT_MESSAGE_START':
        this.turnFor(run, at);
        return;
      case 'TEXT_MESSAGE_CONTENT': {
        const turn = this.turnFor(run, at);
        if (this.opts.captureContent) turn.text += ev.delta;
        return;
      }
      case 'TOOL_CALL_START': {
        const turn = this.turnFor(run, at);
        const call: ToolCall = { id: ev.toolCallId, name: ev.toolCallName, startAt: at, args: '' };
        turn.calls.push(call);
        turn.pending.set(call.id, call);
        return;
      }
      case 'TOOL_CALL_ARGS': {
        const turn = run.turn;
        const call = turn?.snapshotAt === undefined ? turn?.pending.get(ev.toolCallId) : undefined;
        if (call) call.args += ev.delta;
        return;
      }
      case 'STATE_SNAPSHOT':
        return this.snapshot(run, ev.snapshot, at);
      case 'TOOL_CALL_RESULT':
        return this.toolResult(run, ev.toolCallId, ev.content, ev.rawEvent, at);
      case 'RUN_FINISHED':
        return this.runFinished(s, run, ev.result, at);
      case 'RUN_ERROR': {
        const errorType = ev.code ?? '_OTHER';
        s.errorCode = errorType;
        return this.failRun(s, run, { type: errorType, message: ev.message }, at);
      }
      default:
        return;
    }
  }

  // ---------------------------------------------------------------- sessions and runs

  private openSession(threadId: string, sessionId: string | undefined): SessionState {
    const active = otelContext.active();
    const parent = this.opts.newTrace ? trace.deleteSpan(active) : active;
    const s: SessionState = { threadId, sessionId, parent, runs: 0, usage: emptyUsage(), lastSeen: ++this.eventCount };
    this.sessions.set(threadId, s);
    return s;
  }

  private sessionSpan(s: SessionState, at: number): SessionSpan {
    if (s.opened) return s.opened;
    const attributes: Attributes = { [A.conversationId]: s.threadId, [A.agentName]: this.opts.agentName, [A.providerName]: this.opts.providerName };
    if (s.sessionId !== undefined) attributes[A.sessionId] = s.sessionId;
    if (this.opts.providerId !== undefined) attributes[A.provider] = this.opts.providerId;
    const span = this.opts.tracer.startSpan('agentrx.session', { kind: SpanKind.INTERNAL, startTime: at, attributes }, s.parent);
    s.opened = { span, startAt: at, ctx: trace.setSpan(s.parent, span) };
    return s.opened;
  }

  private endSession(s: SessionState, reason: StopReason, at: number): void {
    const old = this.superseded.indexOf(s);
    if (old >= 0) this.superseded.splice(old, 1);
    else this.sessions.delete(s.threadId);
    if (s.run) {
      const type = reason === 'completed' ? 'incomplete' : reason;
      s.errorCode ??= type;
      this.failRun(s, s.run, { type, message: `the session stopped (${reason}) before the run ended` }, at);
    }
    const session = this.sessionSpan(s, at);
    session.span.setAttributes({
      [A.stopReason]: reason,
      [A.sessionRuns]: s.runs,
      [A.totalInputTokens]: s.usage.inputTokens,
      [A.totalOutputTokens]: s.usage.outputTokens,
    });
    const errorType = s.errorCode ?? (reason === 'completed' ? undefined : reason);
    if (errorType !== undefined) fail(session.span, { type: errorType, message: `the session ended with ${errorType}` });
    end(session, at);
  }

  private sessionToStop(reason: StopReason, ctx: OtelStopContext | undefined): SessionState | undefined {
    // Stops come in session order on one thread, and a superseded session only awaits its stop.
    const older = this.superseded.find((s) => ctx?.threadId === undefined || s.threadId === ctx.threadId);
    if (older) return older;
    if (ctx?.threadId !== undefined) {
      const exact = this.sessions.get(ctx.threadId);
      if (exact) return exact;
    }
    const all = [...this.sessions.values()];
    if (all.length <= 1) return all[0];
    const idle = all.filter((s) => s.run === undefined);
    const pool = idle.length > 0 ? idle : all;
    const matching = pool.filter((s) => (s.errorCode === undefined ? reason === 'completed' : stopReasonForCode(s.errorCode) === reason));
    const candidates = matching.length > 0 ? matching : pool;
    return candidates.reduce((a, b) => (b.lastSeen > a.lastSeen ? b : a));
  }

  private runStarted(s: SessionState, session: SessionSpan, runId: string, at: number): void {
    if (s.run) this.failRun(s, s.run, { type: 'incomplete', message: 'a new run started before this one ended' }, at);
    const attributes: Attributes = {
      [A.operation]: 'invoke_agent',
      [A.providerName]: this.opts.providerName,
      [A.agentName]: this.opts.agentName,
      [A.conversationId]: s.threadId,
      [A.runId]: runId,
    };
    if (this.opts.requestModel !== undefined) attributes[A.requestModel] = this.opts.requestModel;
    const span = this.opts.tracer.startSpan(`invoke_agent ${this.opts.agentName}`, { kind: SpanKind.INTERNAL, startTime: at, attributes }, session.ctx);
    s.run = { span, startAt: at, ctx: trace.setSpan(session.ctx, span), threadId: s.threadId, nextTurnAt: at, turns: 0, usage: emptyUsage() };
  }

  private runFinished(s: SessionState, run: RunState, result: unknown, at: number): void {
    if (run.turn) this.closeTurn(run, run.turn, at);
    const r = isObject(result) ? result : {};
    const usage = usageOf(r['usage']) ?? run.usage;
    const turns = typeof r['turns'] === 'number' ? r['turns'] : run.turns;
    run.span.setAttributes({ [A.inputTokens]: usage.inputTokens, [A.outputTokens]: usage.outputTokens, [A.runTurns]: turns });
    const terminal = r['terminal'];
    if (typeof terminal === 'string') run.span.setAttribute(A.runTerminal, terminal);
    const reason = finishReason(r['stopReason']);
    if (reason !== undefined) run.span.setAttribute(A.finishReasons, [reason]);
    // `terminated`: the host ended the session, or the run gave up (e.g. no_terminal_tool).
    if (terminal === 'terminated') fail(run.span, { type: 'terminated', message: `the run ended with terminal 'terminated'${reason !== undefined ? ` (${reason})` : ''}` });
    end(run, at);
    s.run = undefined;
    s.runs++;
    addUsage(s.usage, usage);
  }

  /** Ends the run and everything open in it with status ERROR. */
  private failRun(s: SessionState, run: RunState, failure: Failure, at: number): void {
    // No turn open: the run failed between model requests, i.e. in the next one.
    const turn = run.turn ?? this.openTurn(run, at);
    this.closeTurn(run, turn, at, failure);
    run.span.setAttributes({ [A.inputTokens]: run.usage.inputTokens, [A.outputTokens]: run.usage.outputTokens, [A.runTurns]: run.turns });
    fail(run.span, failure);
    end(run, at);
    s.run = undefined;
    s.runs++;
    addUsage(s.usage, run.usage);
  }

  // ---------------------------------------------------------------- turns and tools

  /** The open turn, or a new one when the previous turn already had its snapshot. */
  private turnFor(run: RunState, at: number): TurnState {
    const current = run.turn;
    if (current && current.snapshotAt === undefined) return current;
    if (current) this.closeTurn(run, current, at);
    return this.openTurn(run, at);
  }

  private openTurn(run: RunState, at: number): TurnState {
    const startAt = Math.min(run.nextTurnAt, at);
    const number = run.turns + 1;
    const span = this.opts.tracer.startSpan('agentrx.turn', { kind: SpanKind.INTERNAL, startTime: startAt, attributes: { [A.turnNumber]: number } }, run.ctx);
    const ctx = trace.setSpan(run.ctx, span);
    const chatAttributes: Attributes = { [A.operation]: 'chat', [A.providerName]: this.opts.providerName, [A.conversationId]: run.threadId };
    if (this.opts.requestModel !== undefined) chatAttributes[A.requestModel] = this.opts.requestModel;
    const chatName = this.opts.requestModel !== undefined ? `chat ${this.opts.requestModel}` : 'chat';
    const chat = this.opts.tracer.startSpan(chatName, { kind: SpanKind.CLIENT, startTime: startAt, attributes: chatAttributes }, ctx);
    const turn: TurnState = { span, startAt, ctx, chat: { span: chat, startAt }, chatOpen: true, number, text: '', calls: [], pending: new Map() };
    run.turns = number;
    run.turn = turn;
    return turn;
  }

  private snapshot(run: RunState, snapshot: unknown, at: number): void {
    const turn = this.turnFor(run, at);
    const snap = isObject(snapshot) ? snapshot : {};
    const number = snap['turn'];
    if (typeof number === 'number' && Number.isInteger(number) && number > 0) {
      turn.number = number;
      run.turns = Math.max(run.turns, number);
      turn.span.setAttribute(A.turnNumber, number);
    }
    const terminal = typeof snap['terminal'] === 'string' ? snap['terminal'] : undefined;
    if (terminal !== undefined) turn.span.setAttribute(A.turnTerminal, terminal);
    turn.span.setAttribute(A.turnToolCalls, turn.calls.length);
    const chat = turn.chat.span;
    const usage = usageOf(snap['usage']);
    if (usage) {
      chat.setAttributes({ [A.inputTokens]: usage.inputTokens, [A.outputTokens]: usage.outputTokens });
      addUsage(run.usage, usage);
    }
    const reason = finishReason(snap['stopReason']);
    if (reason !== undefined) chat.setAttribute(A.finishReasons, [reason]);
    if (this.opts.captureContent) chat.setAttribute(A.outputMessages, outputMessages(turn, reason ?? terminal ?? 'stop'));
    end(turn.chat, at);
    turn.chatOpen = false;
    turn.snapshotAt = at;
    if (turn.pending.size === 0) this.closeTurn(run, turn, at);
  }

  private toolResult(run: RunState, toolCallId: string, content: string, rawEvent: unknown, at: number): void {
    const info = toolResultInfo(rawEvent);
    const turn = run.turn;
    const call = turn?.pending.get(toolCallId);
    if (turn && call) {
      turn.pending.delete(toolCallId);
      turn.lastResultAt = Math.max(turn.lastResultAt ?? at, at);
      this.toolSpan(run, turn.ctx, call, at, { received: true, content, ...info });
      if (turn.snapshotAt !== undefined && turn.pending.size === 0) this.closeTurn(run, turn, at);
      return;
    }
    // A result without an announced call (a redrive after a reconnect or a resume): its own span.
    const startAt = info.durationMs !== undefined ? at - info.durationMs : at;
    this.toolSpan(run, turn?.ctx ?? run.ctx, { id: toolCallId, name: info.name ?? '', startAt, args: '' }, at, { received: true, content, ...info });
    // Between turns, the next model request waits for this result.
    if (!turn) run.nextTurnAt = Math.max(run.nextTurnAt, at);
  }

  private toolSpan(run: RunState, parent: Context, call: ToolCall, at: number, outcome: ToolOutcome): void {
    const attributes: Attributes = {
      [A.operation]: 'execute_tool',
      [A.toolName]: call.name,
      [A.toolCallId]: call.id,
      [A.toolType]: 'function',
      [A.conversationId]: run.threadId,
      [A.toolResultReceived]: outcome.received,
    };
    if (outcome.durationMs !== undefined) attributes[A.toolDurationMs] = outcome.durationMs;
    if (outcome.replayed !== undefined) attributes[A.toolReplayed] = outcome.replayed;
    if (this.opts.captureContent) {
      if (call.args.length > 0) attributes[A.toolArguments] = call.args;
      if (outcome.content !== undefined) attributes[A.toolResult] = outcome.content;
    }
    const name = call.name.length > 0 ? `execute_tool ${call.name}` : 'execute_tool';
    const span = this.opts.tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: call.startAt, attributes }, parent);
    if (outcome.error) fail(span, outcome.error);
    else if (outcome.isError === true) fail(span, { type: 'tool_error', message: 'the tool returned an error result' });
    end({ span, startAt: call.startAt }, at);
  }

  /**
   * Ends a turn: its chat span if still open, a span for every call still without a result,
   * then the turn span. Normally at the later of its snapshot and its last result; with a
   * `failure`, at `at`, everything with status ERROR.
   */
  private closeTurn(run: RunState, turn: TurnState, at: number, failure?: Failure): void {
    const endAt = failure ? at : Math.max(turn.snapshotAt ?? at, turn.lastResultAt ?? 0);
    if (turn.chatOpen) {
      turn.chatOpen = false;
      if (failure) fail(turn.chat.span, failure);
      end(turn.chat, endAt);
    }
    for (const call of turn.pending.values()) {
      // Without a failure, a call that never got a result ran on the host (a server tool): its duration is unknown.
      this.toolSpan(run, turn.ctx, call, failure ? at : call.startAt, failure ? { received: false, error: failure } : { received: false });
    }
    turn.pending.clear();
    if (failure) fail(turn.span, failure);
    end(turn, endAt);
    run.nextTurnAt = Math.max(endAt, turn.startAt);
    if (run.turn === turn) run.turn = undefined;
  }
}

// ---------------------------------------------------------------- helpers

function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0 };
}

function addUsage(into: Usage, u: Usage): void {
  into.inputTokens += u.inputTokens;
  into.outputTokens += u.outputTokens;
}

/** `{ inputTokens, outputTokens }` when both are finite non-negative numbers. */
function usageOf(v: unknown): Usage | undefined {
  if (!isObject(v)) return undefined;
  const { inputTokens, outputTokens } = v;
  if (!isCount(inputTokens) || !isCount(outputTokens)) return undefined;
  return { inputTokens, outputTokens };
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

function isObject(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === 'object' && v !== null;
}

/** The event's timestamp (when it was produced), else the delivery context's. */
function timeOf(ev: AgUiEvent, ctx: ConsumerContext): number {
  return typeof ev.timestamp === 'number' && Number.isFinite(ev.timestamp) ? ev.timestamp : ctx.at;
}

/** Ends a span at `at`, never before its start. */
function end(t: Timed, at: number): void {
  t.span.end(Math.max(at, t.startAt));
}

/** Status ERROR with `error.type` (Recording Errors convention). */
function fail(span: Span, failure: Failure): void {
  span.setAttribute(A.errorType, failure.type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
}

/** A host's raw stop reason as one finish reason: a string, or an object's string `type`. */
function finishReason(stopReason: unknown): string | undefined {
  if (typeof stopReason === 'string' && stopReason.length > 0) return stopReason;
  if (isObject(stopReason) && typeof stopReason['type'] === 'string') return stopReason['type'];
  return undefined;
}

/** `gen_ai.output.messages` of a turn: its text and tool calls as one assistant message. */
function outputMessages(turn: TurnState, finish: string): string {
  const parts: Record<string, unknown>[] = [];
  if (turn.text.length > 0) parts.push({ type: 'text', content: turn.text });
  for (const call of turn.calls) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: parseArgs(call.args) });
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: finish }]);
}

function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/** What the verbatim `agentrx.tool_result` riding in `TOOL_CALL_RESULT.rawEvent` tells, if present. */
function toolResultInfo(raw: unknown): { name?: string; isError?: boolean; durationMs?: number; replayed?: boolean } {
  if (!isObject(raw) || raw['type'] !== 'agentrx.tool_result') return {};
  const out: { name?: string; isError?: boolean; durationMs?: number; replayed?: boolean } = {};
  const { toolUse, result, durationMs, replayed } = raw;
  if (isObject(toolUse) && typeof toolUse['name'] === 'string') out.name = toolUse['name'];
  if (isObject(result) && typeof result['isError'] === 'boolean') out.isError = result['isError'];
  if (isCount(durationMs)) out.durationMs = durationMs;
  if (typeof replayed === 'boolean') out.replayed = replayed;
  return out;
}

/** `gen_ai.provider.name` for an agentrx provider id (well-known values of the GenAI conventions). */
function genAiProviderName(providerId: string | undefined): string {
  switch (providerId) {
    case 'local':
      return 'openai';
    case 'claude-managed-agents':
      return 'anthropic';
    case 'bedrock-agentcore':
      return 'aws.bedrock';
    case undefined:
      return '_OTHER';
    default:
      return providerId;
  }
}

/** The `model` of the selected provider's validated config section, when it has one. */
function sectionModel(config: AgentRxConfig | undefined, providerId: string | undefined): string | undefined {
  if (!config || providerId === undefined) return undefined;
  const section: unknown = config.providers?.[providerId];
  const model = isObject(section) ? section['model'] : undefined;
  return typeof model === 'string' && model.length > 0 ? model : undefined;
}

