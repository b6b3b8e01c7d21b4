import { Observable, ReplaySubject, Subject, filter, share, type Subscription } from 'rxjs';
import { randomUUID } from 'node:crypto';
import { AgentRxError, toAgentRxError } from '../errors.js';
import type { AgUiEvent } from '../events/agui-event.js';
import { RecentKeys, dedupeById, extractTextDeltas, groupTurns, toAgUi } from '../events/operators/index.js';
import type { AgentRxEvent, EventDraft, SessionEvent } from '../events/session-event.js';
import type { Logger } from '../logger.js';
import { addUsage, emptyUsage, type AgentSpec, type RawEvent, type SessionResult, type ToolConfirmation, type ToolUse, type TurnResult, type Usage } from '../model.js';
import { defaultEventId, type AgentProvider, type IngestCursor, type Reconnected, type StreamItem } from '../plugin/agent-provider.js';
import { stopReasonForCode, type StopReason } from '../plugin/event-consumer.js';
import type { ConsumerAttachment } from '../kernel/consumer-hub.js';
import type { SessionStore } from '../store/session-store.js';
import type { ToolDispatcher } from '../tools/tool-dispatcher.js';
import { ToolLedger } from '../tools/tool-ledger.js';
import { AsyncQueue, abortReason, abortable, abortableDelay } from '../util/async.js';
import type { ConfirmTool, ResolvedSessionOptions, ToolDecision } from './session-options.js';

/** The text sent when `requireTerminalTool` re-prompts after an `end_turn` without the tool. */
export const REPROMPT_TEXT = (tool: string): string =>
  `You ended your turn without calling the \`${tool}\` tool. The task is complete only when you call \`${tool}\`. Call it now.`;

/** Provider events kept per request for split-batch recovery when `retainEvents` is off. */
const UNRETAINED_HISTORY = 1_000;

/** Default kickoff text when no prompt is given (as in the reference library). */
export const DEFAULT_KICKOFF = 'Begin.';

/** What a Session needs from its container. */
export interface SessionDeps {
  readonly provider: AgentProvider;
  readonly dispatcher: ToolDispatcher;
  readonly store: SessionStore;
  readonly spec: AgentSpec;
  /** Provisions (or looks up) the provider-side agent; its handle goes to `open`. */
  provision(): Promise<unknown>;
  readonly logger: Logger;
  /** Attaches the consumers to the session's AG-UI stream. */
  attachConsumers(agui$: Observable<AgUiEvent>, sessionId: () => string | undefined): ConsumerAttachment;
  /** Called once when the session has fully closed. */
  onClosed?(): void;
}

type InboxItem =
  | { readonly kind: 'turn'; readonly events: readonly RawEvent[] }
  | { readonly kind: 'redrive'; readonly pending: readonly ToolUse[]; readonly confirmations: readonly ToolUse[] }
  | { readonly kind: 'message'; readonly text: string };

/**
 * One agent session: drives the provider turn by turn, runs custom tools locally through the
 * ledger, and publishes every event on `events$` (envelopes) and `agui$` (AG-UI). All work is
 * serialized: turns, redrives and follow-up messages go through one inbox, handled one at a time.
 */
export class Session {
  /** Every event of the session, in `seq` order, gap-free. Completes when the session closes. */
  readonly events$: Observable<SessionEvent>;
  /** The AG-UI translation of `events$`. */
  readonly agui$: Observable<AgUiEvent>;
  /** A SessionResult at each terminal (each request of a live session). Completes on close. */
  readonly results$: Observable<SessionResult>;
  /** The first request's result; rejects with a typed AgentRxError. */
  readonly result: Promise<SessionResult>;
  /** Resolves once the session has fully closed: provider released, every consumer stopped. */
  readonly closed: Promise<void>;
  private markClosed!: () => void;

