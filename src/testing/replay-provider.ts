import { Observable } from '../core/util/rxjs.js';
import { parseCassette, readCassette, type Cassette } from '../core/store/cassette.js';
import { AgentRxError } from '../core/errors.js';
import type { TurnEnd } from '../core/events/session-event.js';
import { StderrLogger, type Logger } from '../core/logger.js';
import type { KickoffOptions, OpenOptions, TurnProvider } from '../core/plugin/agent-provider.js';
import type { RawEvent, ToolResult, ToolUse, TurnResult } from '../core/model.js';
import { NO_HOST_EVENTS, type HostEvent } from '../core/plugin/host-event.js';

/** A tool whose result in the replay differs from the recorded one. */
export interface ReplayMismatch {
  readonly toolUseId: string;
  readonly name: string;
  /** What the cassette holds (undefined: the cassette has no result for this tool use). */
  readonly recorded: ToolResult | undefined;
  /** What the tool returned in the replay. */
  readonly actual: ToolResult;
}

/** Options of {@link ReplayProvider}. */
export interface ReplayProviderOptions {
  /** A mismatch fails the session: the poll after the tool results fails with a `provider_error` naming both values. Default false (reported only). */
  readonly strict?: boolean;
  /** Where mismatches are logged (default: stderr at warn). */
  readonly logger?: Logger;
  /** The session id the replay reports (default: the recorded one, so thread and run ids match the recording). */
  readonly sessionId?: string;
}

/** One recorded turn: its provider events, the `agentrx.turn_end` that closed it and its text. */
interface RecordedTurn {
  readonly index: number;
  readonly events: readonly RawEvent[];
  readonly end: TurnEnd;
  readonly text: string;
}

/** Per-session state: which recorded turn comes next. */
export interface ReplayConn {
  readonly sessionId: string;
  next: number;
}

/** What the Session sends; only tool results are checked against the recording. */
export type ReplayInput =
  | { readonly kind: 'kickoff'; readonly prompt?: string }
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'resume'; readonly mismatches: readonly ReplayMismatch[] };

/**
 * Plays a recorded session (a {@link Cassette}) back as a request/response provider, whatever
 * host recorded it: each input yields the next recorded turn's provider events verbatim (turns
 * are delimited by the recorded `agentrx.turn_end` envelopes), `normalize` rebuilds the turn's
 * outcome from its recorded `agentrx.turn_end`, `decode` and `eventId` return what was
 * recorded for each event. Its `id` is the recorded provider's, so bind it with `defaults: false`
 * (`AgentRx.create({ defaults: false, providers: [replay], tools, config: { provider: replay.id } })`).
 *
 * The Session runs the tools for real; each result is compared with the recorded
 * `agentrx.tool_result` for the same tool use id. A mismatch is added to `mismatches` and
 * logged, and with `strict` the next poll fails. One instance may serve several sessions, each
 * played from the first recorded turn. Not replayed: host-run tool confirmations (Claude Managed
 * Agents `always_ask`) and provider events after the last recorded turn.
 */
export class ReplayProvider implements TurnProvider<ReplayConn, ReplayInput> {
  readonly mode = 'request_response' as const;
  /** The recorded provider's id. */
  readonly id: string;
  /** Every tool result that differed from the recording, in the order they were seen. */
  readonly mismatches: ReplayMismatch[] = [];
  private readonly turns: RecordedTurn[] = [];
  private readonly turnOf = new WeakMap<RawEvent, RecordedTurn>();
  private readonly idOf = new WeakMap<RawEvent, string>();
  private readonly deltaOf = new WeakMap<RawEvent, { text: string; messageId: string }>();
  private readonly hostResultOf = new WeakMap<RawEvent, { toolUseId: string; content: string; isError: boolean }>();
  private readonly reasoningOf = new WeakMap<RawEvent, { text: string; messageId: string }>();
  private readonly callDeltasOf = new WeakMap<RawEvent, { toolUseId: string; name?: string; argsDelta: string; parentMessageId?: string }[]>();
  private readonly results = new Map<string, ToolResult>();
  private readonly logger: Logger;
  /** The last turn polled by any session: `normalize` of a turn without events falls back to it. */
  private lastPolled: RecordedTurn | undefined;

