import { share, type Observable } from '../util/rxjs.js';
import { randomUUID } from 'node:crypto';
import { AgentRxError, toAgentRxError } from '../errors.js';
import type { AgUiEvent } from '../events/agui-event.js';
import { agUiOf, withAgUi } from '../events/translated-event.js';
import type { AgentRxEvent, SessionEvent } from '../events/session-event.js';
import type { RawEvent, SessionResult } from '../model.js';
import { toolConfirmationOf } from '../plugin/host-event.js';
import type { LiveSession } from '../plugin/live-session.js';
import type { ClientAnswers } from '../plugin/session-options.js';
import { answerClientWith } from '../tools/client-tool.js';
import { stopReasonForCode, type StopReason } from '../plugin/event-consumer.js';
import { AsyncQueue, abortReason, abortable, followAbort } from '../util/async.js';
import type { ConsumerAttachment } from './consumer-hub.js';
import type { HostLink, HostLinkEvents } from './host-link.js';
import { checkResumable, firstInput, nothingToResume } from './first-input.js';
import { Ingestion } from './ingestion.js';
import { RequestLoop } from './request-loop.js';
import { isMessage, notMessage, type InboxItem } from './request-step.js';
import { RequestState } from './request-state.js';
import { AgentState } from './agent-state.js';
import { SessionControl } from './session-control.js';
import type { SessionDeps } from './session-deps.js';
import { SessionJournal } from './session-journal.js';
import { SessionOutcome } from './session-outcome.js';
import type { ResolvedSessionOptions } from './session-options.js';
import { StreamAttachment } from './stream-attachment.js';
import { ToolAnswerer, type Asked } from './tool-answerer.js';
import { TurnPoller } from './turn-poller.js';

export { REPROMPT_TEXT } from './request-loop.js';
export type { SessionDeps } from './session-deps.js';

/** Default kickoff text when no prompt is given (as in the reference library). */
export const DEFAULT_KICKOFF = 'Begin.';

/**
 * One agent session: the public object and the request loop. It drives the host turn by turn
 * through a {@link HostLink} (a stream attachment or a turn poller), answers `requires_action`
 * through the {@link ToolAnswerer}, and publishes every event through the {@link Ingestion}
 * pipeline on `events$` (envelopes) and `agui$` (AG-UI). All work is serialized: turns, redrives
 * and follow-up messages go through one inbox, handled one at a time.
 */
export class Session implements LiveSession {
  /** Every event of the session, in `seq` order, gap-free. Completes when the session closes. */
  readonly events$: Observable<SessionEvent>;
  /** The AG-UI translation of `events$`. */
  readonly agui$: Observable<AgUiEvent>;
  /**
   * A SessionResult at each terminal (each request of a live session). Completes when the session
   * closes (also when `AgentRx.stop()` cancels it: a shutdown is not a failure); errors with the
   * AgentRxError when the session fails or `cancel()` is called.
   */
  readonly results$: Observable<SessionResult>;
  /** The first request's result; rejects with a typed AgentRxError (`cancelled` also when `AgentRx.stop()` ended it). */
  readonly result: Promise<SessionResult>;
  /** Resolves once the session has fully closed: provider released, every consumer stopped. */
  readonly closed: Promise<void>;
  private readonly outcome = new SessionOutcome();
  private readonly inbox = new AsyncQueue<InboxItem>();
  private readonly control = new SessionControl();
  private readonly ingestion: Ingestion;
  private readonly link: HostLink;
  private readonly answerer: ToolAnswerer;
  private readonly loop: RequestLoop;
  private readonly journal: SessionJournal;
  private readonly consumers: ConsumerAttachment;
  private conn: unknown;
  private sessionIdValue: string | undefined;
  private readonly request$: RequestState;
  private threadId = '';
  private readonly agentState: AgentState;