  private readonly bus = new Subject<SessionEvent>();
  private readonly drafts = new Subject<EventDraft>();
  private readonly results = new ReplaySubject<SessionResult>(1);
  private readonly inbox = new AsyncQueue<InboxItem>();
  private readonly ctrl = new AbortController();
  /** Ids of the most recently ingested provider events (bounded by `dedupeWindow`). */
  private readonly seen: RecentKeys;
  private readonly consumers: ConsumerAttachment;
  private readonly eventId: (e: RawEvent) => string | undefined;
  private ledger = new ToolLedger();
  private conn: unknown;
  private sessionIdValue: string | undefined;
  private seq = 0;
  private turn = 0;
  private runNo = 0;
  private runId = '';
  private threadId = '';
  private requestEvents: RawEvent[] = [];
  private requestUsage: Usage = emptyUsage();
  private terminalToolCalled = false;
  private reprompts = 0;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private resolveFirst!: (r: SessionResult) => void;
  private rejectFirst!: (e: AgentRxError) => void;
  private firstSettled = false;
  private isClosed = false;
  // Streaming attachment state.
  private generation = 0;
  private streamSub: Subscription | undefined;
  private reconnectAttempt = 0;
  /** Host-run tool uses this session has answered a confirmation for. */
  private readonly confirmed = new Set<string>();
  /**
   * streaming: `reconnect` said the host is in the middle of a turn (a resume or a re-attach while
   * it runs). Input waits until that turn's boundary, so the boundary is not taken for its answer.
   */
  private hostMidTurn = false;
  private reconnecting = false;
  /**
   * While set, stream events are held here instead of ingested: between re-attaching a stream
   * and feeding the history it missed, so history (older) is ingested before live events.
   */
  private holding: RawEvent[] | undefined;

  constructor(
    private readonly deps: SessionDeps,
    private readonly opts: ResolvedSessionOptions,
    private readonly live: boolean,
  ) {
    const provider = deps.provider;
    this.seen = new RecentKeys(opts.dedupeWindow);
    this.eventId = provider.eventId ? (e) => provider.eventId!(e) : defaultEventId;
    this.events$ = this.bus.asObservable();
    this.agui$ = this.bus.pipe(toAgUi(), share());
    this.results$ = this.results.asObservable();
    this.result = new Promise<SessionResult>((resolve, reject) => {
      this.resolveFirst = resolve;
      this.rejectFirst = reject;
    });
    this.closed = new Promise<void>((resolve) => (this.markClosed = resolve));
    // The caller may never await `result` (live sessions use results$); do not crash the process.
    this.result.catch(() => undefined);
    this.consumers = deps.attachConsumers(this.agui$, () => this.sessionIdValue);

    // Ingestion: drop duplicates once, add normalized text deltas right after their raw event, stamp seq.
    const textDelta = provider.textDelta ? (e: RawEvent) => provider.textDelta!(e) : () => undefined;
    this.drafts
      .pipe(dedupeById((d: EventDraft) => (d.source === 'provider' ? d.id : undefined), { seen: this.seen }), extractTextDeltas(textDelta))
      .subscribe((d) => this.stamp(d));
    if (provider.mode === 'streaming') {
      const isBoundary = (e: SessionEvent): boolean => {
        try {
          return provider.isTurnBoundary?.(e.raw) === true;
        } catch {
          return false;
        }
      };
      this.bus
        .pipe(filter((e) => e.source === 'provider'), groupTurns(isBoundary))
        .subscribe((envs) => {
          // A closed turn ends any turn the host was running when the stream was (re)attached.
          this.hostMidTurn = false;
          this.inbox.push({ kind: 'turn', events: envs.map((e) => e.raw) });
        });
    }
    if (opts.signal) {
      const callerSignal = opts.signal;
      if (callerSignal.aborted) this.cancel();
      else {
        const onCallerAbort = (): void => this.cancel();
        callerSignal.addEventListener('abort', onCallerAbort, { once: true });
        // A long-lived signal shared by many sessions must not collect one listener per session.
        void this.closed.then(() => callerSignal.removeEventListener('abort', onCallerAbort));
      }
    }
    void this.main();
  }

  /** The provider-side session id, once opened. */
  get sessionId(): string | undefined {
    return this.sessionIdValue;
  }

  /** Queues a follow-up user message; it is sent when the running request reaches a terminal. */
  message(text: string): void {
    if (typeof text !== 'string' || text.length === 0) throw new AgentRxError('invalid_options', 'message(text): text must be a non-empty string');
    if (this.isClosed) throw new AgentRxError('session_closed', 'the session is closed; start a new one (pass sessionId to resume)');
    this.inbox.push({ kind: 'message', text });
  }

  /** Posts a raw user event now (streaming providers only), e.g. a tool confirmation. */
  async sendEvent(event: RawEvent): Promise<void> {
    const p = this.deps.provider;
    if (p.mode !== 'streaming' || !p.rawInput || !p.pushInput) {
      throw new AgentRxError('unsupported', `provider '${p.id}' does not accept raw events (sendEvent needs a streaming provider)`);
    }
    if (this.isClosed) throw new AgentRxError('session_closed', 'the session is closed');
    if (this.conn === undefined) throw new AgentRxError('unsupported', 'the session is not open yet; wait for the first event before sendEvent');
    await p.pushInput(this.conn, p.rawInput(event), this.ctrl.signal);
  }

