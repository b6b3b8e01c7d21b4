import type { Subscription } from 'rxjs';
import { AgentRxError, toAgentRxError } from '../core/errors.js';
import type { LiveSession } from '../core/plugin/live-session.js';
import type { SessionFactory } from '../core/plugin/session-placement.js';
import type { SessionOptions } from '../core/session/session-options.js';
import type { SessionStore } from '../core/store/session-store.js';
import type { SubmissionKeys } from './distributed-keys.js';
import { decodeEntry, toRemoteResult, toWireError, type InputMessage, type OutputMessage, type WireError } from './distributed-messages.js';
import { loggedResults } from './logged-results.js';
import type { StreamEntry } from './redis-link.js';
import { SubmissionWriter, type SubmissionRedis, type SubmissionWrite } from './submission-writer.js';
import { sessionOptionsOf, type SessionJobData } from './submit-options.js';

/** What a job runner needs from its worker. */
export interface JobRunnerDeps {
  /** Starts the submission's session in this process (the worker's AgentRx, or any factory the container binds). */
  readonly sessions: SessionFactory;
  readonly store: SessionStore;
  /** The worker's command connection (not blocking), with the submission scripts defined. */
  readonly commands: SubmissionRedis;
  readonly keys: SubmissionKeys;
  readonly workerId: string;
  /** An idle live session closes after this long without a request or an input. */
  readonly idleMs: number;
  /** How long a takeover waits for the previous owner's lease on the session to expire. */
  readonly takeoverWaitMs: number;
  /** How long the ended submission's streams and state are kept in Redis. */
  readonly retainMs: number;
  /** Follows a stream from `after`; returns the stop function. */
  follow(key: string, after: string, onEntries: (entries: readonly StreamEntry[]) => Promise<void>): () => Promise<void>;
  log(line: string): void;
}

/**
 * How a job ended: the session closed for good; it was handed back to the queue; or another
 * worker claimed the submission meanwhile (this one was paused or cut off past its job lock and
 * its session lease): the job is that worker's now, and this one leaves it alone.
 */
export type JobOutcome = 'closed' | 'handed_back' | 'superseded';

/** Why this runner closed or cancelled its session. */
type Cause = 'client' | 'idle' | 'handback';

/**
 * Runs one session job on this worker: opens the session (or resumes it from the store when a
 * previous owner published its id: a takeover), publishes its id and each request's result on
 * the submission's output stream, feeds the input stream into it (from the saved cursor), closes
 * it after `idleMs` of idleness, and tells the worker how it ended. `handBack` ends it without
 * publishing an end, so another worker resumes it from the log and the ledger.
 */
export class JobRunner {
  private session: LiveSession | undefined;
  private readonly subs: Subscription[] = [];
  private stopInputs: (() => Promise<void>) | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** While idle: checks, every client lease, whether a handle still holds the submission. */
  private holdersTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  /** A request is running (between `run_started` and its end). */
  private running = false;
  /** Messages handed to the session whose request has not started yet. */
  private waiting = 0;
  private cause: Cause | undefined;
  private handingBack = false;
  private published = false;
  /** This worker's claim on the submission: its writes are fenced by its epoch. */
  private writer: SubmissionWriter | undefined;
  /** A write was refused: another worker claimed the submission since. */
  private superseded = false;
  private inputsChain: Promise<void> = Promise.resolve();
  /** Publications in order (the session id before any result). */
  private outputs: Promise<void> = Promise.resolve();
  private onSettled: (() => void) | undefined;
  /** A takeover of a session whose last request had not ended: resolves when the resumed request ends (or the session closes). */
  private resumedRunEnded: Promise<void> | undefined;
  private endResumedRun: (() => void) | undefined;
  /** Resolves at the session's first event (it is open) or when it closes. */
  private ready!: Promise<void>;

  constructor(
    private readonly data: SessionJobData,
    private readonly deps: JobRunnerDeps,
  ) {}

  /** The store's session id, once opened. */
  get sessionId(): string | undefined {
    return this.session?.sessionId;
  }

