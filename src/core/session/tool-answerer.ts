import { toolArtifacts } from '../artifacts/provider-artifacts.js';
import { AgentRxError } from '../errors.js';
import type { AgentRxEvent } from '../events/session-event.js';
import type { Logger } from '../logger.js';
import type { ToolConfirmation, ToolUse, TurnResult } from '../model.js';
import type { AgentProvider } from '../plugin/agent-provider.js';
import type { SessionRecord, SessionStore } from '../store/session-store.js';
import type { ClientAnswers } from '../plugin/session-options.js';
import { ClientAnswerBook, checkClientAnswers } from '../tools/client-answers.js';
import type { ToolDispatcher } from '../tools/tool-dispatcher.js';
import { ToolLedger, type LedgerState } from '../tools/tool-ledger.js';
import type { RecoveryEvent } from './host-event-drafts.js';
import { awaitingConfirmation, pendingToolUses } from './host-history.js';
import type { ConfirmTool } from './session-options.js';
import { ToolApprovals, decideWith } from './tool-approvals.js';

/** What a ToolAnswerer needs from its session. */
export interface ToolAnswererDeps {
  readonly provider: AgentProvider;
  readonly dispatcher: ToolDispatcher;
  readonly store: SessionStore;
  readonly logger: Logger;
  /** Publishes one of the session's events. */
  emit(ev: AgentRxEvent): void;
  /** The agent's state tools see as `ctx.state` (undefined: the session has none). */
  state?(): Record<string, unknown> | undefined;
  /** The provider-side session id (ledger key), once open. */
  sessionId(): string | undefined;
  /** The current request's tool uses, their answers and turn ends, oldest first (for recovery). */
  history(): readonly RecoveryEvent[];
  /** Called before tools run: the session's record is brought up to date (a resume may need its transcript). */
  beforeTools(): Promise<void>;
  /**
   * Called before a tool's result is stored in the ledger: the log up to it is handed to the
   * store, so the (synced) ledger write that follows makes it durable too.
   */
  beforeRecord(): Promise<void>;
  /** A tool use starts waiting on its client: the run timeout is held until the returned release is called. */
  holdTimeout?(): () => void;
}

/** The answering policy of a session. */
export interface ToolAnswererOptions {
  readonly confirmTool: ConfirmTool | undefined;
  /** A live session announces confirmations it cannot decide and waits; a run fails. */
  readonly live: boolean;
  readonly toolTimeoutMs: number;
  readonly toolConcurrency: number;
  /** A resume's answers from the client to the uses the stored ledger holds as `awaiting_client`. */
  readonly clientAnswers?: ClientAnswers | undefined;
  /** The run timeout (ms): the deadline of a wait for the caller's approval. */
  readonly timeoutMs?: number | undefined;
}

/** The input answering a `requires_action`, with the tool-use ids it answers (marked posted once sent). */
export class Answer {
  constructor(
    readonly input: unknown,
    readonly toolUseIds: readonly string[],
  ) {}
}

/** The tool uses and confirmations a `requires_action` turn asks to answer. */
export interface Asked {
  readonly uses: readonly ToolUse[];
  readonly confirmations: readonly ToolUse[];
}

/**
 * Turns a `requires_action` into the input that answers it: recovers the tool uses it names
 * (from the batch, the request's history or the ledger), runs custom tools through the ledger (at
 * most once per id), asks `confirmTool` about host-run tools, and builds one input for both. It
 * owns the session's ledger and the set of confirmations already answered.
 */
export class ToolAnswerer {
  private ledger = new ToolLedger();
  /** The state of each entry as the store holds it (the `expected` of the next transition). */
  private readonly stored = new Map<string, LedgerState>();
  private persisting: Promise<void> = Promise.resolve();
  /** Host-run tool uses this session has answered a confirmation for. */
  private readonly confirmed = new Set<string>();
  /** The client's answers a resume brought, handed out as the uses they answer are redriven. */
  private readonly clientAnswers: ClientAnswerBook;
  /** Local tool uses waiting for the caller's approval (`requireApproval`). */
  private readonly approvals: ToolApprovals;

  constructor(
    private readonly deps: ToolAnswererDeps,
    private readonly opts: ToolAnswererOptions,
  ) {
    this.clientAnswers = new ClientAnswerBook(opts.clientAnswers);
    this.approvals = new ToolApprovals(
      {
        dispatcher: deps.dispatcher,
        logger: deps.logger,
        emit: (ev) => deps.emit(ev),
        ledger: () => this.ledger,
        persist: () => this.persist(),
        answers: this.clientAnswers,
      },
      opts,
    );
  }