  constructor(
    readonly cassette: Cassette,
    private readonly opts: ReplayProviderOptions = {},
  ) {
    this.id = cassette.record.provider;
    this.logger = opts.logger ?? new StderrLogger('warn');
    let events: RawEvent[] = [];
    let text = '';
    let previous: RawEvent | undefined;
    for (const env of cassette.envelopes) {
      if (env.source === 'provider') {
        events.push(env.raw);
        if (env.id !== undefined) this.idOf.set(env.raw, env.id);
        previous = env.raw;
        continue;
      }
      const ev = env.raw;
      if (ev.type === 'agentrx.text_delta') {
        // extractTextDeltas puts a delta right after the provider event that carried it (then,
        // extractHostToolResults its host result): `previous` stays for the result.
        if (previous !== undefined) this.deltaOf.set(previous, { text: ev.text, messageId: ev.messageId });
        text += ev.text;
        continue;
      } else if (ev.type === 'agentrx.host_tool_result') {
        // The ingestion puts what a provider event carries right after it: keep `previous` for the rest.
        if (previous !== undefined) this.hostResultOf.set(previous, { toolUseId: ev.toolUse.id, content: ev.result.content, isError: ev.result.isError });
        continue;
      } else if (ev.type === 'agentrx.reasoning_delta') {
        if (previous !== undefined) this.reasoningOf.set(previous, { text: ev.text, messageId: ev.messageId });
        continue;
      } else if (ev.type === 'agentrx.tool_call_delta') {
        if (previous !== undefined) {
          const { type: _type, ...delta } = ev;
          const deltas = this.callDeltasOf.get(previous) ?? [];
          deltas.push(delta);
          this.callDeltasOf.set(previous, deltas);
        }
        continue;
      } else if (ev.type === 'agentrx.turn_end') {
        const turn: RecordedTurn = { index: this.turns.length, events, end: ev, text };
        this.turns.push(turn);
        for (const e of events) this.turnOf.set(e, turn);
        events = [];
        text = '';
      } else if (ev.type === 'agentrx.tool_result') {
        this.results.set(ev.toolUse.id, ev.result);
      }
      previous = undefined;
    }
  }

  /** A ReplayProvider over the cassette in `file` (see `agentrx sessions export`). */
  static async fromFile(file: string, opts: ReplayProviderOptions = {}): Promise<ReplayProvider> {
    return new ReplayProvider(await readCassette(file), opts);
  }

  /** A ReplayProvider over cassette JSON text. */
  static fromJson(text: string, opts: ReplayProviderOptions = {}): ReplayProvider {
    return new ReplayProvider(parseCassette(text, '(text)'), opts);
  }

  /** How many turns the cassette holds. */
  get turnCount(): number {
    return this.turns.length;
  }

  async open(_opts: OpenOptions): Promise<ReplayConn> {
    return { sessionId: this.opts.sessionId ?? this.cassette.record.sessionId, next: 0 };
  }

  sessionId(conn: ReplayConn): string {
    return conn.sessionId;
  }

  resumed(): boolean {
    return false;
  }

  kickoffInput(opts: KickoffOptions): ReplayInput {
    return { kind: 'kickoff', ...(opts.prompt !== undefined ? { prompt: opts.prompt } : {}) };
  }

  userInput(text: string): ReplayInput {
    return { kind: 'user', text };
  }

  /** Compares each result with the recorded one; mismatches are recorded and logged here. */
  resumeInput(toolUses: readonly ToolUse[], results: readonly ToolResult[]): ReplayInput {
    const found: ReplayMismatch[] = [];
    toolUses.forEach((use, i) => {
      const actual = results[i];
      if (!actual) return;
      const recorded = this.results.get(use.id);
      if (recorded && recorded.content === actual.content && recorded.isError === actual.isError) return;
      const mismatch: ReplayMismatch = { toolUseId: use.id, name: use.name, recorded, actual };
      found.push(mismatch);
      this.mismatches.push(mismatch);
      this.logger.warn(`replay mismatch: ${describe(mismatch)}`, { toolUseId: use.id, tool: use.name });
    });
    return { kind: 'resume', mismatches: found };
  }