  constructor(
    private readonly deps: SessionDeps,
    private readonly opts: ResolvedSessionOptions,
    private readonly live: boolean,
  ) {
    const provider = deps.provider;
    const conn = (): unknown => this.conn;
    this.ingestion = Ingestion.forProvider(provider, conn, opts);
    this.agentState = new AgentState(opts.state as Record<string, unknown> | undefined);
    this.journal = new SessionJournal(
      deps.store,
      provider.id,
      (error) => this.control.abort(error),
      (name) => deps.dispatcher.isIdempotent(name),
    );
    this.events$ = this.ingestion.events$;
    // One AG-UI translation per event, shared by the consumers and `agui$`.
    const translated$ = this.events$.pipe(withAgUi(), share());
    this.agui$ = translated$.pipe(agUiOf());
    ({ results$: this.results$, result: this.result, closed: this.closed } = this.outcome);
    this.consumers = deps.attachConsumers(translated$, () => this.sessionIdValue);
    this.request$ = new RequestState(opts);
    const events: HostLinkEvents = {
      turn: (turnEvents) => this.inbox.push({ kind: 'turn', events: turnEvents }),
      recovered: (rec) => this.queueRedrive({ uses: rec.pending, confirmations: rec.confirmations ?? [] }),
      failed: (error) => this.control.abort(error),
    };
    this.link =
      provider.mode === 'streaming'
        ? new StreamAttachment(
            provider,
            conn,
            this.ingestion,
            events,
            { live, ...opts, interruptTimeoutMs: deps.interruptTimeoutMs },
            this.control.signal,
            deps.logger,
          )
        : new TurnPoller(provider, conn, this.ingestion, events, deps.logger);
    this.answerer = new ToolAnswerer(
      {
        provider,
        dispatcher: deps.dispatcher,
        store: deps.store,
        logger: deps.logger,
        emit: (ev) => this.emitWithState(ev),
        state: () => this.agentState.value,
        sessionId: () => this.logId,
        history: () => this.ingestion.hostHistory,
        beforeTools: () =>
          provider.transcript && deps.store.durable !== false
            ? this.journal.checkpoint({ transcript: provider.transcript(this.conn) }, { sync: false })
            : Promise.resolve(),
        beforeRecord: () => this.journal.handOver(),
        holdTimeout: () => this.request$.hold(),
      },
      { ...opts, live },
    );
    this.loop = new RequestLoop({
      provider,
      inbox: this.inbox,
      link: this.link,
      answerer: this.answerer,
      ingestion: this.ingestion,
      state: this.request$,
      agentState: this.agentState,
      journal: this.journal,
      outcome: this.outcome,
      opts,
      live,
      conn,
      sessionId: () => this.sessionIdValue,
      threadId: () => this.threadId,
      abort: (error) => this.control.abort(error),
    });
    if (opts.signal) followAbort(opts.signal, () => this.cancel(), this.closed);
    void this.main();
  }

  /** The provider-side session id, once opened. */
  get sessionId(): string | undefined {
    return this.sessionIdValue;
  }

  /** The session's key in the store: the provider-side id, else its thread id. */
  private get logId(): string {
    return this.sessionIdValue ?? this.threadId;
  }

  /**
   * Replaces the agent's state (a JSON object; a client's state is the agent's): the next request
   * publishes it as its snapshot, and tools see it as `ctx.state`.
   */
  setState(state: Readonly<Record<string, unknown>>): void {
    this.agentState.replace(state as Record<string, unknown>);
  }

  /** Queues a follow-up user message; it is sent when the running request reaches a terminal. */
  message(text: string): void {
    if (typeof text !== 'string' || text.length === 0) throw new AgentRxError('invalid_options', 'message(text): text must be a non-empty string');
    if (this.control.closed || this.control.closing)
      throw new AgentRxError('session_closed', 'the session is closed; start a new one (pass sessionId to resume)');
    this.inbox.push({ kind: 'message', text });
    this.control.busy();
  }

