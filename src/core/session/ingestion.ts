import { Subject, type Observable } from '../util/rxjs.js';
import { RecentKeys } from '../events/operators/index.js';
import type { AgentRxEvent, EventDraft, SessionEvent } from '../events/session-event.js';
import type { RawEvent } from '../model.js';
import type { AgentProvider, IngestCursor } from '../plugin/agent-provider.js';
import { NO_HOST_EVENTS, type HostEvent } from '../plugin/host-event.js';
import { derivedEvent, keptForRecovery, type RecoveryEvent } from './host-event-drafts.js';

/** Provider events kept per request for split-batch recovery when `retainEvents` is off. */
export const UNRETAINED_HISTORY = 1_000;

/** How one session's events are identified, decoded and kept. */
export interface IngestionOptions {
  /** The provider id stamped on every envelope. */
  readonly providerId: string;
  /** Dedupe key of a provider event. */
  eventId(raw: RawEvent): string | undefined;
  /** What the provider decodes of a provider event (bound to the session's conn); called once per ingested event. */
  decode(raw: RawEvent): readonly HostEvent[];
  /** Ids of the most recently ingested provider events always remembered. */
  readonly dedupeWindow: number;
  /** Keep every provider event of a request in `history` (else a bounded window). */
  readonly retainEvents: boolean;
}

/**
 * The ingestion pipeline of one session: drafts → dedupe by id → decode (the provider's
 * `HostEvent`s) → the agentrx events they carry → `seq` → `events$`. What a provider event carries
 * follows it in this order: a host tool result, reasoning, text, tool-call fragments (the thinking
 * comes before the answer it leads to).
 * Provider events enter through `ingest`, the Session's own typed events through `emit`; both get
 * an envelope stamped with the next `seq`, gap-free, and a duplicate provider event (an id already
 * in the window) gets none and is never decoded. It also keeps the request's provider events (and
 * the HostEvents a `requires_action` is answered from) for recovery, and the turn counter the
 * envelopes carry. Synchronous: an envelope is on `events$` when `ingest` returns.
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
  private requestHost: RecoveryEvent[] = [];
  private done = false;

  /** The ingestion of one session of `provider`: its event ids, and its events decoded with the session's conn. */
  static forProvider(provider: AgentProvider, conn: () => unknown, opts: Pick<IngestionOptions, 'dedupeWindow' | 'retainEvents'>): Ingestion {
    return new Ingestion({
      providerId: provider.id,
      eventId: (raw) => provider.eventId(raw),
      decode: (raw) => provider.decode(conn(), raw),
      dedupeWindow: opts.dedupeWindow,
      retainEvents: opts.retainEvents,
    });
  }

  constructor(private readonly opts: IngestionOptions) {
    this.seen = new RecentKeys(opts.dedupeWindow);
    this.events$ = this.bus.asObservable();
  }

  /** The turn within the current request: 0 before its first turn closes. */
  get turn(): number {
    return this.turnNo;
  }

  /** The provider events of the current request, oldest first (bounded unless `retainEvents`). */
  get history(): readonly RawEvent[] {
    return this.requestEvents;
  }

  /** The current request's tool uses, their answers and its turn ends, oldest first (what a `requires_action` is answered from). */
  get hostHistory(): readonly RecoveryEvent[] {
    return this.requestHost;
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
    if (this.opts.retainEvents) return;
    this.requestEvents = [];
    this.requestHost = [];
  }

  /** Starts a request: turn 0 and an empty history. */
  beginRequest(): void {
    this.turnNo = 0;
    this.requestEvents = [];
    this.requestHost = [];
  }

  /** Counts a closed turn and returns its number. */
  closeTurn(): number {
    return ++this.turnNo;
  }

  /** Feeds one provider event (it belongs to the turn in progress). Returns false for a duplicate. */
  ingest(raw: RawEvent): boolean {
    return this.ingestDecoded(raw) !== undefined;
  }

  /**
   * Feeds one provider event like `ingest`, and returns what its provider decoded of it (undefined
   * for a duplicate, or after `complete()`): for a caller that reads the HostEvents, which are
   * decoded once.
   */
  ingestDecoded(raw: RawEvent): readonly HostEvent[] | undefined {
    if (this.done) return undefined;
    const id = this.opts.eventId(raw);
    if (typeof id === 'string') {
      if (this.seen.has(id)) return undefined;
      this.seen.add(id);
    }
    const turn = this.turnNo + 1;
    this.stamp(id !== undefined ? { source: 'provider', id, raw, turn } : { source: 'provider', raw, turn });
    const host = this.decode(raw);
    if (host.length > 0) this.derive(host, turn);
    return host;
  }

  /** Publishes one of the Session's own events (it belongs to the last closed turn). */
  emit(ev: AgentRxEvent): void {
    this.stamp({ source: 'agentrx', raw: ev, turn: this.turnNo });
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

  /** The provider's HostEvents of `raw`; a throw or a malformed answer is nothing. */
  private decode(raw: RawEvent): readonly HostEvent[] {
    try {
      const host = this.opts.decode(raw);
      return Array.isArray(host) ? host : NO_HOST_EVENTS;
    } catch {
      return NO_HOST_EVENTS;
    }
  }

  /**
   * Stamps what one provider event carries, in one call rather than a chain of Subjects and
   * operators (this runs for every event of every session; `bench/pipeline`): a host tool result,
   * reasoning, text, tool-call fragments — the order of the operator chain
   * `extractToolCallDeltas → extractTextDeltas → extractReasoningDeltas → extractHostToolResults`,
   * whatever order the provider decoded them in — and keeps those a `requires_action` is answered
   * from.
   */
  private derive(host: readonly HostEvent[], turn: number): void {
    if (host.length === 1) {
      this.deriveOne(host[0], turn);
      return;
    }
    for (let rank = 0; rank <= 4; rank++) for (const h of host) if (rankOf(h) === rank) this.deriveOne(h, turn);
  }

  private deriveOne(h: HostEvent | undefined, turn: number): void {
    if (h === undefined || h === null || typeof h !== 'object') return;
    if (keptForRecovery(h)) {
      this.requestHost.push(h);
      if (!this.opts.retainEvents && this.requestHost.length > 2 * UNRETAINED_HISTORY) this.requestHost.splice(0, this.requestHost.length - UNRETAINED_HISTORY);
      return;
    }
    const ev = derivedEvent(h, turn);
    if (ev !== undefined) this.stamp({ source: 'agentrx', turn, raw: ev });
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
      if (!this.opts.retainEvents && this.requestEvents.length > 2 * UNRETAINED_HISTORY)
        this.requestEvents.splice(0, this.requestEvents.length - UNRETAINED_HISTORY);
    }
    this.bus.next(env);
  }
}

/** Where a HostEvent's agentrx event goes among those of one provider event (recovery ones last: they stamp nothing). */
function rankOf(h: HostEvent): number {
  switch (h?.kind) {
    case 'host_tool_result':
      return 0;
    case 'reasoning':
      return 1;
    case 'text':
      return 2;
    case 'tool_call_delta':
      return 3;
    default:
      return 4;
  }
}
