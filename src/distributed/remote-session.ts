import { randomUUID } from 'node:crypto';
import { EMPTY, EmptyError, Observable, ReplaySubject, Subscription, defer, firstValueFrom, from, switchMap } from '../core/util/rxjs.js';
import { AgentRxError } from '../core/errors.js';
import type { AgUiEvent } from '../core/events/agui-event.js';
import type { SessionEvent } from '../core/events/session-event.js';
import type { RawEvent } from '../core/model.js';
import type { LiveSession } from '../core/plugin/live-session.js';
import type { ClientAnswers } from '../core/plugin/session-options.js';
import type { SessionStore } from '../core/store/session-store.js';
import { decodeEntry, fromWireError, type InputMessage, type OutputMessage, type RemoteResult } from './distributed-messages.js';
import type { StreamEntry, SubmissionKeys } from './distributed-keys.js';
import { LeaseKeeper, type HolderLeases } from './client-lease.js';
import { LogFeed } from './log-feed.js';

/** What a handle needs: the store sharing the workers' Redis, and the submission's streams. */
export interface RemoteSessionDeps {
  readonly store: SessionStore;
  readonly keys: SubmissionKeys;
  /**
   * Follows a stream from `after`, calling `onEntries` per batch, until `alive` says false;
   * returns the stop function.
   */
  follow(key: string, after: string, onEntries: (entries: readonly StreamEntry[]) => void, alive?: () => boolean): () => Promise<void>;
  /** XADD of one message to a stream; resolves with the entry id. */
  send(key: string, message: InputMessage): Promise<string>;
  /** The submission's holder leases, with their length (ms): a handle renews its own while it is reachable. */
  readonly leases?: { readonly holders: HolderLeases; readonly ms: number };
  /**
   * Resolves when the queue the handle came from closes (`rx.stop()`, `SessionQueue.close()`):
   * its log reads complete then, and a read the closed store refuses completes too instead of
   * failing (the session goes on in its worker; another handle may read on).
   */
  readonly stopped?: Promise<void>;
}

/**
 * Follows the submission's output stream for `ref`'s handle, holding it only through `ref`. A
 * module function on purpose: a closure made in the handle's constructor would share its scope,
 * which holds `this`, and keep every handle alive for as long as its reader runs.
 */
function followWeakly(deps: RemoteSessionDeps, ref: WeakRef<RemoteSession>): () => Promise<void> {
  return deps.follow(
    deps.keys.outputs,
    '0',
    (entries) => {
      for (const [, fields] of entries) {
        const m = decodeEntry<OutputMessage>(fields);
        if (m) ref.deref()?.receive(m);
      }
    },
    () => ref.deref() !== undefined,
  );
}

/** Whether a handle still wants its session kept: not ended, not released (a module function: it must not capture a handle). */
function wantsSession(handle: object): boolean {
  return (handle as RemoteSession).holding;
}

/** Where the session ended: the last `seq` of its log, and its failure if any. */
interface Ending {
  readonly lastSeq: number;
  readonly error?: AgentRxError;
}

/**
 * A handle on a session submitted to the worker pool, a {@link LiveSession} fed from Redis and
 * usable from any process (`SessionQueue.open(id)` re-opens it by id):
 * - `events$`/`agui$` tail the session's log in the store (no gap, no repeat; from `afterSeq`)
 *   once a worker has opened it, and complete when the session has closed and its log is read.
 *   Subscribed together (before the log's first envelope arrives), they share one read of the
 *   log and one translation, and an envelope's AG-UI events come before the envelope;
 * - `results$` gives every request's result as the owner worker published it (a re-opened handle
 *   replays them from the first), then completes, or errors with the AgentRxError of a failed or
 *   cancelled session;
 * - `message`, `setState`, `sendEvent`, `answerClient`, `cancel` and `close` go on the submission's input stream,
 *   read by whichever worker owns the session now (inputs sent before a worker took the job wait
 *   there);
 * - `release()` and `leave()` only stop reading: the session goes on in its worker, and another
 *   handle may take it up. A handle renews a lease in Redis while it is referenced (and not
 *   released); once no handle holds the session, its worker closes it when idle, after one lease
 *   (`clientLeaseMs`), instead of after its whole idle time.
 * `closed` resolves when the owner published the session's end (its log is then complete in the
 * store); `events$` completes once it has read that log to its end.
 */
export class RemoteSession implements LiveSession {
  /** Envelopes of the session's log with `seq` > `afterSeq`, then live ones; completes at the log's end once the session closed. */
  readonly events$: Observable<SessionEvent>;
  /** The AG-UI translation of the log (translated from its start, emitted for envelopes after `afterSeq`). */
  readonly agui$: Observable<AgUiEvent>;
  /** A result per request; completes when the session closes; errors with the AgentRxError of a failed or cancelled session. */
  readonly results$: Observable<RemoteResult>;
  /** The first request's result; rejects with a typed AgentRxError. */
  readonly result: Promise<RemoteResult>;
  /** The store's session id (the provider-side id), once a worker opened the session. */
  readonly opened: Promise<string>;
  /** Resolves once the session has ended for good (not when a worker hands it to another). */
  readonly closed: Promise<void>;