  /** Runs the session to its end (or its hand-back). Never rejects for a session failure: that is published. */
  async run(): Promise<JobOutcome> {
    const { keys, commands } = this.deps;
    const state = await commands.hgetall(keys.state);
    if (state['closed'] === '1') return 'closed';
    let known = state['sessionId'];
    let storeId = known ?? this.data.options.sessionId;
    if (storeId !== undefined) await this.waitForLease(storeId);
    if (this.handingBack) return 'handed_back';
    // The submission is this worker's from here (a previous owner's writes are refused); it may
    // have ended while this worker waited for the lease (its owner was alive, only slow).
    const claim = await SubmissionWriter.claim(commands, keys, this.deps.workerId);
    if (!claim) return 'closed';
    this.writer = claim.writer;
    if (claim.sessionId !== known) {
      // The previous owner opened the session after the state was read: a takeover after all.
      known = storeId = claim.sessionId!;
      await this.waitForLease(storeId);
      if (this.handingBack) return 'handed_back';
    }
    const takeover = known !== undefined;
    const cursor = claim.cursor;
    if (takeover && (await this.publishMissedResults(storeId!))) this.resumedRunEnded = new Promise<void>((resolve) => (this.endResumedRun = resolve));
    if (this.superseded) return 'superseded';
    // A takeover resumes: the host's history (or Local's stored transcript) has the prompt, unless
    // the dead worker was killed before anything was stored — then the session starts from it.
    const prompt = this.data.options.prompt;
    const submitted = sessionOptionsOf(this.data.options);
    const opts: SessionOptions = takeover
      ? { ...submitted, prompt: undefined, sessionId: storeId, ...(prompt !== undefined ? { freshPrompt: prompt } : {}) }
      : submitted;
    let session: LiveSession;
    try {
      session = this.deps.sessions.start(opts);
    } catch (e) {
      // Refused before anything opened (a poisoned job): it fails once, reported to its handles.
      await this.publishEnd(0, toWireError(toAgentRxError(e)));
      return this.superseded ? 'superseded' : 'closed';
    }
    this.session = session;
    let markReady!: () => void;
    this.ready = new Promise<void>((resolve) => (markReady = resolve));
    void session.closed.then(() => {
      markReady();
      this.endResumedRun?.();
    });
    if (opts.prompt !== undefined) this.waiting = 1;
    let failure: AgentRxError | undefined;
    this.subs.push(
      session.events$.subscribe((env) => {
        markReady();
        if (!takeover && !this.published && env.sessionId !== undefined) void this.publishOpened(env.sessionId);
        if (env.source === 'agentrx') {
          const t = env.raw.type;
          if (t === 'agentrx.run_started') {
            this.running = true;
            this.waiting = Math.max(0, this.waiting - 1);
          } else if (t === 'agentrx.run_finished' || t === 'agentrx.run_error') {
            this.running = false;
            this.endResumedRun?.();
          }
        }
        this.touch();
      }),
      session.results$.subscribe({
        next: (result) =>
          void this.publish({ kind: 'result', result: toRemoteResult(result) }).catch((e: unknown) =>
            this.deps.log(`cannot publish a result of ${this.data.submissionId}: ${toAgentRxError(e).message}`),
          ),
        error: (e: unknown) => (failure = toAgentRxError(e)),
      }),
    );
    this.stopInputs = this.deps.follow(keys.inputs, cursor, (entries) => this.onInputs(entries));
    this.touch();
    await session.closed;
    clearTimeout(this.idleTimer);
    clearTimeout(this.holdersTimer);
    clearTimeout(this.graceTimer);
    for (const s of this.subs) s.unsubscribe();
    await this.stopInputs?.();
    await this.inputsChain;
    await this.outputs;
    if (this.superseded) return 'superseded';
    // Handed back: not ended, unless the session failed on its own (not by our cancel) or the client closed it.
    const ours = this.cause === 'handback' && (failure === undefined || failure.code === 'cancelled');
    if (this.handingBack && ours) return 'handed_back';
    // The store lease went to another owner (this process stalled past it): the session is not
    // over, the new owner runs it; publishing an end here would be wrong.
    if (failure && isLeaseLost(failure)) {
      this.deps.log(`lost the lease of session ${session.sessionId ?? '?'}: leaving it to its new owner`);
      return 'handed_back';
    }
    const id = session.sessionId;
    if (id !== undefined && !takeover && !this.published) await this.publishOpened(id);
    const lastSeq = id !== undefined ? await this.deps.store.lastSeq(id) : 0;
    await this.publishEnd(lastSeq, failure ? toWireError(failure) : undefined);
    return this.superseded ? 'superseded' : 'closed';
  }

