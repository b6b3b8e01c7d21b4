import { Observable, type OperatorFunction } from '../../util/rxjs.js';
import type { AgUiEvent } from '../agui-event.js';
import { ReasoningStream, StreamedToolCalls, safeStringify, stamp } from '../agui-streams.js';
import type { ReasoningDelta, RunError, RunFinished, RunStarted, SessionEvent, TextDelta, ToolCallDelta, TurnEnd } from '../session-event.js';
import { AgUiToolResults } from './agui-tool-results.js';

export { TOOL_CALL_ARGS_REPLACED_EVENT } from '../agui-streams.js';
export { MAX_HELD_RESULTS } from './agui-tool-results.js';

/** Options for {@link toAgUi}. */
export interface ToAgUiOptions {
  /**
   * Also forward what has no AG-UI equivalent: provider envelopes as `RAW` and the other
   * synthesized events (`agentrx.reconnecting`, `agentrx.diagnostic`, …) as `CUSTOM`.
   * Default false.
   */
  readonly raw?: boolean;
}

/**
 * `name` of the CUSTOM event that closes each turn, `value` `{ turn, terminal, stopReason, usage }`
 * (agentrx's bookkeeping: never in STATE_SNAPSHOT, which is the client's state).
 */
export const TURN_END_EVENT = 'agentrx.turn_end';

/** `RUN_ERROR.message` when the source completes while a run is open. */
const INCOMPLETE_MESSAGE = 'event stream ended without a terminal event';

/**
 * Translates session envelopes into a well-ordered AG-UI 1.0 event stream.
 *
 * ```
 * source:   --s--t-----t--e-----f-----|
 * toAgUi(): --R--(MC)--C--(XP)--(YF)--|
 *
 * s: agentrx.run_started → R: RUN_STARTED
 * t: agentrx.text_delta  → M: TEXT_MESSAGE_START (first delta of a message id), C: TEXT_MESSAGE_CONTENT
 * e: agentrx.turn_end    → X: TEXT_MESSAGE_END (open messages), tool call triads, P: CUSTOM `agentrx.turn_end`
 * f: agentrx.run_finished → Y: TEXT_MESSAGE_END (open messages), F: RUN_FINISHED
 * ```
 *
 * Streamed tool calls and reasoning (what a provider decodes as `tool_call_delta` and `reasoning`):
 *
 * ```
 * source:   --s--r------q--t---------c------d--e--------f--|
 * toAgUi(): --R--(GHK)--K--(IJMC)----(SA)---A--(XQP)----F--|
 *
 * r, q: agentrx.reasoning_delta → G: REASONING_START, H: REASONING_MESSAGE_START (first fragment of an
 *    id), K: REASONING_MESSAGE_CONTENT
 * t: agentrx.text_delta → I: REASONING_MESSAGE_END, J: REASONING_END (the reasoning closes before
 *    anything else of the turn starts), M, C: the text message
 * c, d: agentrx.tool_call_delta → S: TOOL_CALL_START (the call's first fragment; `parentMessageId` the
 *    one the fragment names, else the open text message), A: TOOL_CALL_ARGS (each non-empty fragment)
 * e: agentrx.turn_end naming the call → X: TEXT_MESSAGE_END, Q: TOOL_CALL_END only (its arguments are
 *    out), P: CUSTOM `agentrx.turn_end`
 * ```
 *
 * A streamed call whose final input (at the turn's end) is not the JSON its fragments spelled out
 * is followed by a CUSTOM `agentrx.tool_call_args_replaced` `{ toolCallId, args }` (see
 * {@link TOOL_CALL_ARGS_REPLACED_EVENT}); a streamed call the turn's end does not name (a call the
 * provider dropped) is closed there all the same; a fragment of a call already announced in the run
 * is dropped; a call whose first fragment has no name, and every call never streamed, gets the
 * whole START/ARGS/END triad at the turn's end.
 *
 * Tool results: `agentrx.tool_result` (a local tool) → TOOL_CALL_RESULT at once.
 * `agentrx.host_tool_result` (a tool the host ran) → TOOL_CALL_RESULT for a call this run
 * announced; the host usually reports the result before the turn's end announces the call, so an
 * early result is held and emitted right after that call's TOOL_CALL_END. A result whose call is
 * never announced in the run is dropped at the run's end (at most {@link MAX_HELD_RESULTS} are
 * held); a second result for one call is dropped.
 *
 * ```
 * source:   --s--h--e-------f--|
 * toAgUi(): --R-----(SAEQP)-F--|
 *
 * h: agentrx.host_tool_result of call c (not announced yet): held
 * e: agentrx.turn_end with server tool use c → S, A, E: c's triad, Q: c's TOOL_CALL_RESULT, P: CUSTOM `agentrx.turn_end`
 * ```
 *
 * Only `source: 'agentrx'` envelopes are translated, by their event's `type` (a typed union). Nothing is emitted outside a
 * run (before `agentrx.run_started`, or after the run's terminal), a nested `run_started` is
 * ignored, and each run ends with exactly one `RUN_FINISHED` or `RUN_ERROR`, preceded by the end
 * of everything open: the reasoning message, every text message, every streamed tool call.
 * Several runs may follow each other on one stream.
 * If the source completes while a run is open, a `RUN_ERROR` with code `incomplete` is
 * synthesized before completing; if it errors, a `RUN_ERROR` with code `stream_error` is emitted
 * and the error is then propagated. Every event carries `timestamp: env.at` (synthesized
 * terminals use the last envelope's). Optional fields are omitted, never `undefined` or `null`.
 * Malformed envelopes are dropped; the operator never errors on its own. The run state is per
 * subscription.
 *
 * @param opts Whether to forward provider events (`RAW`) and other agentrx events (`CUSTOM`).
 * @returns A function that returns an Observable of AG-UI events.
 */