  private readonly results = new ReplaySubject<RemoteResult>();
  private readonly acks = new Map<string, { error?: AgentRxError }>();
  private readonly ackWaiters = new Map<string, (ack: { error?: AgentRxError }) => void>();
  private readonly ending: Promise<Ending | undefined>;
  private readonly idKnown: Promise<string | undefined>;
  private resolveOpened!: (id: string) => void;
  private resolveIdKnown!: (id: string | undefined) => void;
  private resolveEnding!: (e: Ending) => void;
  private resolveClosed!: () => void;
  private sessionIdValue: string | undefined;
  private ended: Ending | undefined;
  private readonly stopFollowing: () => Promise<void>;
  /** The log read the current `events$`/`agui$` subscribers share, while others may still join it. */
  private feed: LogFeed | undefined;
  private readonly lease: LeaseKeeper | undefined;
  private detached = false;

  constructor(
    /** The submission id: known at submit time, the key of the handle's streams. */
    readonly id: string,
    private readonly deps: RemoteSessionDeps,
    private readonly afterSeq = 0,
  ) {
    this.opened = new Promise<string>((resolve) => (this.resolveOpened = resolve));
    this.idKnown = new Promise<string | undefined>((resolve) => (this.resolveIdKnown = resolve));
    this.ending = new Promise<Ending>((resolve) => (this.resolveEnding = resolve));
    this.closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));
    this.results$ = this.results.asObservable();
    this.result = firstValueFrom(this.results$).catch((e: unknown) => {
      throw e instanceof EmptyError ? new AgentRxError('session_closed', 'the session closed before its first request finished') : e;
    });
    this.result.catch(() => undefined);
    this.opened.catch(() => undefined);
    this.events$ = new Observable<SessionEvent>((subscriber) => this.joinFeed().envelopes(subscriber));
    this.agui$ = new Observable<AgUiEvent>((subscriber) => this.joinFeed().agui(subscriber));
    // The reader and the lease hold the handle weakly: a handle nobody references is collected,
    // its reader stops, its lease lapses, and the worker frees the session's slot.
    this.stopFollowing = followWeakly(deps, new WeakRef(this));
    this.lease = deps.leases ? new LeaseKeeper(this, deps.leases.holders, `h-${randomUUID()}`, deps.leases.ms, wantsSession) : undefined;
  }

  /** True while this handle keeps its session: not ended, not released (its lease is renewed meanwhile). */
  get holding(): boolean {
    return this.ended === undefined && !this.detached;
  }

  /** The store's session id, once known. */
  get sessionId(): string | undefined {
    return this.sessionIdValue;
  }

  /** Queues a follow-up user message; the owner worker passes it on when it reads it. */
  async message(text: string): Promise<void> {
    if (typeof text !== 'string' || text.length === 0) throw new AgentRxError('invalid_options', 'message(text): text must be a non-empty string');
    this.checkOpen();
    await this.deps.send(this.deps.keys.inputs, { kind: 'message', text });
  }

  /** Replaces the agent's state before the session's next request (the owner worker applies it when it reads it). */
  async setState(state: Readonly<Record<string, unknown>>): Promise<void> {
    if (typeof state !== 'object' || state === null || Array.isArray(state))
      throw new AgentRxError('invalid_options', 'setState(state): state must be a JSON object');
    this.checkOpen();
    await this.deps.send(this.deps.keys.inputs, { kind: 'state', state });
  }

  /**
   * Posts a raw user event (streaming providers only), e.g. a tool confirmation. Resolves once
   * the owner worker posted it; rejects with its error (`unsupported`, `session_closed`, …).
   */
  async sendEvent(event: RawEvent): Promise<void> {
    if (typeof event !== 'object' || event === null) throw new AgentRxError('invalid_options', 'sendEvent(event): event must be an object');
    this.checkOpen();
    const input = await this.deps.send(this.deps.keys.inputs, { kind: 'event', event });
    const ack = await this.ackOf(input);
    if (ack.error) throw ack.error;
  }

  /**
   * Hands the client's answers to the session's waiting client-answered calls (frontend tools) and
   * decisions. Resolves once the owner worker handed them; rejects with its error (`invalid_options`
   * when a result names no waiting call, `session_closed`, …).
   */
  async answerClient(answers: ClientAnswers): Promise<void> {
    if (typeof answers !== 'object' || answers === null) throw new AgentRxError('invalid_options', 'answerClient(answers): answers must be an object');
    this.checkOpen();
    const input = await this.deps.send(this.deps.keys.inputs, { kind: 'answer', answers });
    const ack = await this.ackOf(input);
    if (ack.error) throw ack.error;
  }

  /** Asks the owner worker to cancel the session now (aborts in-flight work; `results$` errors with `cancelled`). */
  async cancel(): Promise<void> {
    if (this.ended) return;
    await this.deps.send(this.deps.keys.inputs, { kind: 'cancel' });
  }

  /** Asks the owner worker to end the session gracefully: the running request finishes, then it closes. */
  async close(): Promise<void> {
    if (this.ended) return;
    await this.deps.send(this.deps.keys.inputs, { kind: 'close' });
  }

  /**
   * Stops reading the session's output stream (the session goes on; open it again by id). Pending
   * `results$`/`result`/`sendEvent` never settle after this.
   */
  async detach(): Promise<void> {
    this.detached = true;
    await Promise.all([this.stopFollowing(), this.lease?.stop()]);
  }

  /**
   * Done with this handle: stops reading (`detach`) and drops its lease; once no handle holds the
   * session, its worker closes it when idle (after the lease's length). The same happens to a
   * handle nobody references any more.
   */
  release(): Promise<void> {
    return this.detach();
  }

  /** This process shuts down: stops reading (`detach`); the session goes on in its worker. */
  leave(): Promise<void> {
    return this.detach();
  }

  private checkOpen(): void {
    if (this.ended) throw new AgentRxError('session_closed', 'the session is closed; submit a new one (pass sessionId to resume it)');
  }

  /** @internal The output stream's messages, in order (see {@link followWeakly}). */
  receive(m: OutputMessage): void {
    switch (m.kind) {
      case 'opened':
        this.sessionIdValue ??= m.sessionId;
        this.resolveOpened(m.sessionId);
        this.resolveIdKnown(m.sessionId);
        return;
      case 'result':
        if (!this.ended) this.results.next(m.result);
        return;
      case 'ack': {
        const ack = m.error ? { error: fromWireError(m.error) } : {};
        const waiter = this.ackWaiters.get(m.input);
        if (waiter) {
          this.ackWaiters.delete(m.input);
          waiter(ack);
        } else this.acks.set(m.input, ack);
        return;
      }
      case 'closed': {
        if (this.ended) return;
        const error = m.error ? fromWireError(m.error) : undefined;
        this.ended = { lastSeq: m.lastSeq, ...(error ? { error } : {}) };
        this.resolveIdKnown(undefined);
        this.resolveEnding(this.ended);
        for (const [input, waiter] of this.ackWaiters) {
          this.ackWaiters.delete(input);
          waiter({ error: new AgentRxError('session_closed', 'the session closed before this input was applied') });
        }
        if (error) this.results.error(error);
        else this.results.complete();
        this.resolveClosed();
        void this.stopFollowing();
        void this.lease?.stop();
        return;
      }
    }
  }

  private ackOf(input: string): Promise<{ error?: AgentRxError }> {
    const seen = this.acks.get(input);
    if (seen) {
      this.acks.delete(input);
      return Promise.resolve(seen);
    }
    if (this.ended) return Promise.resolve({ error: new AgentRxError('session_closed', 'the session closed before this input was applied') });
    return new Promise((resolve) => this.ackWaiters.set(input, resolve));
  }

  /** The feed a new `events$`/`agui$` subscriber joins: the current one while nothing was read yet, else a new read. */
  private joinFeed(): LogFeed {
    if (!this.feed?.joinable) this.feed = new LogFeed(this.afterSeq, (start) => this.untilEnd(start));
    return this.feed;
  }

  /**
   * The log after what `start()` says when the read starts (the feed knows by then whether it
   * translates), completed once the session ended and its last `seq` was emitted.
   */
  private untilEnd(start: () => number): Observable<SessionEvent> {
    // `from(promise)` emits asynchronously: every subscriber of this tick joins the feed before it reads.
    return defer(() => from(this.idKnown)).pipe(
      switchMap((sessionId) => {
        if (sessionId === undefined) return EMPTY;
        const after = start();
        return new Observable<SessionEvent>((subscriber) => {
          let last = after;
          let end: number | undefined;
          const finishIfDone = (): void => {
            if (end !== undefined && last >= end) subscriber.complete();
          };
          // The queue closed: the read ends here (a refusal of the closed store is that end too).
          let stopped = false;
          const source = new Subscription();
          source.add(
            this.deps.store.tail(sessionId, after).subscribe({
              next: (env) => {
                last = env.seq;
                subscriber.next(env);
                finishIfDone();
              },
              error: (e: unknown) => (stopped ? subscriber.complete() : subscriber.error(e)),
            }),
          );
          void this.deps.stopped?.then(() => {
            stopped = true;
            subscriber.complete();
          });
          void this.ending.then((e) => {
            end = e?.lastSeq;
            finishIfDone();
          });
          return source;
        });
      }),
    );
  }
}
