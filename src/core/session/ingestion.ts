import { Subject, type Observable } from 'rxjs';
import {
  RecentKeys,
  hostToolResultEvent,
  reasoningDeltaEvent,
  textDeltaEvent,
  toolCallDeltaEvents,
  type HostToolResultOf,
  type TextDeltaResult,
  type ToolCallDeltaOf,
} from '../events/operators/index.js';
import type { AgentRxEvent, EventDraft, SessionEvent } from '../events/session-event.js';
import type { RawEvent } from '../model.js';
import { defaultEventId, type AgentProvider, type IngestCursor } from '../plugin/agent-provider.js';

/** Provider events kept per request for split-batch recovery when `retainEvents` is off. */
export const UNRETAINED_HISTORY = 1_000;

/** How one session's events are identified, translated and kept. */
export interface IngestionOptions {
  /** The provider id stamped on every envelope. */
  readonly providerId: string;
  /** Dedupe key of a provider event. */
  eventId(raw: RawEvent): string | undefined;
  /** The provider's text of a provider event (bound to the session's conn), or undefined. */
  textDelta(raw: RawEvent): TextDeltaResult;
  /** The provider's host-run tool result of a provider event (bound to the session's conn); absent: none. */
  hostToolResult?(raw: RawEvent): HostToolResultOf;
  /** The provider's reasoning text of a provider event (bound to the session's conn); absent: none. */
  reasoningDelta?(raw: RawEvent): TextDeltaResult;
  /** The provider's streamed tool-call argument fragments of a provider event (bound to the session's conn); absent: none. */
  toolCallDelta?(raw: RawEvent): ToolCallDeltaOf;
  /** Ids of the most recently ingested provider events always remembered. */
  readonly dedupeWindow: number;
  /** Keep every provider event of a request in `history` (else a bounded window). */
  readonly retainEvents: boolean;
}

/**
 * The ingestion pipeline of one session: drafts → dedupe by id → tool-call deltas, text deltas,
 * reasoning deltas, host tool results → `seq` → `events$`. What a provider event carries follows
 * it in this order: reasoning, text, tool-call fragments (the thinking comes before the answer it
 * leads to), with a host tool result first.
 * Provider events enter through `ingest`, the Session's own typed events through `emit`; both get
 * an envelope stamped with the next `seq`, gap-free, and a duplicate provider event (an id already
 * in the window) gets none. It also keeps the request's provider events for recovery and the turn
 * counter the envelopes carry. Synchronous: an envelope is on `events$` when `ingest` returns.
 */
export class Ingestion {
  /** Every envelope, in `seq` order. Completes on `complete()`. */
  readonly events$: Observable<SessionEvent>;
  /** The provider-side session id stamped on envelopes (set once the session is open). */
  sessionId: string | undefined;
  private readonly bus = new Subject<SessionEvent>();
  /** Ids of the most recently ingested provider events (bounded by `dedupeWindow`). */
  private readonly seen: RecentKeys;
  private seq = 0;
  private turnNo = 0;
  private requestEvents: RawEvent[] = [];
  private done = false;

  /**
   * The ingestion of one session of `provider`: its event ids, and its text deltas, reasoning,
   * tool-call fragments and host tool results read with the session's conn.
   */
  static forProvider(provider: AgentProvider, conn: () => unknown, opts: Pick<IngestionOptions, 'dedupeWindow' | 'retainEvents'>): Ingestion {
    const textDelta = provider.textDelta?.bind(provider);
    const hostToolResult = provider.hostToolResult?.bind(provider);
    const reasoningDelta = provider.reasoningDelta?.bind(provider);
    const toolCallDelta = provider.toolCallDelta?.bind(provider);
    return new Ingestion({
      providerId: provider.id,
      eventId: provider.eventId?.bind(provider) ?? defaultEventId,
      textDelta: textDelta ? (raw) => textDelta(conn(), raw) : () => undefined,
      ...(hostToolResult ? { hostToolResult: (raw: RawEvent) => hostToolResult(conn(), raw) } : {}),
      ...(reasoningDelta ? { reasoningDelta: (raw: RawEvent) => reasoningDelta(conn(), raw) } : {}),
      ...(toolCallDelta ? { toolCallDelta: (raw: RawEvent) => toolCallDelta(conn(), raw) } : {}),
      dedupeWindow: opts.dedupeWindow,
      retainEvents: opts.retainEvents,
    });
  }

  /** The provider's readers, called as methods of `opts`; only those it has. */
  private readonly textDelta: (raw: RawEvent) => TextDeltaResult;
  private readonly hostToolResult: ((raw: RawEvent) => HostToolResultOf) | undefined;
  private readonly reasoningDelta: ((raw: RawEvent) => TextDeltaResult) | undefined;
  private readonly toolCallDelta: ((raw: RawEvent) => ToolCallDeltaOf) | undefined;

  constructor(private readonly opts: IngestionOptions) {
    this.seen = new RecentKeys(opts.dedupeWindow);
    this.events$ = this.bus.asObservable();
    this.textDelta = (raw) => opts.textDelta(raw);
    this.hostToolResult = opts.hostToolResult?.bind(opts);
    this.reasoningDelta = opts.reasoningDelta?.bind(opts);
    this.toolCallDelta = opts.toolCallDelta?.bind(opts);
  }