  /** Cancels the session: aborts in-flight work, interrupts the host, stops consumers ('cancelled'). */
  cancel(): void {
    if (!this.ctrl.signal.aborted) this.ctrl.abort(new AgentRxError('cancelled', 'the session was cancelled'));
  }

  /** Ends a live session gracefully after the running request (consumers stop with 'completed'). */
  close(): void {
    if (!this.ctrl.signal.aborted) this.ctrl.abort(new SessionClosing());
  }

  // ---------------------------------------------------------------- main loop

  private async main(): Promise<void> {
    const signal = this.ctrl.signal;
    let stopReason: StopReason = 'completed';
    let failure: AgentRxError | undefined;
    try {
      // Start on a fresh macrotask: many sessions started in one tick then interleave with I/O
      // instead of running all their set-up in one long microtask drain.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await this.open(signal);
      if (this.deps.provider.resumed(this.conn)) await this.recover(signal);
      let first: unknown = this.firstInput();
      for (;;) {
        if (first !== undefined) {
          const input = first;
          first = undefined;
          await this.request(input, signal);
        } else {
          const item = await this.inbox.take(signal);
          if (item.kind === 'message') {
            await this.request(this.deps.provider.userInput(item.text), signal);
          } else {
            this.inbox.unshift(item);
            await this.request(undefined, signal);
          }
        }
        if (!this.live) break;
      }
    } catch (e) {
      if (e instanceof SessionClosing || (signal.aborted && signal.reason instanceof SessionClosing)) {
        stopReason = 'completed';
      } else {
        failure = signal.aborted ? abortReason(signal) : toAgentRxError(e);
        stopReason = stopReasonForCode(failure.code);
      }
    }
    await this.shutdown(stopReason, failure);
  }

  /** Input of the first request: kickoff on a fresh session, the prompt on a resume (none → wait). */
  private firstInput(): unknown {
    const p = this.deps.provider;
    if (p.resumed(this.conn)) return this.opts.prompt !== undefined ? p.userInput(this.opts.prompt) : undefined;
    // No prompt stays undefined: the provider picks its default (or, with an outcome, sends none).
    return p.kickoffInput({ prompt: this.opts.prompt, outcome: this.opts.outcome });
  }

  private async open(signal: AbortSignal): Promise<void> {
    const p = this.deps.provider;
    const handle = await abortable(this.deps.provision(), signal);
    this.conn = await abortable(p.open({ sessionId: this.opts.sessionId, spec: this.deps.spec, handle, signal, maxTurns: this.opts.maxTurns }), signal);
    this.sessionIdValue = p.sessionId(this.conn) ?? this.opts.sessionId;
    this.threadId = this.sessionIdValue ?? `thread-${randomUUID()}`;
    if (this.sessionIdValue) {
      const record = await this.deps.store.load(this.sessionIdValue);
      if (record) this.ledger = new ToolLedger(record.ledger);
    }
    if (p.mode === 'streaming') {
      // A resume lists history after attaching: hold live events until it has been fed.
      if (p.resumed(this.conn) && p.reconnect) this.holding = [];
      await this.attach(signal);
    }
  }

  /** Resume: recover what the host has, then redrive unanswered tool uses before any prompt. */
  private async recover(signal: AbortSignal): Promise<void> {
    const p = this.deps.provider;
    if (!p.reconnect) return;
    const rec = await abortable(p.reconnect(this.conn, this.cursor(), signal), signal);
    if (rec.midTurn === true) this.hostMidTurn = true;
    this.feedRecovered(rec.missed);
    this.queueRedrive(rec.pending, rec.confirmations ?? []);
  }

  /** Ingests recovered history, then the live events held since the stream re-attached. */
  private feedRecovered(missed: readonly RawEvent[]): void {
    for (const ev of missed) this.ingest(ev);
    const held = this.holding ?? [];
    this.holding = undefined;
    for (const ev of held) this.ingest(ev);
  }

  private queueRedrive(pending: readonly ToolUse[], confirmations: readonly ToolUse[]): void {
    const open = pending.filter((u) => this.ledger.get(u.id)?.state !== 'posted');
    const unconfirmed = confirmations.filter((u) => !this.confirmed.has(u.id));
    if (open.length > 0 || unconfirmed.length > 0) this.inbox.push({ kind: 'redrive', pending: open, confirmations: unconfirmed });
  }