  /**
   * Posts a raw user event now (streaming providers only), e.g. a tool confirmation. A
   * `user.tool_confirmation` for a local tool waiting for approval (`requireApproval`) is decided
   * here, with any provider.
   */
  async sendEvent(event: RawEvent): Promise<void> {
    // A decision on a local tool that waits for approval (requireApproval) is taken here.
    const decision = toolConfirmationOf(event);
    if (decision && this.answerer.approve(decision)) return;
    const p = this.deps.provider;
    if (p.mode !== 'streaming' || !p.rawInput) {
      throw new AgentRxError('unsupported', `provider '${p.id}' does not accept raw events (sendEvent needs a streaming provider)`);
    }
    if (this.control.closed) throw new AgentRxError('session_closed', 'the session is closed');
    if (this.conn === undefined) throw new AgentRxError('unsupported', 'the session is not open yet; wait for the first event before sendEvent');
    await p.pushInput(this.conn, p.rawInput(event), this.control.signal);
  }

  /** Hands the client's answers to the calls of its client-answered tools waiting for them (see `LiveSession.answerClient`). */
  answerClient(answers: ClientAnswers): Promise<void> {
    return answerClientWith(this.opts.tools, answers, (ev) => this.sendEvent(ev));
  }

  /** Cancels the session now: aborts in-flight work, interrupts the host, stops consumers ('cancelled'). */
  cancel(): void {
    this.control.cancel();
  }

  /**
   * `cancel()` on behalf of `AgentRx.stop()` (or a signal): the same abort, but `results$`
   * completes instead of erroring, so a subscriber without an error handler does not crash the
   * process that is shutting down. `result` still rejects with `cancelled`.
   */
  cancelForShutdown(): void {
    this.control.cancelForShutdown();
  }

  /**
   * Ends the session gracefully: the running request (if any) goes on to its terminal, then each
   * message queued before `close()` is answered in turn (each result arrives on `results$`); then
   * the session closes (`closed` resolves, consumers stop with 'completed'). `message()` after
   * `close()` throws `session_closed`. To abort now, `cancel()`.
   */
  close(): void {
    this.control.close();
  }

  /** The caller is done with this session: it closes as with `close()`; resolves once it has closed. */
  async release(): Promise<void> {
    this.close();
    await this.closed;
  }

  /** This process shuts down: `cancelForShutdown()`, resolved once the session has closed. */
  async leave(): Promise<void> {
    this.cancelForShutdown();
    await this.closed;
  }

  // ---------------------------------------------------------------- the loop

  private async main(): Promise<void> {
    const signal = this.control.signal;
    let stopReason: StopReason = 'completed';
    let failure: AgentRxError | undefined;
    try {
      // Start on a fresh macrotask: many sessions started in one tick then interleave with I/O
      // instead of running all their set-up in one long microtask drain.
      // A run times from the call: opening, resuming and waiting for the host count (a live session without a prompt waits for one).
      if (!this.live || this.opts.prompt !== undefined) this.request$.armFromCall((error) => this.control.abort(error));
      await new Promise<void>((resolve) => setImmediate(resolve));
      await this.open(signal);
      let first: unknown = firstInput(this.deps.provider, this.conn, this.opts);
      // A run resumed without a prompt on a request/response host with nothing pending has nothing to do (a stream may still speak).
      if (first === undefined && !this.live && !this.inbox.has(() => true) && !this.link.unprompted) throw nothingToResume(this.logId);
      while (!this.control.closing || first !== undefined || this.inbox.has(isMessage)) {
        if (first !== undefined) {
          const input = first;
          first = undefined;
          await this.loop.run(input, signal);
        } else {
          // Waits between requests for what starts the next one; `close()` ends the wait.
          const item = await this.control.whileIdle(() => this.inbox.take(signal));
          if (item.kind === 'message') {
            await this.loop.run(this.deps.provider.userInput(item.text), signal);
          } else {
            this.inbox.unshift(item);
            await this.loop.run(undefined, signal);
          }
        }
        if (!this.live) break;
      }
    } catch (e) {
      if (!this.control.isClosingEnd(e)) {
        failure = signal.aborted ? abortReason(signal) : toAgentRxError(e);
        stopReason = stopReasonForCode(failure.code);
      }
    }
    await this.shutdown(stopReason, failure);
  }