  /**
   * Ends the session here so another worker resumes it: stops reading inputs (the unread ones
   * stay for the next owner), closes an idle session now, lets a running request finish for up
   * to `graceMs`, then cancels it. `run()` then resolves with `handed_back`.
   */
  handBack(graceMs: number): void {
    if (this.handingBack) return;
    this.handingBack = true;
    void this.stopInputs?.();
    const session = this.session;
    if (!session) return;
    const settle = (): void => {
      clearTimeout(this.graceTimer);
      this.onSettled = undefined;
      this.cause ??= 'handback';
      session.close();
    };
    if (!this.busy) return settle();
    this.onSettled = settle;
    this.graceTimer = setTimeout(() => {
      this.onSettled = undefined;
      this.cause ??= 'handback';
      session.cancel();
    }, graceMs);
  }

  private get busy(): boolean {
    return this.running || this.waiting > 0;
  }

  /** Activity: re-arms the idle timer while nothing runs; a hand-back waiting for the request goes on. */
  private touch(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.holdersTimer);
    if (this.busy) return;
    if (this.onSettled) return this.onSettled();
    if (this.handingBack) return;
    this.idleTimer = setTimeout(() => {
      if (this.busy || !this.session) return;
      this.cause ??= 'idle';
      this.deps.log(`session ${this.session.sessionId ?? this.data.submissionId} idle for ${this.deps.idleMs} ms: closing it`);
      this.session.close();
    }, this.deps.idleMs);
    this.idleTimer.unref();
    this.armHoldersCheck();
  }

  /**
   * A submission whose client keeps leases (`clientLeaseMs`): once idle, its session closes as
   * soon as no handle holds it (nothing can send it input any more), checked every lease length.
   * A failed check counts as held (the idle time still applies).
   */
  private armHoldersCheck(): void {
    const leaseMs = this.data.clientLeaseMs;
    if (leaseMs === undefined) return;
    this.holdersTimer = setTimeout(() => {
      void (async () => {
        const held = await this.deps.commands.zcount(this.deps.keys.holders, Date.now(), '+inf').catch(() => 1);
        if (this.busy || !this.session || this.handingBack || this.onSettled) return;
        if (held > 0) return this.armHoldersCheck();
        this.cause ??= 'idle';
        this.deps.log(`session ${this.session.sessionId ?? '(not opened)'} of ${this.data.submissionId}: no handle holds it any more: closing it`);
        this.session.close();
      })();
    }, leaseMs);
    this.holdersTimer.unref();
  }

  private onInputs(entries: readonly StreamEntry[]): Promise<void> {
    this.inputsChain = this.inputsChain
      .then(async () => {
        for (const [id, fields] of entries) {
          if (this.handingBack || this.superseded) return;
          const input = decodeEntry<InputMessage>(fields);
          let error: WireError | undefined;
          try {
            if (input) await this.apply(input);
          } catch (e) {
            error = toWireError(toAgentRxError(e));
          }
          // The cursor moves once the input is applied: a takeover reads on from the next one. A
          // close or a cancel has taken effect only once the session's end is published: until
          // then the cursor stays before it, so a takeover after this worker died applies it again.
          const ack: OutputMessage = { kind: 'ack', input: id, ...(error ? { error } : {}) };
          await this.publish(ack, input?.kind !== 'close' && input?.kind !== 'cancel' ? { cursor: id } : undefined);
          this.touch();
        }
      })
      .catch((e: unknown) => {
        // Redis failed under us: the session goes on; an input whose cursor was not saved is read again by a takeover.
        this.deps.log(`cannot record an input of ${this.data.submissionId}: ${toAgentRxError(e).message}`);
      });
    return this.inputsChain;
  }

  private async apply(input: InputMessage): Promise<void> {
    const session = this.session!;
    switch (input.kind) {
      case 'message':
        session.message(input.text);
        this.waiting++;
        return;
      case 'event':
        // Sent before the session opened (the handle cannot know): posted once it is.
        await this.ready;
        return session.sendEvent(input.event);
      case 'answer':
        // The calls it answers wait in the session's client-answered tools (built from the submitted declarations).
        await this.ready;
        return session.answerClient(input.answers);
      case 'cancel':
        this.cause ??= 'client';
        return session.cancel();
      case 'state':
        // Replaces the agent's state before the session's next request, as setState does in process.
        return session.setState(input.state);
      case 'close':
        this.cause ??= 'client';
        // Taken over mid-request: the resumed session finishes that request first (as it would
        // have on the previous owner), then closes; a close applied while it opens would drop it.
        await this.resumedRunEnded;
        return session.close();
    }
  }

  /** A takeover waits for the previous owner's store lease to expire (its process died or stalled). */
  private async waitForLease(sessionId: string): Promise<void> {
    const deadline = Date.now() + this.deps.takeoverWaitMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const lease = await this.deps.store.acquire(sessionId);
        await lease.release();
        return;
      } catch (e) {
        const err = toAgentRxError(e, 'store_error');
        // Only a lease held by another owner is waited for; anything else is the session's failure to report.
        if (err.details?.['owner'] === undefined || Date.now() >= deadline || this.handingBack) return;
        await new Promise<void>((resolve) => setTimeout(resolve, Math.min(25 * 2 ** attempt, 500)));
      }
    }
  }

  /**
   * A takeover publishes the results of the requests its dead owner finished in the log but did
   * not publish (it died between the two writes): without them a handle would wait forever for a
   * result the resumed session never produces again. The output stream says how many were
   * published; the rest are rebuilt from the log, in order. Returns whether the log's last
   * request is unfinished (the resumed session goes on with it).
   */
  private async publishMissedResults(sessionId: string): Promise<boolean> {
    const entries = await this.deps.commands.xrange(this.deps.keys.outputs, '-', '+');
    const published = entries.filter(([, fields]) => decodeEntry<OutputMessage>(fields)?.kind === 'result').length;
    const logged = await loggedResults(this.deps.store, sessionId);
    const missed = logged.results.slice(published);
    if (missed.length > 0) this.deps.log(`session ${sessionId}: publishing ${missed.length} result(s) its previous owner finished but did not publish`);
    for (const result of missed) await this.publish({ kind: 'result', result });
    return logged.open;
  }

  private async publishOpened(sessionId: string): Promise<void> {
    if (this.published) return;
    this.published = true;
    // Queued before any result; the state and the stream entry are written together.
    await this.write({ message: { kind: 'opened', sessionId }, fields: { sessionId, worker: this.deps.workerId } });
  }

  /** The end, once: a submission another owner ended already is left as it is. */
  private async publishEnd(lastSeq: number, error: WireError | undefined): Promise<void> {
    await this.write({ message: { kind: 'closed', lastSeq, ...(error ? { error } : {}) }, end: { retainMs: this.deps.retainMs } });
  }

  private publish(message: OutputMessage, fields?: Record<string, string>): Promise<void> {
    return this.write({ message, ...(fields ? { fields } : {}) });
  }

  /**
   * Writes to the submission in order (the session id before any result), fenced by this worker's
   * claim: a refused write means another worker took the submission over, and this one stops.
   */
  private write(w: SubmissionWrite): Promise<void> {
    const next = this.outputs.then(async () => {
      if (this.superseded) return;
      if ((await this.writer!.write(w)) === 'fenced') this.supersede();
    });
    this.outputs = next.catch(() => undefined);
    return next;
  }

  /** Another worker claimed the submission: this one publishes nothing more, stops reading inputs and cancels its session. */
  private supersede(): void {
    if (this.superseded) return;
    this.superseded = true;
    this.deps.log(
      `another worker claimed submission ${this.data.submissionId}: leaving it (its session here is cancelled, nothing more is published from here)`,
    );
    void this.stopInputs?.();
    this.cause ??= 'handback';
    this.session?.cancel();
  }
}

/** The store refused a write because another owner took the session's lease (the Redis engine's fencing). */
function isLeaseLost(e: AgentRxError): boolean {
  return e.code === 'store_error' && /the lease of session .* was lost/.test(e.message);
}