  // ---------------------------------------------------------------- one request

  /**
   * Runs one request to its terminal. The inbox is handled in arrival order: turns that closed
   * before the request (missed during a gap, or found on a resume) come first, then redrives,
   * then `input`. Only one input waits for a turn at a time; tool results and redrives are
   * sent as soon as they are ready.
   */
  private async request(input: unknown, signal: AbortSignal): Promise<void> {
    this.beginRequest();
    const toSend: unknown[] = input !== undefined ? [input] : [];
    const streaming = this.deps.provider.mode === 'streaming';
    let awaiting = false;
    let ready: InboxItem | undefined;
    const send = async (next: unknown): Promise<void> => {
      const raw = next instanceof PostedInput ? next.input : next;
      if (streaming) {
        await abortable(this.deps.provider.pushInput!(this.conn, raw, signal), signal);
        awaiting = true;
      } else {
        ready = { kind: 'turn', events: await this.poll(raw, signal) };
      }
      await this.markPosted(next);
    };
    for (;;) {
      let item = ready ?? this.inbox.tryTake(notMessage);
      ready = undefined;
      if (!item && !awaiting && toSend.length > 0) {
        if (!this.hostMidTurn) {
          await send(toSend.shift());
          continue;
        }
        this.emit({ type: 'agentrx.diagnostic', message: 'the host is still running a turn; the input is sent once that turn ends' });
      }
      if (!item) {
        if (!streaming) throw new AgentRxError('provider_error', 'nothing to send: every unanswered tool use was already answered and no prompt was given');
        item = await this.inbox.take(signal, notMessage);
      }
      if (item.kind === 'redrive') {
        const answer = await this.redrive(item.pending, item.confirmations, signal);
        if (answer !== undefined) await send(answer);
        // Confirmations announced for the caller to answer: the host's next turn follows sendEvent.
        else if (item.confirmations.some((u) => !this.confirmed.has(u.id))) awaiting = true;
        continue;
      }
      if (item.kind !== 'turn') continue;
      awaiting = false;
      const turn = this.deps.provider.normalize(item.events);
      this.turn++;
      this.requestUsage = addUsage(this.requestUsage, turn.usage);
      if (turn.customToolUses.some((u) => u.name === this.opts.terminalTool)) this.terminalToolCalled = true;
      this.emit({ type: 'agentrx.turn_end', turn: this.turn, terminal: turn.terminal, stopReason: turn.stopReason, usage: turn.usage, customToolUses: turn.customToolUses, serverToolUses: turn.serverToolUses });
      if (turn.terminal === 'requires_action') {
        const confirmations = this.recoverConfirmations(turn);
        const uses = this.recoverUses(turn, new Set(confirmations.map((u) => u.id)));
        this.checkLimits();
        const answer = await this.answer(uses, confirmations, signal);
        if (answer !== undefined) await send(answer);
        // Nothing to post: the caller answers the confirmations with sendEvent; the host's next turn follows.
        else awaiting = true;
        continue;
      }
      if (turn.terminal === 'end_turn' && toSend.length > 0) continue;
      if (turn.terminal === 'end_turn' && this.opts.terminalTool && !this.terminalToolCalled) {
        if (this.reprompts < this.opts.maxReprompts) {
          this.checkLimits();
          this.reprompts++;
          const text = REPROMPT_TEXT(this.opts.terminalTool);
          this.emit({ type: 'agentrx.reprompt', attempt: this.reprompts, text });
          await send(this.deps.provider.userInput(text));
          continue;
        }
        this.finish({ ...turn, terminal: 'terminated', stopReason: 'no_terminal_tool' });
        return;
      }
      this.finish(turn);
      return;
    }
  }

  private beginRequest(): void {
    this.turn = 0;
    this.requestEvents = [];
    this.requestUsage = emptyUsage();
    this.terminalToolCalled = false;
    this.reprompts = 0;
    this.runNo++;
    this.runId = `${this.threadId}:run-${this.runNo}`;
    this.emit({ type: 'agentrx.run_started', runId: this.runId, threadId: this.threadId, resumed: this.deps.provider.resumed(this.conn) });
    clearTimeout(this.timeoutTimer);
    this.timeoutTimer = setTimeout(() => {
      this.ctrl.abort(new AgentRxError('timeout', `the run did not finish within ${this.opts.timeoutMs} ms`, { timeoutMs: this.opts.timeoutMs }));
    }, this.opts.timeoutMs);
  }