export function toAgUi(opts: ToAgUiOptions = {}): OperatorFunction<SessionEvent, AgUiEvent> {
  const forwardRaw = opts.raw === true;
  // Hand-written rather than concatMap over arrays: one subscription instead of one inner
  // Observable per event keeps the hot path allocation-light (see bench/pipeline).
  return (source) =>
    new Observable<AgUiEvent>((subscriber) => {
      const translator = new AgUiTranslator(forwardRaw);
      const emit = (events: Translated): void => {
        if (!Array.isArray(events)) subscriber.next(events as AgUiEvent);
        else for (const e of events) subscriber.next(e);
      };
      return source.subscribe({
        next: (env) => emit(translator.translate(env)),
        error: (err: unknown) => {
          emit(translator.fail(err));
          subscriber.error(err);
        },
        complete: () => {
          emit(translator.complete());
          subscriber.complete();
        },
      });
    });
}

/** Shared empty result: most envelopes (provider events) translate to nothing. */
const NONE: AgUiEvent[] = [];

/** One event (the common case: a text delta, with no array allocated) or several, in order. */
export type Translated = AgUiEvent | readonly AgUiEvent[];

interface OpenRun {
  readonly threadId: string;
  readonly runId: string;
}

type Fields = { readonly [key: string]: unknown };

/** The per-subscription state machine behind {@link toAgUi} (and `withAgUi`, which pairs its events with their envelopes). */
export class AgUiTranslator {
  private run: OpenRun | undefined;
  /** Open text message ids; a Set iterates in insertion (open) order. */
  private readonly openMessages = new Set<string>();
  /** The open reasoning message, if any. */
  private readonly reasoning = new ReasoningStream();
  /** Tool calls opened by their first streamed fragment, not closed yet. */
  private readonly calls = new StreamedToolCalls();
  /** Tool results, and the calls this run announced that host-run results wait for. */
  private readonly results = new AgUiToolResults();
  private lastAt: number | undefined;

  constructor(private readonly forwardRaw: boolean) {}

  translate(env: SessionEvent): Translated {
    try {
      return this.translateUnsafe(env);
    } catch {
      // A hostile envelope (throwing getter…) is dropped like any other malformed one.
      return NONE;
    }
  }

  /**
   * The envelope `event`, just returned by `translate(envelope)`, was translated from: `envelope`,
   * except for a host-run tool's TOOL_CALL_RESULT held until its call was announced, which comes
   * from the envelope that carried the result.
   */
  sourceOf(event: AgUiEvent, envelope: SessionEvent): SessionEvent | undefined {
    if (event.type !== 'TOOL_CALL_RESULT' || event.rawEvent === envelope.raw) return envelope;
    return this.results.envelopeOf(event.rawEvent);
  }

  fail(err: unknown): AgUiEvent[] {
    return this.abort({ message: errorMessage(err), code: 'stream_error' });
  }

  complete(): AgUiEvent[] {
    return this.abort({ message: INCOMPLETE_MESSAGE, code: 'incomplete' });
  }