  /**
   * Starts from the ledger a stored record kept (a resume, possibly in a new process). The
   * client's answers the session was given must answer uses that ledger holds as waiting on the
   * client: else `invalid_options`, before anything is sent.
   */
  load(record: SessionRecord | undefined): void {
    if (this.opts.clientAnswers)
      checkClientAnswers(record?.sessionId ?? this.deps.sessionId() ?? '(new)', record?.ledger ?? [], this.opts.clientAnswers, Date.now());
    if (!record) return;
    this.ledger = new ToolLedger(record.ledger);
    for (const e of record.ledger) this.stored.set(e.toolUseId, e.state);
  }

  /**
   * Called once a resume has connected, `redriving` when it has something to send (a redrive of
   * what the host waits on, or a prompt): the client's answers are taken by a redrive, so
   * without one they answer nothing now (the conversation went on): `invalid_options`.
   */
  checkAnswersTaken(redriving: boolean): void {
    if (redriving || !this.clientAnswers.pending) return;
    throw new AgentRxError('invalid_options', "clientAnswers: the resumed session has no unanswered tool use to give the client's answers to");
  }

  /** What a `requires_action` turn asks: confirmations first, then the custom tool uses that remain. */
  asked(turn: TurnResult): Asked {
    const confirmations = this.recoverConfirmations(turn);
    return { confirmations, uses: this.recoverUses(turn, new Set(confirmations.map((u) => u.id))) };
  }

  /**
   * Of what a redrive names, what is still unanswered: decided confirmations left out, and posted
   * results too, unless the conversation is held here (a provider with `transcript`). Then the
   * redrive comes from the restored transcript, which is checkpointed before tools run and at the
   * request's end, not when a result is posted: a use it shows unanswered is one the resumed
   * conversation's model has not seen, so its recorded result is posted again (replayed from the
   * ledger, the tool is not run again) instead of waiting for a turn that never comes.
   */
  unanswered(asked: Asked): Asked {
    const heldHere = this.deps.provider.transcript !== undefined;
    return {
      uses: heldHere ? asked.uses : asked.uses.filter((u) => this.ledger.get(u.id)?.state !== 'posted'),
      confirmations: asked.confirmations.filter((u) => !this.confirmed.has(u.id)),
    };
  }

