import { Observable, Subject } from '../core/util/rxjs.js';
import { AgentRxError } from '../core/errors.js';
import type { RawEvent, ToolResult, ToolUse, TurnResult } from '../core/model.js';
import { NO_HOST_EVENTS, type HostEvent } from '../core/plugin/host-event.js';
import {
  defaultEventId,
  missedSince,
  type IngestCursor,
  type KickoffOptions,
  type OpenOptions,
  type ProviderBase,
  type ProviderMode,
  type Reconnected,
  type StreamItem,
  type StreamingProvider,
  type TurnProvider,
} from '../core/plugin/agent-provider.js';

/**
 * Event vocabulary of the ScriptedProvider (a small, CMA-like wire):
 * - `{type:'text', id, text}` — assistant text (one text delta each)
 * - `{type:'tool_use', id, name, input}` — a custom tool use
 * - `{type:'server_tool_use', id, name, input}` — observed only
 * - `{type:'usage', input_tokens, output_tokens}`
 * - `{type:'idle', id, stop_reason, tool_use_ids?}` — turn boundary; `tool_use_ids` names the
 *   custom tool uses a `requires_action` waits for (default: every tool_use of the batch)
 * - `{type:'tool_result', id, tool_use_id}` — the host's echo of a posted result
 * - `{type:'host_tool_result', id, tool_use_id, content, is_error?}` — the result of a tool the
 *   host ran itself (a `server_tool_use`), reported by `hostToolResult`
 *
 * `decode` reports a `text` as text, a `tool_use` as a caller's tool use, a `tool_result` as its
 * answer, a `host_tool_result` as a host-run tool's result and an `idle` as a turn's end (one with
 * `stop_reason: 'requires_action'` names `tool_use_ids`, or, without them, every use before it).
 */
export type ScriptedEvent = RawEvent & { readonly type: string };

/** What the provider does on one input (one turn of the script). */
export interface ScriptedTurn {
  readonly events: readonly ScriptedEvent[];
  /** request/response: emit the events, then never complete (until unsubscribed). */
  readonly hang?: boolean;
  /** request/response: fail the poll with this error after emitting the events. */
  readonly fail?: AgentRxError;
  /** streaming: drop the stream after this many events of the turn (error, or clean close). */
  readonly dropAfter?: number;
  readonly dropKind?: 'error' | 'close';
}

/** Options of a `ScriptedProvider`. */
export interface ScriptedProviderOptions {
  /** Provider id. Default `scripted`. */
  readonly id?: string;
  /** Default `request_response`. */
  readonly mode?: ProviderMode;
  /** Consumed in order, one per input (kickoff, follow-up, resume). */
  readonly turns: readonly ScriptedTurn[];
  /** Events already in the host's history (a resumed session). */
  readonly history?: readonly ScriptedEvent[];
  /** Echo posted tool results into the stream/history (streaming). Default true. */
  readonly echoResults?: boolean;
  /** Re-send this many of the last history events when a stream re-attaches. */
  readonly duplicateOnReattach?: number;
  readonly supportsOutcomes?: boolean;
  /** Report each `text` event as a text delta. Default true. */
  readonly textDeltas?: boolean;
}

/** What the ScriptedProvider's input callbacks build (recorded in `inputs`). */
export type ScriptedInput =
  | { readonly kind: 'kickoff'; readonly prompt?: string; readonly outcome?: unknown }
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'resume'; readonly toolUses: readonly ToolUse[]; readonly results: readonly ToolResult[] }
  | { readonly kind: 'raw'; readonly event: RawEvent };

/** The ScriptedProvider's conn. */
export interface ScriptedConn {
  readonly sessionId: string;
  readonly resumed: boolean;
}