  private abort(error: { message: string; code: string }): AgUiEvent[] {
    if (this.run === undefined) return NONE;
    const at = this.lastAt;
    return [...this.closeRun(at), stamp({ type: 'RUN_ERROR', message: error.message, code: error.code }, at)];
  }

  private translateUnsafe(env: SessionEvent): Translated {
    if (!isObject(env) || !isObject(env.raw)) return NONE;
    const at = typeof env.at === 'number' && Number.isFinite(env.at) ? env.at : undefined;
    this.lastAt = at;

    if (env.source === 'provider') {
      if (this.run === undefined || !this.forwardRaw) return NONE;
      return [stamp({ type: 'RAW', event: env.raw, ...(typeof env.provider === 'string' ? { source: env.provider } : {}) }, at)];
    }
    if (env.source !== 'agentrx') return NONE;
    const ev = env.raw;
    if (ev.type === 'agentrx.run_started') return this.runStarted(ev, at);
    // AG-UI requires RUN_STARTED first, and nothing but RUN_STARTED after a terminal.
    if (this.run === undefined) return NONE;

    switch (ev.type) {
      case 'agentrx.text_delta':
        return this.textDelta(ev, at);
      case 'agentrx.reasoning_delta':
        return this.reasoningDelta(ev, at);
      case 'agentrx.tool_call_delta':
        return this.toolCallDelta(ev, at);
      case 'agentrx.turn_end':
        return this.turnEnd(ev, at);
      case 'agentrx.tool_result':
        return this.results.local(ev, at);
      case 'agentrx.host_tool_result':
        return this.results.host(ev, at, env);
      case 'agentrx.state_snapshot':
        return isObject(ev.snapshot) ? [stamp({ type: 'STATE_SNAPSHOT', snapshot: ev.snapshot }, at)] : NONE;
      case 'agentrx.state_delta':
        return Array.isArray(ev.delta) && ev.delta.length > 0 ? [stamp({ type: 'STATE_DELTA', delta: [...ev.delta] }, at)] : NONE;
      case 'agentrx.run_finished':
        return this.runFinished(ev, at);
      case 'agentrx.run_error':
        return this.runError(ev, at);
      default:
        // A type outside the union (a malformed envelope) is dropped, never forwarded.
        return this.forwardRaw && typeof ev.type === 'string' ? [stamp({ type: 'CUSTOM', name: ev.type, value: ev }, at)] : NONE;
    }
  }

  // The typed events below still come from outside (a hand-built envelope may lie about its shape):
  // every field is checked before use, and a malformed event translates to nothing.

  private runStarted({ threadId, runId }: RunStarted, at: number | undefined): AgUiEvent[] {
    if (this.run !== undefined || !isNonEmptyString(threadId) || !isNonEmptyString(runId)) return NONE;
    this.run = { threadId, runId };
    return [stamp({ type: 'RUN_STARTED', threadId, runId }, at)];
  }