  private async open(signal: AbortSignal): Promise<void> {
    const p = this.deps.provider;
    // A resume reads the stored record first: a host whose history lives with the client (Local) restores it.
    const prior = this.opts.sessionId !== undefined ? await abortable(this.journal.load(this.opts.sessionId), signal) : undefined;
    checkResumable(p, this.opts, prior, this.deps.store.keepsClosed !== false);
    const handle = await abortable(this.deps.provision(), signal);
    // A client's copy of the conversation replaces the stored one where the host takes prior messages.
    const priorMessages = p.acceptsPriorMessages ? this.opts.history : undefined;
    const history = priorMessages ? undefined : prior?.transcript;
    this.conn = await abortable(
      p.open({
        sessionId: this.opts.sessionId,
        spec: this.deps.spec,
        handle,
        signal,
        maxTurns: this.opts.maxTurns,
        history,
        ...(priorMessages ? { priorMessages } : {}),
        ...(this.opts.settings ? { settings: this.opts.settings } : {}),
      }),
      signal,
    );
    this.sessionIdValue = p.sessionId(this.conn) ?? this.opts.sessionId;
    this.ingestion.sessionId = this.sessionIdValue;
    this.threadId = prior?.threadId ?? this.opts.threadId ?? this.sessionIdValue ?? `thread-${randomUUID()}`;
    this.ingestion.resumeFrom(await abortable(this.journal.open(this.logId, this.threadId, prior, this.events$, this.opts.dedupeWindow), signal));
    this.answerer.load(prior);
    // A resume recovers what the host has and queues a redrive of what it waits on, before any prompt.
    await this.link.connect(p.resumed(this.conn), signal);
    // The client's answers go with a redrive: without one, its run would wait for nothing.
    this.answerer.checkAnswersTaken(this.opts.prompt !== undefined || this.inbox.has(notMessage));
  }

  private queueRedrive(asked: Asked): void {
    const open = this.answerer.unanswered(asked);
    if (open.uses.length > 0 || open.confirmations.length > 0) this.inbox.push({ kind: 'redrive', asked: open });
  }

  /** Publishes a session event; after a tool's result, the state changes it made (a JSON Patch). */
  private emitWithState(ev: AgentRxEvent): void {
    this.ingestion.emit(ev);
    if (ev.type === 'agentrx.tool_result') for (const change of this.agentState.changesAfter(ev.toolUse.name)) this.ingestion.emit(change);
  }

  private async shutdown(reason: StopReason, failure: AgentRxError | undefined): Promise<void> {
    this.request$.end();
    if (failure)
      this.ingestion.emit({ type: 'agentrx.run_error', runId: this.request$.runId, threadId: this.threadId, code: failure.code, message: failure.message });
    this.outcome.ended(failure);
    this.control.markClosed();
    try {
      await this.link.release(reason === 'cancelled' || reason === 'timeout');
      // A session cancelled before it opened has no conn (and no transcript).
      await this.journal.close(failure, this.conn === undefined ? undefined : this.deps.provider.transcript?.(this.conn));
    } catch (e) {
      this.deps.logger.warn(`session ${this.logId || '(not opened)'}: releasing it failed: ${toAgentRxError(e).message}`);
    } finally {
      // Whatever failed above, the session is closed: its envelopes complete, consumers stop, waiters resume.
      this.ingestion.complete();
      await this.consumers.close(reason).catch(() => undefined);
      this.deps.onClosed?.();
      this.outcome.close();
    }
  }
}