/**
 * A deterministic in-process provider for tests, in either mode. Each input consumes the next
 * scripted turn. It records every input, counts aborted polls and stream attachments, and keeps
 * a host-side history for `reconnect`/`pendingToolUses`. It plays one host: the history and the
 * live stream are the emulated host's, shared by every conn of the instance (use one instance per
 * session).
 *
 * It has the callbacks of both modes and `mode` decides which the Session uses, so an instance is
 * an `AgentProvider` of either kind (`mode: 'streaming'` makes it a `StreamingProvider`,
 * `'request_response'` a `TurnProvider`).
 */
export class ScriptedProvider
  implements
    ProviderBase<ScriptedConn, ScriptedInput>,
    Omit<StreamingProvider<ScriptedConn, ScriptedInput>, 'mode'>,
    Omit<TurnProvider<ScriptedConn, ScriptedInput>, 'mode'>
{
  readonly id: string;
  readonly mode: ProviderMode;
  readonly supportsOutcomes: boolean;
  /** Every input received, in order. */
  readonly inputs: ScriptedInput[] = [];
  /** The host-side history (every event emitted, echoes included). */
  readonly history: ScriptedEvent[];
  /** Number of polls/streams torn down before they completed (observed aborts). */
  aborted = 0;
  attachments = 0;
  interrupts = 0;
  closed = 0;
  private next = 0;
  private seqId = 0;
  private live: Subject<StreamItem> | undefined;

  constructor(private readonly options: ScriptedProviderOptions) {
    this.id = options.id ?? 'scripted';
    this.mode = options.mode ?? 'request_response';
    this.supportsOutcomes = options.supportsOutcomes ?? false;
    this.history = [...(options.history ?? [])];
  }

  async open(opts: OpenOptions): Promise<ScriptedConn> {
    if (opts.signal.aborted) throw new AgentRxError('cancelled', 'aborted');
    return { sessionId: opts.sessionId ?? 'scripted-session', resumed: opts.sessionId !== undefined };
  }
  sessionId(conn: ScriptedConn): string {
    return conn.sessionId;
  }
  resumed(conn: ScriptedConn): boolean {
    return conn.resumed;
  }
  kickoffInput(opts: KickoffOptions): ScriptedInput {
    return { kind: 'kickoff', prompt: opts.prompt, outcome: opts.outcome };
  }
  userInput(text: string): ScriptedInput {
    return { kind: 'user', text };
  }
  resumeInput(toolUses: readonly ToolUse[], results: readonly ToolResult[]): ScriptedInput {
    return { kind: 'resume', toolUses, results };
  }
  rawInput(event: RawEvent): ScriptedInput {
    return { kind: 'raw', event };
  }

  // ---------------------------------------------------------------- request/response
  pollTurn(_conn: ScriptedConn, input: ScriptedInput): Observable<RawEvent> {
    return new Observable<RawEvent>((sub) => {
      this.inputs.push(input);
      const turn = this.takeTurn();
      let done = false;
      for (const ev of turn.events) {
        this.history.push(ev);
        sub.next(ev);
      }
      if (turn.fail) {
        done = true;
        sub.error(turn.fail);
      } else if (!turn.hang) {
        done = true;
        sub.complete();
      }
      return () => {
        if (!done) this.aborted++;
      };
    });
  }

  // ---------------------------------------------------------------- streaming
  stream(_conn: ScriptedConn): Observable<StreamItem> {
    return new Observable<StreamItem>((sub) => {
      this.attachments++;
      const live = new Subject<StreamItem>();
      this.live = live;
      const inner = live.subscribe(sub);
      sub.next({ kind: 'open' });
      const dup = this.options.duplicateOnReattach ?? 0;
      if (this.attachments > 1 && dup > 0) {
        for (const ev of this.history.slice(-dup)) sub.next({ kind: 'event', event: ev });
      }
      return () => {
        inner.unsubscribe();
        if (this.live === live) {
          this.live = undefined;
          this.aborted++;
        }
      };
    });
  }

  async pushInput(_conn: ScriptedConn, input: ScriptedInput, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw new AgentRxError('cancelled', 'aborted');
    if (input.kind === 'resume' && input.results.length === 0) {
      throw new AgentRxError('http_error', 'events: value must contain at least 1 item', { status: 400 });
    }
    this.inputs.push(input);
    if (input.kind === 'raw') return;
    if (input.kind === 'resume' && this.options.echoResults !== false) {
      for (const r of input.results) this.emitLive({ type: 'tool_result', id: `echo-${++this.seqId}`, tool_use_id: r.toolUseId });
    }
    const turn = this.takeTurn();
    // Deliver asynchronously, like a real host.
    queueMicrotask(() => {
      const cut = turn.dropAfter ?? Infinity;
      turn.events.forEach((ev, n) => (n < cut ? this.emitLive(ev) : this.history.push(ev)));
      if (cut <= turn.events.length) {
        // Events past the cut happen "during the gap": they land in history only.
        const live = this.live;
        this.live = undefined;
        if (turn.dropKind === 'close') live?.complete();
        else live?.error(new AgentRxError('stream_error', 'scripted drop'));
      }
    });
  }

  /** True for an `idle` (what `decode` reports as a turn's end). */
  isTurnBoundary(event: RawEvent): boolean {
    return event['type'] === 'idle';
  }

  /** The scripted vocabulary as HostEvents (see {@link ScriptedEvent}). */
  decode(conn: ScriptedConn, event: RawEvent): readonly HostEvent[] {
    switch (event['type']) {
      case 'text': {
        const delta = this.textDelta(conn, event);
        return delta && delta.text !== '' ? [{ kind: 'text', ...delta }] : NO_HOST_EVENTS;
      }
      case 'host_tool_result': {
        const result = this.hostToolResult(conn, event);
        return result ? [{ kind: 'host_tool_result', ...result }] : NO_HOST_EVENTS;
      }
      case 'tool_use':
        return [{ kind: 'tool_use', runBy: 'caller', use: toToolUse(event) }];
      case 'tool_result':
        return [{ kind: 'tool_answered', toolUseId: String(event['tool_use_id']), by: 'result' }];
      case 'idle': {
        if (event['stop_reason'] !== 'requires_action') return [{ kind: 'turn_end' }];
        const ids = event['tool_use_ids'];
        return [{ kind: 'turn_end', requiresAction: Array.isArray(ids) ? { toolUseIds: ids.map(String) } : {} }];
      }
      default:
        return NO_HOST_EVENTS;
    }
  }

  /** The event's string `id`. */
  eventId(event: RawEvent): string | undefined {
    return defaultEventId(event);
  }

  async reconnect(_conn: ScriptedConn, cursor: IngestCursor): Promise<Reconnected> {
    const missed = missedSince(this.history, cursor);
    const last = this.history.at(-1);
    return { missed, pending: this.pendingToolUses(this.history), midTurn: last !== undefined && !this.isTurnBoundary(last) };
  }

  async interrupt(): Promise<void> {
    this.interrupts++;
  }

  close(): void {
    this.closed++;
  }

  // ---------------------------------------------------------------- normalization
  normalize(events: readonly RawEvent[]): TurnResult {
    const idle = [...events].reverse().find((e) => e['type'] === 'idle');
    const uses = events.filter((e) => e['type'] === 'tool_use').map(toToolUse);
    const serverToolUses = events.filter((e) => e['type'] === 'server_tool_use').map(toToolUse);
    let usage = { inputTokens: 0, outputTokens: 0 };
    for (const e of events) {
      if (e['type'] === 'usage')
        usage = { inputTokens: usage.inputTokens + Number(e['input_tokens'] ?? 0), outputTokens: usage.outputTokens + Number(e['output_tokens'] ?? 0) };
    }
    const text = events
      .filter((e) => e['type'] === 'text')
      .map((e) => String(e['text']))
      .join('');
    const stopReason = idle?.['stop_reason'];
    const terminal = stopReason === 'end_turn' ? 'end_turn' : stopReason === 'requires_action' ? 'requires_action' : 'terminated';
    let customToolUses: ToolUse[] = [];
    if (terminal === 'requires_action') {
      const ids = idle?.['tool_use_ids'];
      customToolUses = Array.isArray(ids) ? ids.map((id) => uses.find((u) => u.id === id)).filter((u): u is ToolUse => u !== undefined) : uses;
    }
    const requested = Array.isArray(idle?.['tool_use_ids']) ? { requestedToolUseIds: (idle['tool_use_ids'] as unknown[]).map(String) } : {};
    return {
      terminal,
      stopReason,
      text,
      customToolUses,
      serverToolUses,
      usage,
      events: [...events],
      ...requested,
      ...(idle?.['continue'] === true ? { continueWithoutTools: true } : {}),
    };
  }

  /** Every `tool_use` of `history` no `tool_result` answers (what `reconnect` reports as pending). */
  pendingToolUses(history: readonly RawEvent[]): ToolUse[] {
    const answered = new Set(history.filter((e) => e['type'] === 'tool_result').map((e) => String(e['tool_use_id'])));
    const pending = new Map<string, ToolUse>();
    for (const e of history) if (e['type'] === 'tool_use' && !answered.has(String(e['id']))) pending.set(String(e['id']), toToolUse(e));
    return [...pending.values()];
  }

  /** The text a `text` event carries (what `decode` reports), unless `textDeltas` is false. */
  textDelta(_conn: ScriptedConn, event: RawEvent): { text: string; messageId: string } | undefined {
    if (this.options.textDeltas === false || event['type'] !== 'text') return undefined;
    return { text: String(event['text']), messageId: String(event['message_id'] ?? event['id']) };
  }

  /** The result a `host_tool_result` event carries (`is_error` defaults to false); undefined for any other event. */
  hostToolResult(_conn: ScriptedConn, event: RawEvent): { toolUseId: string; content: string; isError: boolean } | undefined {
    if (event['type'] !== 'host_tool_result') return undefined;
    return { toolUseId: String(event['tool_use_id']), content: String(event['content'] ?? ''), isError: event['is_error'] === true };
  }

  /** Pushes an event onto the live stream (and history) as the host would. */
  emitLive(ev: ScriptedEvent): void {
    this.history.push(ev);
    this.live?.next({ kind: 'event', event: ev });
  }

  private takeTurn(): ScriptedTurn {
    const turn = this.options.turns[this.next++];
    if (!turn) throw new AgentRxError('provider_error', `ScriptedProvider: script exhausted after ${this.options.turns.length} turns`);
    return turn;
  }
}