  /** The next recorded turn's events; fails when strict and the input's results mismatched, or when the cassette has no turn left. */
  pollTurn(conn: ReplayConn, input: ReplayInput): Observable<RawEvent> {
    return new Observable<RawEvent>((subscriber) => {
      if (this.opts.strict && input.kind === 'resume' && input.mismatches.length > 0) {
        const m = input.mismatches[0]!;
        subscriber.error(
          new AgentRxError('provider_error', `replay mismatch (strict): ${describe(m)}`, {
            retryable: false,
            toolUseId: m.toolUseId,
            name: m.name,
            recorded: m.recorded,
            actual: m.actual,
          }),
        );
        return;
      }
      const turn = this.turns[conn.next];
      if (!turn) {
        subscriber.error(
          new AgentRxError(
            'provider_error',
            `the replay asked for turn ${conn.next + 1} but the cassette of session '${this.cassette.record.sessionId}' holds ${this.turns.length}; the replayed session went further than the recorded one`,
            { retryable: false },
          ),
        );
        return;
      }
      conn.next++;
      this.lastPolled = turn;
      for (const e of turn.events) {
        if (subscriber.closed) return;
        subscriber.next(e);
      }
      subscriber.complete();
    });
  }

  /** The recorded outcome of the turn these events belong to. */
  normalize(events: readonly RawEvent[]): TurnResult {
    let turn: RecordedTurn | undefined;
    for (const e of events) {
      turn = this.turnOf.get(e);
      if (turn) break;
    }
    turn ??= this.lastPolled;
    if (!turn)
      return {
        terminal: 'terminated',
        stopReason: 'replay_unknown_turn',
        text: '',
        customToolUses: [],
        serverToolUses: [],
        usage: { inputTokens: 0, outputTokens: 0 },
        events,
      };
    const end = turn.end;
    const custom = end.customToolUses;
    return {
      terminal: end.terminal,
      stopReason: end.stopReason,
      text: turn.text,
      customToolUses: custom,
      serverToolUses: end.serverToolUses,
      usage: { inputTokens: end.usage.inputTokens, outputTokens: end.usage.outputTokens },
      events,
      ...(custom.length > 0 ? { requestedToolUseIds: custom.map((u) => u.id) } : {}),
      // A recorded requires_action with no custom tool use was answered with an empty resume.
      ...(end.terminal === 'requires_action' && custom.length === 0 ? { continueWithoutTools: true } : {}),
    };
  }

  /** What the recording derived from `event` (a host tool result, reasoning, text, tool-call fragments), as HostEvents. */
  decode(conn: ReplayConn, event: RawEvent): readonly HostEvent[] {
    const host: HostEvent[] = [];
    const result = this.hostToolResult(conn, event);
    if (result) host.push({ kind: 'host_tool_result', ...result });
    const reasoning = this.reasoningDelta(conn, event);
    if (reasoning) host.push({ kind: 'reasoning', ...reasoning });
    const text = this.textDelta(conn, event);
    if (text) host.push({ kind: 'text', ...text });
    for (const delta of this.toolCallDelta(conn, event) ?? []) host.push({ kind: 'tool_call_delta', ...delta });
    return host.length > 0 ? host : NO_HOST_EVENTS;
  }

  /** The text delta recorded right after `event`. */
  textDelta(_conn: ReplayConn, event: RawEvent): { text: string; messageId: string } | undefined {
    return this.deltaOf.get(event);
  }

  /** The reasoning recorded right after `event`. */
  reasoningDelta(_conn: ReplayConn, event: RawEvent): { text: string; messageId: string } | undefined {
    return this.reasoningOf.get(event);
  }

  /** The tool-call fragments recorded right after `event`. */
  toolCallDelta(_conn: ReplayConn, event: RawEvent): readonly { toolUseId: string; name?: string; argsDelta: string; parentMessageId?: string }[] | undefined {
    return this.callDeltasOf.get(event);
  }

  /** The host-run tool result recorded right after `event`. */
  hostToolResult(_conn: ReplayConn, event: RawEvent): { toolUseId: string; content: string; isError: boolean } | undefined {
    return this.hostResultOf.get(event);
  }

  /** The id the recording's envelope gave `event`. */
  eventId(event: RawEvent): string | undefined {
    return this.idOf.get(event);
  }

  /** The recorded transcript, once every recorded turn was played. */
  transcript(conn: ReplayConn): readonly RawEvent[] | undefined {
    return conn.next >= this.turns.length ? this.cassette.record.transcript : undefined;
  }
}

function describe(m: ReplayMismatch): string {
  const show = (r: ToolResult | undefined): string => (r === undefined ? 'nothing' : `${JSON.stringify(r.content)}${r.isError ? ' (error)' : ''}`);
  return `tool '${m.name}' (${m.toolUseId}) returned ${show(m.actual)} but the cassette recorded ${show(m.recorded)}`;
}
