import type { Context } from '@opentelemetry/api';
import { otelApi } from './otel-api.js';
import type { AgentRxConfig } from '../../core/config/agentrx.config.js';
import { AgentRxConfigToken } from '../../core/config/config-tokens.js';
import { inject, injectable, multiInject, optional } from '../../core/util/inversify.js';
import { ProviderRegistration } from '../../core/plugin/provider-registration.js';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import type { RunFinished, TurnEnd } from '../../core/events/session-event.js';
import type { Usage } from '../../core/model.js';
import {
  stopReasonForCode,
  type ConsumerContext,
  type ConsumerContextOf,
  type EventConsumer,
  type StopReason,
  type ToolCallResult,
  type ToolResultSource,
} from '../../core/plugin/event-consumer.js';
import { Attr, fail, genAiProviderName, sectionModel, sessionAttributes, type Failure } from './otel.attributes.js';
import { OtelConfig, OtelConsumerOptions } from './otel.config.js';
import { end, RunSpans, type RunSpansOptions, type Timed } from './otel.run-spans.js';

/** Instrumentation scope name of every span this consumer creates. */
export const OTEL_TRACER_NAME = 'agentrx';

/** Which session a `stop` is for; `threadId` pairs it with its session when given. */
export interface OtelStopContext {
  readonly sessionId?: string | undefined;
  readonly threadId?: string;
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
  run?: RunSpans;
  /** Code of the last RUN_ERROR, if any. */
  errorCode?: string;
  /** Consumer-wide order of this session's latest event (pairs a context-less `stop` with it). */
  lastSeen: number;
}

interface ResolvedOptions extends RunSpansOptions {
  readonly newTrace: boolean;
}