function toToolUse(e: RawEvent): ToolUse {
  return { id: String(e['id']), name: String(e['name']), input: (e['input'] as Record<string, unknown>) ?? {} };
}

let usageIds = 0;

/** Builders for scripted events. */
export const ev = {
  text: (id: string, text: string): ScriptedEvent => ({ type: 'text', id, text }),
  toolUse: (id: string, name: string, input: Record<string, unknown> = {}): ScriptedEvent => ({ type: 'tool_use', id, name, input }),
  serverToolUse: (id: string, name: string, input: Record<string, unknown> = {}): ScriptedEvent => ({ type: 'server_tool_use', id, name, input }),
  usage: (input_tokens: number, output_tokens: number, id = `usage-${++usageIds}`): ScriptedEvent => ({ type: 'usage', id, input_tokens, output_tokens }),
  idle: (id: string, stop_reason: string, tool_use_ids?: string[]): ScriptedEvent => ({
    type: 'idle',
    id,
    stop_reason,
    ...(tool_use_ids ? { tool_use_ids } : {}),
  }),
  toolResult: (id: string, tool_use_id: string): ScriptedEvent => ({ type: 'tool_result', id, tool_use_id }),
  hostToolResult: (id: string, tool_use_id: string, content: string, is_error = false): ScriptedEvent => ({
    type: 'host_tool_result',
    id,
    tool_use_id,
    content,
    is_error,
  }),
};