  private textDelta({ text, messageId }: TextDelta, at: number | undefined): Translated {
    if (typeof text !== 'string' || !isNonEmptyString(messageId)) return NONE;
    const content = stamp<AgUiEvent>({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text }, at);
    // The common case (no reasoning open, message already open) allocates no array.
    if (this.openMessages.has(messageId) && !this.reasoning.isOpen) return content;
    const events: AgUiEvent[] = [];
    this.reasoning.close(at, events);
    if (!this.openMessages.has(messageId)) {
      this.openMessages.add(messageId);
      events.push(stamp({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' }, at));
    }
    events.push(content);
    return events;
  }

  private reasoningDelta({ text, messageId }: ReasoningDelta, at: number | undefined): Translated {
    if (typeof text !== 'string' || text.length === 0 || !isNonEmptyString(messageId)) return NONE;
    return this.reasoning.delta(text, messageId, at);
  }

  private toolCallDelta({ toolUseId, name, argsDelta, parentMessageId }: ToolCallDelta, at: number | undefined): Translated {
    if (!isNonEmptyString(toolUseId) || typeof argsDelta !== 'string') return NONE;
    const events: AgUiEvent[] = [];
    this.reasoning.close(at, events);
    // The call belongs to the message the provider names, else to the assistant message streaming now.
    const parent = isNonEmptyString(parentMessageId) ? parentMessageId : this.calls.has(toolUseId) ? undefined : [...this.openMessages].at(-1);
    const fragment = { toolCallId: toolUseId, name: isNonEmptyString(name) ? name : undefined, argsDelta, parentMessageId: parent };
    const out = this.calls.delta(fragment, (id) => this.results.isAnnounced(id), at);
    if (events.length === 0) return out;
    events.push(...out);
    return events;
  }

  private turnEnd(ev: TurnEnd, at: number | undefined): AgUiEvent[] {
    // The turn's tool calls belong to the assistant message it streamed last, when there was one.
    const parentMessageId = [...this.openMessages].at(-1);
    const events: AgUiEvent[] = [];
    this.reasoning.close(at, events);
    this.closeMessages(at, events);
    for (const toolUse of [...arrayOf(ev.customToolUses), ...arrayOf(ev.serverToolUses)]) {
      if (!isObject(toolUse)) continue;
      const { id: toolCallId, name: toolCallName, input } = toolUse;
      if (!isNonEmptyString(toolCallId) || typeof toolCallName !== 'string') continue;
      // A call that streamed has its START and ARGS out: only its END (and a correction) is left.
      if (!this.calls.end(toolCallId, toolUse, at, events)) {
        events.push(stamp({ type: 'TOOL_CALL_START', toolCallId, toolCallName, ...(parentMessageId !== undefined ? { parentMessageId } : {}) }, at));
        const delta = safeStringify(input);
        // Unserializable input: the call is still announced, with no argument fragment.
        if (delta !== undefined) events.push(stamp({ type: 'TOOL_CALL_ARGS', toolCallId, delta }, at));
        events.push(stamp({ type: 'TOOL_CALL_END', toolCallId }, at));
      }
      this.results.announce(toolCallId, at, events);
    }
    // Streamed calls the turn does not name (the provider dropped them) are closed with it; a
    // result the host reports for one still reaches it.
    if (this.calls.size > 0) for (const toolCallId of this.calls.closeAll(at, events)) this.results.announce(toolCallId, at, events);
    // agentrx's bookkeeping is a CUSTOM event: STATE_SNAPSHOT/STATE_DELTA carry the client's state only.
    const value = compact({ turn: ev.turn, terminal: ev.terminal, stopReason: ev.stopReason, usage: ev.usage });
    events.push(stamp({ type: 'CUSTOM', name: TURN_END_EVENT, value }, at));
    return events;
  }

  private runFinished(ev: RunFinished, at: number | undefined): AgUiEvent[] {
    const run = this.run;
    if (run === undefined) return NONE;
    const result = compact({ terminal: ev.terminal, stopReason: ev.stopReason, turns: ev.turns, usage: ev.usage, output: ev.output });
    // The ids come from the open run so the terminal always pairs with its RUN_STARTED.
    return [...this.closeRun(at), stamp({ type: 'RUN_FINISHED', threadId: run.threadId, runId: run.runId, result }, at)];
  }

  private runError({ message, code }: RunError, at: number | undefined): AgUiEvent[] {
    return [
      ...this.closeRun(at),
      stamp({ type: 'RUN_ERROR', message: typeof message === 'string' ? message : 'run failed', ...(typeof code === 'string' ? { code } : {}) }, at),
    ];
  }

  /**
   * Ends everything open (the reasoning message, every text message, every streamed tool call)
   * and forgets the run (its calls, and the results never announced); returns the end events.
   */
  private closeRun(at: number | undefined): AgUiEvent[] {
    const events: AgUiEvent[] = [];
    this.reasoning.close(at, events);
    this.closeMessages(at, events);
    this.calls.closeAll(at, events);
    this.run = undefined;
    this.results.clear();
    return events;
  }

  /** Appends a TEXT_MESSAGE_END for every open text message to `into`. */
  private closeMessages(at: number | undefined, into: AgUiEvent[]): void {
    for (const messageId of this.openMessages) into.push(stamp({ type: 'TEXT_MESSAGE_END', messageId }, at));
    this.openMessages.clear();
  }
}

/** Copies `fields` without its `undefined`-valued keys (AG-UI omits optional fields). */
function compact(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

function isObject(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null;
}

function isNonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

function arrayOf(v: unknown): readonly unknown[] {
  return Array.isArray(v) ? v : [];
}

function errorMessage(err: unknown): string {
  try {
    if (err instanceof Error) return err.message;
    return typeof err === 'string' ? err : String(err);
  } catch {
    return 'unknown error';
  }
}