/**
 * Turns every session into one OpenTelemetry trace, using only `@opentelemetry/api`:
 *
 * ```
 * agentrx.session                     one per session (start → stop); gen_ai.conversation.id
 * └─ invoke_agent <agent>             one per run (RUN_STARTED → RUN_FINISHED | RUN_ERROR); run usage
 *    └─ agentrx.turn                  one per turn: its model request, then its tool calls
 *       ├─ chat <model>               the model request (turn start → the turn's end event); turn usage
 *       └─ execute_tool <tool>        one per tool call (TOOL_CALL_START → TOOL_CALL_RESULT)
 * ```
 *
 * Attributes follow the OpenTelemetry GenAI semantic conventions (`gen_ai.operation.name`,
 * `gen_ai.provider.name`, `gen_ai.agent.name`, `gen_ai.conversation.id`,
 * `gen_ai.request.model`, `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens` /
 * `output_tokens` on `chat` and `invoke_agent` spans only — so summing inference spans never
 * double-counts — `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`, `error.type`),
 * plus `agentrx.*` ids, turn numbers and session totals (see `otel.attributes.ts`). No prompt,
 * text, tool argument or result content is recorded unless `captureContent` is set.
 *
 * Span times come from the events' timestamps, not from when this consumer handles them, so a
 * slow queue does not distort durations; how turns and tool calls are timed is described on
 * {@link RunSpans}. RUN_ERROR ends every open span of the run with status ERROR and `error.type`
 * set to the run's error code (`cancelled`, `timeout`, `http_error`, …); when no turn is open,
 * the failure is recorded on a fresh turn whose `chat` span failed (the run was between model
 * requests). `stop(reason)` ends whatever is still open (status ERROR unless the reason is
 * `completed`) and the session span.
 *
 * One instance serves every session of an AgentRx; events are told apart by `threadId`, and the
 * consumer hub's `stop(reason, ctx)` names the thread of the session that ended. A `stop` without
 * a context (a direct call) is paired, when several sessions are open, with (1) a session
 * replaced by a newer one on the same thread, else (2) the most recently active session without
 * an open run whose last terminal matches the reason.
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
   * @param providers The registered providers (their telemetry names give `gen_ai.provider.name`).
   */
  constructor(
    @inject(OtelConsumerOptions) @optional() options?: OtelConsumerOptions,
    @inject(OtelConfig) @optional() section?: OtelConfig,
    @inject(AgentRxConfigToken) @optional() config?: AgentRxConfig,
    @multiInject(ProviderRegistration) @optional() providers: readonly ProviderRegistration[] = [],
  ) {
    const o = options ?? {};
    const providerId = o.providerId ?? config?.provider;
    this.opts = {
      tracer: (o.tracerProvider ?? otelApi().trace.getTracerProvider()).getTracer(OTEL_TRACER_NAME),
      captureContent: o.captureContent ?? section?.captureContent ?? false,
      agentName: o.agentName ?? section?.agentName ?? config?.agent?.name ?? 'agentrx',
      providerId,
      providerName: o.providerName ?? section?.providerName ?? genAiProviderName(providerId, providers),
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
   * consumer hub before the session's first event.
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
   * Called once per session by the consumer hub after its last event, with the session's
   * thread in `ctx`; without `ctx` the session is inferred (see the class doc).
   */
  stop(reason: StopReason, ctx?: OtelStopContext): void {
    const s = this.sessionToStop(reason, ctx);
    if (s) this.endSession(s, reason, Date.now());
  }

  /**
   * Called first for every event: opens the session span at the session's first event (with its
   * time) and marks the session active. The typed hooks below map the events onto spans.
   */
  onEvent(_ev: AgUiEvent, ctx: ConsumerContext): void {
    const s = this.sessions.get(ctx.threadId) ?? this.openSession(ctx.threadId, ctx.sessionId);
    this.sessionSpan(s, timeOf(ctx));
    s.lastSeen = ++this.eventCount;
  }

  /** Opens the run's `invoke_agent` span (a run still open is failed first: it never ended). */
  onRunStarted(_threadId: string, runId: string, ctx: ConsumerContext): void {
    const at = timeOf(ctx);
    const s = this.sessionOf(ctx);
    if (s.run) this.failRun(s, s.run, { type: 'incomplete', message: 'a new run started before this one ended' }, at);
    s.run = new RunSpans(this.opts, this.sessionSpan(s, at).ctx, s.threadId, runId, at);
  }

  /** A text message starts in the open turn's model request. */
  onTextStart(_messageId: string, _role: string, ctx: ConsumerContext): void {
    this.runOf(ctx)?.textStart(timeOf(ctx));
  }

  /** A text fragment of the open turn's model request. */
  onTextContent(_messageId: string, delta: string, ctx: ConsumerContext): void {
    this.runOf(ctx)?.textContent(delta, timeOf(ctx));
  }

  /** A tool call is announced. */
  onToolStart(toolCallId: string, toolName: string, ctx: ConsumerContext): void {
    this.runOf(ctx)?.toolStart(toolCallId, toolName, timeOf(ctx));
  }

  /** A fragment of a call's arguments. */
  onToolArgs(toolCallId: string, argsDelta: string, ctx: ConsumerContext): void {
    this.runOf(ctx)?.toolArgs(toolCallId, argsDelta);
  }

  /** A call's arguments are complete: its execution starts. */
  onToolArgsEnd(toolCallId: string, ctx: ConsumerContext): void {
    this.runOf(ctx)?.toolArgsEnd(toolCallId, timeOf(ctx));
  }

  /** A streamed call runs with other arguments than it streamed. */
  onToolArgsReplaced(toolCallId: string, args: string, ctx: ConsumerContextOf<TurnEnd>): void {
    this.runOf(ctx)?.toolArgsReplaced(toolCallId, args);
  }

  /** A turn closed: its model request's usage and finish reason. */
  onTurnEnd(turn: TurnEnd, ctx: ConsumerContextOf<TurnEnd>): void {
    this.runOf(ctx)?.turnEnd(turn, timeOf(ctx));
  }

  /** A tool's result ends its `execute_tool` span. */
  onToolResult(toolCallId: string, _result: ToolCallResult, ctx: ConsumerContextOf<ToolResultSource>): void {
    this.runOf(ctx)?.toolResult(toolCallId, ctx.source, timeOf(ctx));
  }

  /** Ends the run's spans with its outcome and counts it in the session's totals. */
  onRunFinished(_threadId: string, _runId: string, ctx: ConsumerContextOf<RunFinished>): void {
    const s = this.sessionOf(ctx);
    if (s.run) this.endRun(s, s.run.finish(ctx.source, timeOf(ctx)));
  }

  /** Fails the run's open spans with the error code as `error.type`. */
  onError(message: string, code: string | undefined, ctx: ConsumerContext): void {
    const s = this.sessionOf(ctx);
    if (!s.run) return;
    const errorType = code ?? '_OTHER';
    s.errorCode = errorType;
    this.failRun(s, s.run, { type: errorType, message }, timeOf(ctx));
  }

  /** The session of an event's thread (opened by `onEvent` when it had none). */
  private sessionOf(ctx: ConsumerContext): SessionState {
    return this.sessions.get(ctx.threadId) ?? this.openSession(ctx.threadId, ctx.sessionId);
  }

  /** The open run of an event's session; events outside a run are ignored. */
  private runOf(ctx: ConsumerContext): RunSpans | undefined {
    return this.sessions.get(ctx.threadId)?.run;
  }

  private openSession(threadId: string, sessionId: string | undefined): SessionState {
    const { context: otelContext, trace } = otelApi();
    const active = otelContext.active();
    const parent = this.opts.newTrace ? trace.deleteSpan(active) : active;
    const s: SessionState = { threadId, sessionId, parent, runs: 0, usage: { inputTokens: 0, outputTokens: 0 }, lastSeen: ++this.eventCount };
    this.sessions.set(threadId, s);
    return s;
  }

  private sessionSpan(s: SessionState, at: number): SessionSpan {
    if (s.opened) return s.opened;
    const { SpanKind, trace } = otelApi();
    const span = this.opts.tracer.startSpan(
      'agentrx.session',
      { kind: SpanKind.INTERNAL, startTime: at, attributes: sessionAttributes(this.opts, s.threadId, s.sessionId) },
      s.parent,
    );
    s.opened = { span, startAt: at, ctx: trace.setSpan(s.parent, span) };
    return s.opened;
  }

  /** Ends the run and everything open in it with status ERROR. */
  private failRun(s: SessionState, run: RunSpans, failure: Failure, at: number): void {
    this.endRun(s, run.fail(failure, at));
  }

  /** The run's spans have ended: count it and its usage in the session's totals. */
  private endRun(s: SessionState, usage: Usage): void {
    s.run = undefined;
    s.runs++;
    s.usage.inputTokens += usage.inputTokens;
    s.usage.outputTokens += usage.outputTokens;
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
      [Attr.stopReason]: reason,
      [Attr.sessionRuns]: s.runs,
      [Attr.totalInputTokens]: s.usage.inputTokens,
      [Attr.totalOutputTokens]: s.usage.outputTokens,
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
}

/** When the event was produced (its timestamp, which the hub puts in `ctx.at`), else now. */
function timeOf(ctx: ConsumerContext): number {
  return Number.isFinite(ctx.at) ? ctx.at : Date.now();
}