  /** The turn within the current request: 0 before its first turn closes. */
  get turn(): number {
    return this.turnNo;
  }

  /** The provider events of the current request, oldest first (bounded unless `retainEvents`). */
  get history(): readonly RawEvent[] {
    return this.requestEvents;
  }

  /**
   * A resumed session goes on where its log ends: the next envelope is `lastSeq + 1`, and the ids
   * of the log's last provider events count as ingested (dedupe, and the cursor `reconnect` gets).
   * Call before the first envelope.
   */
  resumeFrom(end: { readonly lastSeq: number; readonly recentIds: readonly string[] }): void {
    this.seq = end.lastSeq;
    for (const id of end.recentIds) this.seen.add(id);
  }

  /** Lets go of the request's provider events once its terminal is reached (when they are not retained for the result). */
  releaseHistory(): void {
    if (!this.opts.retainEvents) this.requestEvents = [];
  }

  /** Starts a request: turn 0 and an empty history. */
  beginRequest(): void {
    this.turnNo = 0;
    this.requestEvents = [];
  }

  /** Counts a closed turn and returns its number. */
  closeTurn(): number {
    return ++this.turnNo;
  }

  /** Feeds one provider event (it belongs to the turn in progress). Returns false for a duplicate. */
  ingest(raw: RawEvent): boolean {
    const before = this.seq;
    this.accept({ source: 'provider', id: this.opts.eventId(raw), raw, turn: this.turnNo + 1 });
    return this.seq !== before;
  }

  /** Publishes one of the Session's own events (it belongs to the last closed turn). */
  emit(ev: AgentRxEvent): void {
    this.accept({ source: 'agentrx', raw: ev, turn: this.turnNo });
  }

  /** Where ingestion stands, for a provider's `reconnect`. */
  cursor(): IngestCursor {
    return { ingested: this.seen.size, has: (id) => this.seen.has(id) };
  }

  /** Completes `events$`; later events are dropped. */
  complete(): void {
    this.done = true;
    this.bus.complete();
  }

  /**
   * One draft through the ingestion, in one call rather than a chain of Subjects and operators
   * (this runs for every event of every session; `bench/pipeline`): dropped when its id was
   * already ingested (`dedupeById`), stamped, then followed by what the provider reads from it,
   * each stamped in turn — a host tool result, reasoning, text, tool-call fragments: the order of
   * the operator chain `extractToolCallDeltas → extractTextDeltas → extractReasoningDeltas →
   * extractHostToolResults`, whose derivations it calls (only those the provider has). Provider
   * callbacks that throw count as "nothing", as in the operators.
   */
  private accept(d: EventDraft): void {
    if (this.done) return;
    if (d.source === 'provider' && typeof d.id === 'string') {
      if (this.seen.has(d.id)) return;
      this.seen.add(d.id);
    }
    this.stamp(d);
    if (d.source !== 'provider') return;
    const { raw, turn } = d;
    if (this.hostToolResult) {
      const host = hostToolResultEvent(this.hostToolResult, raw);
      if (host !== undefined) this.stamp({ source: 'agentrx', turn, raw: host });
    }
    if (this.reasoningDelta) {
      const reasoning = reasoningDeltaEvent(this.reasoningDelta, raw, turn);
      if (reasoning !== undefined) this.stamp({ source: 'agentrx', turn, raw: reasoning });
    }
    const text = textDeltaEvent(this.textDelta, raw, turn);
    if (text !== undefined) this.stamp({ source: 'agentrx', turn, raw: text });
    if (this.toolCallDelta) {
      const calls = toolCallDeltaEvents(this.toolCallDelta, raw);
      if (calls === undefined) return;
      if (!Array.isArray(calls)) this.stamp({ source: 'agentrx', turn, raw: calls as AgentRxEvent });
      else for (const call of calls as readonly AgentRxEvent[]) this.stamp({ source: 'agentrx', turn, raw: call });
    }
  }

  private stamp(d: EventDraft): void {
    if (this.done) return;
    const seq = ++this.seq;
    const sessionId = this.sessionId;
    const provider = this.opts.providerId;
    const at = Date.now();
    // Literal shapes rather than a spread of `{ id }`: this runs for every event.
    let env: SessionEvent;
    if (d.source === 'agentrx') {
      env = { seq, sessionId, turn: d.turn, provider, source: 'agentrx', raw: d.raw, at };
    } else {
      env =
        d.id !== undefined
          ? { seq, sessionId, turn: d.turn, provider, source: 'provider', id: d.id, raw: d.raw, at }
          : { seq, sessionId, turn: d.turn, provider, source: 'provider', raw: d.raw, at };
      this.requestEvents.push(d.raw);
      // Without retention, keep a bounded window: enough for split-batch recovery, never the whole log.
      if (!this.opts.retainEvents && this.requestEvents.length > 2 * UNRETAINED_HISTORY) this.requestEvents.splice(0, this.requestEvents.length - UNRETAINED_HISTORY);
    }
    this.bus.next(env);
  }
}