  /**
   * The input answering `asked`: the tool results (if any), plus the confirmation decisions of
   * `confirmTool` in the same post. Without `confirmTool`, a live session announces the request and
   * answers only the results (undefined when there are none: the caller answers with `sendEvent`);
   * a run fails before any tool runs.
   */
  async answer({ uses, confirmations }: Asked, signal: AbortSignal): Promise<Answer | undefined> {
    // Without confirmations this is the plain resume (an empty one included, see continueWithoutTools).
    if (confirmations.length === 0) return this.runTools(uses, signal);
    const p = this.deps.provider;
    const decide = this.opts.confirmTool;
    // Checked before any tool runs: a run that cannot answer fails without executing anything.
    if (!decide || !p.confirmationInput) {
      this.deps.emit({ type: 'agentrx.confirmation_required', toolUses: confirmations });
      if (!this.opts.live) {
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
      const decision = await decideWith(decide, toolUse, signal, this.deps.logger);
      this.deps.emit({
        type: 'agentrx.tool_confirmation',
        toolUse,
        allow: decision.allow,
        ...(decision.denyMessage !== undefined ? { denyMessage: decision.denyMessage } : {}),
      });
      decisions.push(decision);
    }
    for (const d of decisions) this.confirmed.add(d.toolUseId);
    return new Answer(p.confirmationInput(decisions, results?.input), results?.toolUseIds ?? []);
  }

  /**
   * The caller's decision on a local tool use that waits for approval (`sendEvent` of a
   * `user.tool_confirmation`). False when no local tool use waits on that id (the decision is then
   * the host's to take).
   */
  approve(decision: ToolConfirmation): boolean {
    return this.approvals.approve(decision);
  }

  /** True while any of `confirmations` waits for the caller's decision (announced, not answered). */
  waitsForCaller(confirmations: readonly ToolUse[]): boolean {
    return confirmations.some((u) => !this.confirmed.has(u.id));
  }

  /** Records that the host accepted `answer`: its tool results are posted (persisted). */
  async posted(answer: Answer): Promise<void> {
    this.ledger.markPosted(answer.toolUseIds);
    await this.persist();
  }

  /** Runs tools (ledger-guarded) and returns the resume input. */
  private async runTools(uses: readonly ToolUse[], signal: AbortSignal): Promise<Answer> {
    if (uses.length > 0) await this.deps.beforeTools();
    const denied = await this.approvals.approveLocal(uses, signal);
    const run = denied.size > 0 ? uses.filter((u) => !denied.has(u.id)) : uses;
    const ran =
      run.length > 0 || uses.length === 0
        ? await this.deps.dispatcher.dispatch(run, {
            sessionId: this.deps.sessionId(),
            signal,
            toolTimeoutMs: this.opts.toolTimeoutMs,
            concurrency: this.opts.toolConcurrency,
            ledger: this.ledger,
            persist: () => this.persist(),
            onStarted: (toolUse) => this.deps.emit({ type: 'agentrx.tool_started', toolUse }),
            onResult: (toolUse, result, replayed, durationMs) => this.deps.emit({ type: 'agentrx.tool_result', toolUse, result, replayed, durationMs }),
            clientResult: (id) => this.clientAnswers.takeResult(id),
            onClientWait: () => this.deps.holdTimeout?.() ?? noop,
            ...(this.deps.state ? { state: this.deps.state } : {}),
            artifacts: () => toolArtifacts(this.deps.provider, this.deps.sessionId()),
          })
        : [];
    const byId = new Map(run.map((u, i) => [u.id, ran[i]!]));
    const results = uses.map((u) => denied.get(u.id) ?? byId.get(u.id)!);
    if (uses.length === 0 && this.deps.provider.mode === 'streaming') {
      throw new AgentRxError('unresolved_requires_action', 'refusing to post an empty list of tool results');
    }
    return new Answer(
      this.deps.provider.resumeInput(uses, results),
      uses.map((u) => u.id),
    );
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
      const pending = pendingToolUses(this.deps.history());
      if (pending.length > 0) return pending;
      throw unresolved(turn);
    }
    const known = new Map(turn.customToolUses.map((u) => [u.id, u]));
    if (requested.some((id) => !known.has(id))) {
      for (const u of pendingToolUses(this.deps.history())) if (!known.has(u.id)) known.set(u.id, u);
    }
    const uses = requested.flatMap((id): ToolUse[] => {
      const use = known.get(id);
      if (use) return [use];
      const entry = this.ledger.get(id);
      return entry?.result ? [{ id, name: entry.name, input: {} }] : [];
    });
    if (uses.length > 0) return uses;
    throw unresolved(turn);
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
      for (const u of awaitingConfirmation(this.deps.history(), requested)) if (!found.has(u.id)) found.set(u.id, u);
    }
    return [...found.values()].filter((u) => !this.confirmed.has(u.id));
  }

  /** Stores every ledger entry that changed since the last call; calls run one after another (tools run concurrently). */
  private persist(): Promise<void> {
    const run = this.persisting.then(() => this.persistNow());
    this.persisting = run.catch(() => undefined);
    return run;
  }

  /** Each changed entry as a compare-and-set against the state the store last took. */
  private async persistNow(): Promise<void> {
    const sessionId = this.deps.sessionId();
    if (!sessionId) return;
    const changed = this.ledger.snapshot().filter((e) => this.stored.get(e.toolUseId) !== e.state);
    // A recorded result is stored only after the log that led to it (the store keeps the order).
    if (changed.some((e) => e.state === 'executed')) await this.deps.beforeRecord();
    // One call per changed entry, issued together: the store keeps their order, and the synced
    // ones share a sync (a batch of tools that finished together costs one).
    const clientHeldConversation = this.deps.provider.transcript !== undefined;
    const writes = changed.map(async (entry) => {
      const was = this.stored.get(entry.toolUseId);
      if (was === entry.state) return;
      // Losing `posted` only makes a resume re-post a recorded result; losing an idempotent
      // tool's `executing` only lets a resume run it again: neither needs its own sync. A result
      // is synced before it is posted only to a host that keeps what it is posted: with a
      // client-held conversation (a provider with `transcript`) nothing outside this process
      // has seen it, and losing it leaves the tool as a crash mid-tool would (the ledger's rule).
      // A wait on the client (`awaiting_client`) is synced: the client is asked only after it.
      const sync = !(
        entry.state === 'posted' ||
        (entry.state === 'executing' && this.deps.dispatcher.isIdempotent(entry.name)) ||
        (entry.state === 'executed' && clientHeldConversation)
      );
      if (!(await this.deps.store.transition(sessionId, was, entry, { sync }))) {
        throw new AgentRxError(
          'store_error',
          `the stored ledger of session '${sessionId}' changed under this process at tool use ${entry.toolUseId} (expected ${was ?? 'no entry'}); is another process running this session?`,
          { sessionId, toolUseId: entry.toolUseId },
        );
      }
      this.stored.set(entry.toolUseId, entry.state);
    });
    const outcomes = await Promise.allSettled(writes);
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

const noop = (): void => undefined;

function unresolved(turn: TurnResult): AgentRxError {
  return new AgentRxError(
    'unresolved_requires_action',
    'the host requires action but none of the tool uses it names could be found in this batch, the history or the ledger',
    { stopReason: turn.stopReason, requested: turn.requestedToolUseIds },
  );
}