  private async markPosted(input: unknown): Promise<void> {
    if (!(input instanceof PostedInput)) return;
    this.ledger.markPosted(input.toolUseIds);
    await this.persist();
  }

  /** request/response: one turn; every event goes through ingestion as it arrives. */
  private poll(input: unknown, signal: AbortSignal): Promise<RawEvent[]> {
    const batch: RawEvent[] = [];
    return new Promise<RawEvent[]>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortReason(signal));
        return;
      }
      const live: { sub?: Subscription } = {};
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        return true;
      };
      const onAbort = (): void => {
        if (!settle()) return;
        live.sub?.unsubscribe();
        reject(abortReason(signal));
      };
      // Listen before subscribing: a provider may complete synchronously inside subscribe().
      signal.addEventListener('abort', onAbort, { once: true });
      live.sub = this.deps.provider.pollTurn!(this.conn, input).subscribe({
        next: (ev) => {
          if (this.ingest(ev)) batch.push(ev);
        },
        error: (e: unknown) => {
          if (settle()) reject(toAgentRxError(e));
        },
        complete: () => {
          if (settle()) resolve(batch);
        },
      });
      if (settled) live.sub.unsubscribe();
    });
  }

  /**
   * Tool uses of a requires_action turn. When the boundary names ids (`requestedToolUseIds`),
   * exactly those are answered, in that order: from this batch, else from the unanswered history
   * (they came in an earlier batch), else from the ledger (a re-ask of an answered id replays its
   * recorded result). Without named ids: the batch's uses, else every unanswered use in the
   * history. Never an empty resume.
   */
  private recoverUses(turn: TurnResult, confirming: ReadonlySet<string>): readonly ToolUse[] {
    const requested = (turn.requestedToolUseIds ?? []).filter((id) => !confirming.has(id));
    if (confirming.size > 0 && requested.length === 0) return [];
    if (requested.length === 0) {
      if (turn.customToolUses.length > 0 || turn.continueWithoutTools) return turn.customToolUses;
      const pending = this.deps.provider.pendingToolUses?.(this.requestEvents) ?? [];
      if (pending.length > 0) return pending;
      throw this.unresolved(turn);
    }
    const known = new Map(turn.customToolUses.map((u) => [u.id, u]));
    if (requested.some((id) => !known.has(id))) {
      for (const u of this.deps.provider.pendingToolUses?.(this.requestEvents) ?? []) if (!known.has(u.id)) known.set(u.id, u);
    }
    const uses = requested.flatMap((id): ToolUse[] => {
      const use = known.get(id);
      if (use) return [use];
      const entry = this.ledger.get(id);
      return entry?.result ? [{ id, name: entry.name, input: {} }] : [];
    });
    if (uses.length > 0) return uses;
    throw this.unresolved(turn);
  }

  /**
   * Host-run tool uses a `requires_action` turn asks to confirm: those of the batch, else (a
   * re-emitted idle naming the rest) those the request's history holds. Ids this session has
   * already answered are left out.
   */
  private recoverConfirmations(turn: TurnResult): readonly ToolUse[] {
    const requested = turn.requestedToolUseIds ?? [];
    const found = new Map((turn.confirmationToolUses ?? []).map((u) => [u.id, u]));
    if (requested.some((id) => !found.has(id))) {
      for (const u of this.deps.provider.pendingConfirmations?.(this.requestEvents, requested) ?? []) if (!found.has(u.id)) found.set(u.id, u);
    }
    return [...found.values()].filter((u) => !this.confirmed.has(u.id));
  }

  /**
   * The input answering a `requires_action`: the tool results (if any), plus the confirmation
   * decisions of `confirmTool` in the same post. Without `confirmTool`, a live session announces
   * the request and posts only the results (undefined when there are none); `run` fails.
   */
  private async answer(uses: readonly ToolUse[], confirmations: readonly ToolUse[], signal: AbortSignal): Promise<PostedInput | undefined> {
    // Without confirmations this is the plain resume (an empty one included, see continueWithoutTools).
    if (confirmations.length === 0) return this.runTools(uses, signal);
    const p = this.deps.provider;
    const decide = this.opts.confirmTool;
    // Checked before any tool runs: a run that cannot answer fails without executing anything.
    if (!decide || !p.confirmationInput) {
      this.emit({ type: 'agentrx.confirmation_required', toolUses: confirmations });
      if (!this.live) {
        const names = confirmations.map((u) => `'${u.name}' (${u.id})`).join(', ');
        throw new AgentRxError(
          'unresolved_requires_action',
          p.confirmationInput
            ? `the host asks to confirm ${names} before running it; pass confirmTool in the session options, or use rx.start() and answer with session.sendEvent({ type: 'user.tool_confirmation', tool_use_id, result: 'allow' | 'deny' })`
            : `the host asks to confirm ${names} but provider '${p.id}' cannot answer confirmations`,
          { toolUses: confirmations },
        );
      }
      return uses.length > 0 ? this.runTools(uses, signal) : undefined;
    }
    const results = uses.length > 0 ? await this.runTools(uses, signal) : undefined;
    const decisions: ToolConfirmation[] = [];
    for (const toolUse of confirmations) {
      const decision = await this.decide(decide, toolUse, signal);
      this.emit({ type: 'agentrx.tool_confirmation', toolUse, allow: decision.allow, ...(decision.denyMessage !== undefined ? { denyMessage: decision.denyMessage } : {}) });
      decisions.push(decision);
    }
    for (const d of decisions) this.confirmed.add(d.toolUseId);
    return new PostedInput(p.confirmationInput(decisions, results?.input), results?.toolUseIds ?? []);
  }

  /** Calls `confirmTool`; a throw, a rejection or a malformed answer denies the tool. */
  private async decide(decide: ConfirmTool, toolUse: ToolUse, signal: AbortSignal): Promise<ToolConfirmation> {
    try {
      const d: unknown = await abortable(Promise.resolve().then(() => decide(toolUse)), signal);
      if (typeof d === 'boolean') return { toolUseId: toolUse.id, allow: d };
      if (typeof d === 'object' && d !== null && typeof (d as ToolDecision).allow === 'boolean') {
        const { allow, denyMessage } = d as ToolDecision;
        return { toolUseId: toolUse.id, allow, ...(!allow && typeof denyMessage === 'string' ? { denyMessage } : {}) };
      }
      return { toolUseId: toolUse.id, allow: false, denyMessage: 'confirmTool returned no decision' };
    } catch (e) {
      if (signal.aborted) throw abortReason(signal);
      this.deps.logger.warn('confirmTool failed; the tool use is denied', { toolUseId: toolUse.id, error: toAgentRxError(e).message });
      return { toolUseId: toolUse.id, allow: false, denyMessage: 'the confirmation failed' };
    }
  }

  private unresolved(turn: TurnResult): AgentRxError {
    return new AgentRxError('unresolved_requires_action', 'the host requires action but none of the tool uses it names could be found in this batch, the history or the ledger', { stopReason: turn.stopReason, requested: turn.requestedToolUseIds });
  }

  /** Runs tools (ledger-guarded) and returns the resume input; marks results posted after sending. */
  private async runTools(uses: readonly ToolUse[], signal: AbortSignal): Promise<PostedInput> {
    const results = await this.deps.dispatcher.dispatch(uses, {
      sessionId: this.sessionIdValue,
      signal,
      toolTimeoutMs: this.opts.toolTimeoutMs,
      concurrency: this.opts.toolConcurrency,
      ledger: this.ledger,
      persist: () => this.persist(),
      onStarted: (toolUse) => this.emit({ type: 'agentrx.tool_started', toolUse }),
      onResult: (toolUse, result, replayed, durationMs) => this.emit({ type: 'agentrx.tool_result', toolUse, result, replayed, durationMs }),
    });
    if (uses.length === 0 && this.deps.provider.mode === 'streaming') {
      throw new AgentRxError('unresolved_requires_action', 'refusing to post an empty list of tool results');
    }
    return new PostedInput(this.deps.provider.resumeInput(uses, results), uses.map((u) => u.id));
  }

  /**
   * Redrive after a reconnect or a resume: unanswered tool uses (skipping what was already posted)
   * and confirmations the host is still blocked on (skipping what this session answered).
   */
  private async redrive(pending: readonly ToolUse[], confirmations: readonly ToolUse[], signal: AbortSignal): Promise<PostedInput | undefined> {
    const open = pending.filter((u) => this.ledger.get(u.id)?.state !== 'posted');
    const unconfirmed = confirmations.filter((u) => !this.confirmed.has(u.id));
    if (open.length === 0 && unconfirmed.length === 0) return undefined;
    if (unconfirmed.length === 0) return this.runTools(open, signal);
    return this.answer(open, unconfirmed, signal);
  }

  private checkLimits(): void {
    const verdict = this.opts.turnGuard?.(this.requestUsage, this.turn);
    if (verdict) {
      throw new AgentRxError('halted', typeof verdict === 'string' ? `halted by turnGuard: ${verdict}` : 'halted by turnGuard', { turns: this.turn, usage: this.requestUsage });
    }
    if (this.turn >= this.opts.maxTurns) {
      throw new AgentRxError('max_turns_exceeded', `the run reached maxTurns (${this.opts.maxTurns}) without finishing`, { turns: this.turn, usage: this.requestUsage });
    }
  }

  private finish(turn: TurnResult): void {
    clearTimeout(this.timeoutTimer);
    this.reconnectAttempt = 0;
    const p = this.deps.provider;
    const result: SessionResult = {
      terminal: turn.terminal,
      stopReason: turn.stopReason,
      text: turn.text,
      customToolUses: turn.customToolUses,
      serverToolUses: turn.serverToolUses,
      ...(turn.continueWithoutTools ? { continueWithoutTools: true } : {}),
      sessionId: this.sessionIdValue,
      provider: p.id,
      turns: this.turn,
      usage: this.requestUsage,
      transcript: p.transcript?.(this.conn),
      events: this.opts.retainEvents ? this.requestEvents : [],
    };
    this.emit({ type: 'agentrx.run_finished', runId: this.runId, threadId: this.threadId, terminal: result.terminal, stopReason: result.stopReason, turns: result.turns, usage: result.usage });
    this.results.next(result);
    if (!this.firstSettled) {
      this.firstSettled = true;
      this.resolveFirst(result);
    }
  }

  // ---------------------------------------------------------------- events

  /** Feeds one provider event into the pipeline. Returns false for a duplicate. */
  private ingest(raw: RawEvent): boolean {
    const before = this.seq;
    this.drafts.next({ source: 'provider', id: this.eventId(raw), raw, turn: this.turn + 1 });
    return this.seq !== before;
  }

  private emit(ev: AgentRxEvent): void {
    this.drafts.next({ source: 'agentrx', raw: ev as unknown as RawEvent, turn: this.turn });
  }

  private stamp(d: EventDraft): void {
    if (this.isClosed) return;
    const seq = ++this.seq;
    const sessionId = this.sessionIdValue;
    const provider = this.deps.provider.id;
    const at = Date.now();
    // Two literal shapes rather than a spread of `{ id }`: this runs for every event.
    const env: SessionEvent =
      d.id !== undefined
        ? { seq, sessionId, turn: d.turn, provider, source: d.source, id: d.id, raw: d.raw, at }
        : { seq, sessionId, turn: d.turn, provider, source: d.source, raw: d.raw, at };
    if (d.source === 'provider') {
      this.requestEvents.push(d.raw);
      // Without retention, keep a bounded window: enough for split-batch recovery, never the whole log.
      if (!this.opts.retainEvents && this.requestEvents.length > 2 * UNRETAINED_HISTORY) this.requestEvents.splice(0, this.requestEvents.length - UNRETAINED_HISTORY);
    }
    this.bus.next(env);
  }

  // ---------------------------------------------------------------- streaming attachment

  /** Where ingestion stands, for `reconnect`. */
  private cursor(): IngestCursor {
    return { ingested: this.seen.size, has: (id) => this.seen.has(id) };
  }

  /** Attaches a new stream generation and waits until it is open. */
  private attach(signal: AbortSignal): Promise<void> {
    const gen = ++this.generation;
    this.streamSub?.unsubscribe();
    return new Promise<void>((resolve, reject) => {
      let opened = false;
      const onAbort = (): void => reject(abortReason(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      const settleOpen = (): void => {
        opened = true;
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const dropped = (reason: string): void => {
        if (gen !== this.generation || this.isClosed || signal.aborted) return;
        if (!opened) {
          signal.removeEventListener('abort', onAbort);
          reject(new AgentRxError('stream_error', `the event stream failed before it opened: ${reason}`));
          return;
        }
        void this.reconnectLoop(reason);
      };
      this.streamSub = this.deps.provider.stream!(this.conn).subscribe({
        next: (item: StreamItem) => {
          if (gen !== this.generation) return;
          if (item.kind === 'open') settleOpen();
          else if (item.kind === 'event') {
            if (this.holding) this.holding.push(item.event);
            else this.ingest(item.event);
          }
          else this.emit({ type: 'agentrx.diagnostic', message: item.message });
        },
        error: (e: unknown) => dropped(toAgentRxError(e, 'stream_error').message),
        complete: () => dropped('the stream closed before the session ended'),
      });
    });
  }

  /**
   * After a drop: back off (exponential, jittered), re-attach first, then list history, feed
   * missed events into the pipeline, and queue a redrive of unanswered tool uses.
   */
  private async reconnectLoop(reason: string): Promise<void> {
    if (this.reconnecting) return;
    this.reconnecting = true;
    const signal = this.ctrl.signal;
    try {
      for (;;) {
        this.reconnectAttempt++;
        const attempt = this.reconnectAttempt;
        if (!this.live && attempt > this.opts.reconnectAttempts) {
          this.ctrl.abort(new AgentRxError('stream_error', `the event stream dropped and ${this.opts.reconnectAttempts} reconnect attempts failed: ${reason}`));
          return;
        }
        const cap = Math.min(30_000, this.opts.reconnectBaseMs * 2 ** (attempt - 1));
        const delayMs = Math.round(cap / 2 + Math.random() * (cap / 2));
        this.emit({ type: 'agentrx.reconnecting', attempt, delayMs, reason });
        try {
          await abortableDelay(delayMs, signal);
          this.holding = [];
          await this.attach(signal);
          const rec: Reconnected = this.deps.provider.reconnect ? await abortable(this.deps.provider.reconnect(this.conn, this.cursor(), signal), signal) : { missed: [], pending: [] };
          if (rec.midTurn === true) this.hostMidTurn = true;
          this.feedRecovered(rec.missed);
          this.emit({ type: 'agentrx.reconnected', attempt, missed: rec.missed.length, pending: rec.pending.length });
          this.queueRedrive(rec.pending, rec.confirmations ?? []);
          return;
        } catch (e) {
          this.holding = undefined;
          if (signal.aborted) return;
          const err = toAgentRxError(e, 'stream_error');
          if (err.details?.['retryable'] === false) {
            this.ctrl.abort(err);
            return;
          }
          reason = err.message;
        }
      }
    } finally {
      this.reconnecting = false;
    }
  }

  // ---------------------------------------------------------------- persistence and shutdown

  private async persist(): Promise<void> {
    if (!this.sessionIdValue) return;
    await this.deps.store.save({ version: 1, sessionId: this.sessionIdValue, provider: this.deps.provider.id, ledger: this.ledger.snapshot(), updatedAt: Date.now() });
  }

  private async shutdown(reason: StopReason, failure: AgentRxError | undefined): Promise<void> {
    clearTimeout(this.timeoutTimer);
    const p = this.deps.provider;
    if (failure) {
      this.emit({ type: 'agentrx.run_error', runId: this.runId, threadId: this.threadId, code: failure.code, message: failure.message });
      if (!this.firstSettled) {
        this.firstSettled = true;
        this.rejectFirst(failure);
      }
    } else if (!this.firstSettled) {
      this.firstSettled = true;
      this.rejectFirst(new AgentRxError('session_closed', 'the session closed before its first request finished'));
    }
    this.isClosed = true;
    this.generation++;
    this.streamSub?.unsubscribe();
    if (p.interrupt && this.conn !== undefined && (reason === 'cancelled' || reason === 'timeout')) {
      const quick = AbortSignal.timeout(2_000);
      await p.interrupt(this.conn, quick).catch((e: unknown) => this.deps.logger.warn('interrupt failed', { provider: p.id, error: toAgentRxError(e).message }));
    }
    if (this.conn !== undefined) {
      await Promise.resolve()
        .then(() => p.close?.(this.conn))
        .catch((e: unknown) => this.deps.logger.warn('provider close failed', { provider: p.id, error: toAgentRxError(e).message }));
    }
    this.bus.complete();
    this.drafts.complete();
    this.results.complete();
    await this.consumers.close(reason);
    this.deps.onClosed?.();
    this.markClosed();
  }
}

/** Resume input plus the ids it answers, so they are marked posted once the host accepted it. */
class PostedInput {
  constructor(
    readonly input: unknown,
    readonly toolUseIds: readonly string[],
  ) {}
}

class SessionClosing extends Error {}

const notMessage = (i: InboxItem): boolean => i.kind !== 'message';

