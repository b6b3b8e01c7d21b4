import { Subject, Subscription, type Observable, type Subscriber } from '../core/util/rxjs.js';
import type { AgUiEvent } from '../core/events/agui-event.js';
import { toAgUi } from '../core/events/operators/index.js';
import type { SessionEvent } from '../core/events/session-event.js';

/**
 * One read of a submitted session's log, shared by the `events$` and `agui$` subscribers of a
 * {@link RemoteSession} that join it before the read starts (it waits for the session to open, so
 * the subscribers of one tick all join): one tail of the store and, when `agui$` has a subscriber
 * then, one AG-UI translation. Each envelope's AG-UI events are emitted
 * before the envelope itself, and the ones a completion adds (a run left open) before the
 * envelopes complete: a reader of both (the AG-UI server) pairs them by that order, as it does
 * with a session of this process. A subscriber arriving once the read has started gets a read of
 * its own, from `afterSeq`, as if it were alone.
 */
export class LogFeed {
  private readonly envelopes$ = new Subject<SessionEvent>();
  private readonly agui$ = new Subject<AgUiEvent>();
  private refs = 0;
  /** The tail of the store has begun: a new subscriber would miss what it read. */
  private started = false;
  private ended = false;
  private source: Subscription | undefined;
  /** Feeds the translation (set when the read starts, if `agui$` has a subscriber then). */
  private translating: Subject<SessionEvent> | undefined;
  /** The `seq` of the envelope being translated (`toAgUi` emits synchronously). */
  private seq = 0;

  /**
   * @param afterSeq Envelopes (and their AG-UI events) with a `seq` above it are emitted.
   * @param read Reads the log after the `seq` its argument gives when the read starts (0 when the
   *   feed translates: a run open at `afterSeq` is translated from its start, so it goes on well-formed).
   */
  constructor(
    private readonly afterSeq: number,
    private readonly read: (from: () => number) => Observable<SessionEvent>,
  ) {}

  /** True while a new subscriber may join (the read has not started). */
  get joinable(): boolean {
    return !this.started && !this.ended;
  }

  /** Subscribes `subscriber` to the envelopes; returns its teardown. */
  envelopes(subscriber: Subscriber<SessionEvent>): () => void {
    return this.join(this.envelopes$.subscribe(subscriber));
  }

  /** Subscribes `subscriber` to the AG-UI translation; returns its teardown. */
  agui(subscriber: Subscriber<AgUiEvent>): () => void {
    return this.join(this.agui$.subscribe(subscriber));
  }

  private join(subscription: Subscription): () => void {
    this.refs++;
    this.source ??= this.read(() => this.start()).subscribe({
      next: (env) => this.next(env),
      error: (e: unknown) => this.end({ error: e }),
      complete: () => this.end(undefined),
    });
    let left = false;
    return () => {
      if (left) return;
      left = true;
      subscription.unsubscribe();
      if (--this.refs === 0) {
        this.ended = true;
        this.source?.unsubscribe();
      }
    };
  }

  /** The read starts: it translates if `agui$` has a subscriber now. Returns the `seq` to read after. */
  private start(): number {
    this.started = true;
    if (!this.agui$.observed) return this.afterSeq;
    this.translate();
    return 0;
  }

  private next(env: SessionEvent): void {
    this.seq = env.seq;
    this.translating?.next(env);
    if (env.seq > this.afterSeq) this.envelopes$.next(env);
  }

  /** Starts the one translation: its events go to `agui$`, those of envelopes up to `afterSeq` only feed its state. */
  private translate(): void {
    const input = new Subject<SessionEvent>();
    input.pipe(toAgUi()).subscribe({
      next: (ev) => {
        if (this.seq > this.afterSeq) this.agui$.next(ev);
      },
      error: (e: unknown) => this.agui$.error(e),
      complete: () => this.agui$.complete(),
    });
    this.translating = input;
  }

  /** The log ended (`failure`: the read failed): the translation's last events and end first, then the envelopes'. */
  private end(failure: { readonly error: unknown } | undefined): void {
    this.ended = true;
    const aguiEnd: { complete(): void; error(e: unknown): void } = this.translating ?? this.agui$;
    if (failure) {
      aguiEnd.error(failure.error);
      this.envelopes$.error(failure.error);
    } else {
      aguiEnd.complete();
      this.envelopes$.complete();
    }
  }
}
