import type { Subject } from 'rxjs';
import type { AgUiEvent } from '../events/agui-event.js';
import type { ConsumerContext, EventConsumer, StopReason } from '../plugin/event-consumer.js';
import { messageOf, withTimeout } from '../util/async.js';
import { dispatch, isThenable } from './consumer-dispatch.js';

/** A consumer fault, published on `consumerErrors$`. The run and other consumers carry on. */
export interface ConsumerError {
  readonly consumerId: string;
  readonly phase: 'start' | 'event' | 'stop' | 'overflow';
  readonly message: string;
  readonly sessionId: string | undefined;
  /** The AG-UI event being handled when it failed (phase `event`); its typed source is not repeated here. */
  readonly event?: AgUiEvent;
  readonly error?: unknown;
}

/** Per-consumer delivery settings. */
export interface ConsumerHubOptions {
  /** A hook that has not settled after this long is reported and skipped. */
  readonly handlerTimeoutMs: number;
  /** Events queued for one consumer beyond this disable it for the session (`overflow`). */
  readonly queueLimit: number;
  /** Bound on each `start` and `stop` hook and on the final drain. */
  readonly stopTimeoutMs: number;
}

type LaneState = 'idle' | 'starting' | 'started' | 'disabled';

/**
 * One consumer's queue for one session. Delivery is synchronous while hooks return synchronously
 * (no timer, no microtask per event); a hook that returns a promise pauses the lane until it
 * settles or times out, and events arriving meanwhile wait in the queue (bounded by `queueLimit`).
 */
export class ConsumerLane {
  private queue: AgUiEvent[] = [];
  /** The context of each queued event, at the same index. */
  private contexts: ConsumerContext[] = [];
  private head = 0;
  private state: LaneState = 'idle';
  /** A drain is in progress (possibly paused on an async hook). */
  private running = false;
  private idleWaiters: (() => void)[] = [];
  /** The thread of the first event, for `start` and `stop`. */
  private threadId = '';
  private closing = false;
  private startedOk = false;

  constructor(
    private readonly consumer: EventConsumer,
    private readonly options: ConsumerHubOptions,
    private readonly errors$: Subject<ConsumerError>,
    private readonly sessionId: () => string | undefined,
  ) {}

  private get backlog(): number {
    return this.queue.length - this.head;
  }

  /** Delivers `ev` now when nothing waits, else queues it (or disables the lane past the limit). */
  push(ev: AgUiEvent, ctx: ConsumerContext): void {
    if (this.state === 'disabled' || this.closing) return;
    if (this.backlog >= this.options.queueLimit) {
      this.report('overflow', `queue limit of ${this.options.queueLimit} events reached; consumer disabled for this session`);
      this.disable();
      return;
    }
    if (!this.running && this.state === 'started' && this.backlog === 0) {
      // Fast path: nothing queued, deliver now; queue only behind an async hook.
      const pending = this.deliver(ev, ctx);
      if (pending) {
        this.running = true;
        void pending.then(() => this.drain());
      }
      return;
    }
    this.queue.push(ev);
    this.contexts.push(ctx);
    if (!this.running) this.drain();
  }

  /** Waits for the queue to drain (bounded), then calls `stop(reason)` if the consumer started. */
  async close(reason: StopReason): Promise<void> {
    this.closing = true;
    if (this.running) {
      try {
        await withTimeout(new Promise<void>((resolve) => this.idleWaiters.push(resolve)), this.options.stopTimeoutMs, 'drain');
      } catch {
        // A consumer this far behind gets no more events after stop: drop the rest, report it.
        this.report('stop', `${this.backlog} queued events not delivered within ${this.options.stopTimeoutMs} ms of the session end; dropped`);
        this.disable();
      }
    }
    if (!this.startedOk) return;
    this.startedOk = false;
    try {
      await withTimeout(
        Promise.resolve().then(() => this.consumer.stop?.(reason, { sessionId: this.sessionId(), threadId: this.threadId })),
        this.options.stopTimeoutMs,
        'stop',
      );
    } catch (e) {
      this.report('stop', `stop failed: ${messageOf(e)}`, undefined, e);
    }
  }

  /** Delivers queued events; returns early (leaving `running` set) when a hook goes async. */
  private drain(): void {
    this.running = true;
    while (this.backlog > 0 && this.state !== 'disabled') {
      const ev = this.queue[this.head];
      const ctx = this.contexts[this.head];
      if (ev === undefined || ctx === undefined) break;
      if (this.state === 'idle') {
        const starting = this.start(ev);
        if (starting) {
          void starting.then(() => this.drain());
          return;
        }
        continue;
      }
      this.head++;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.contexts = this.contexts.slice(this.head);
        this.head = 0;
      }
      const pending = this.deliver(ev, ctx);
      if (pending) {
        void pending.then(() => this.drain());
        return;
      }
    }
    this.running = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    waiters.forEach((w) => w());
  }

  private disable(): void {
    this.state = 'disabled';
    this.queue = [];
    this.contexts = [];
    this.head = 0;
  }

  /**
   * Calls `start` before the first event. A consumer without the hook, or whose hook returns
   * synchronously, is started at once (its events need not queue); an async hook pauses the lane
   * (time-bounded) and the returned promise settles when it is done.
   */
  private start(first: AgUiEvent): Promise<void> | undefined {
    this.state = 'starting';
    if (first.type === 'RUN_STARTED') this.threadId = first.threadId;
    const failed = (e: unknown): void => {
      this.report('start', `start failed: ${messageOf(e)}; consumer disabled for this session`, undefined, e);
      this.disable();
    };
    const started = (): void => {
      this.state = 'started';
      this.startedOk = true;
    };
    let r: unknown;
    try {
      r = this.consumer.start?.({ sessionId: this.sessionId(), threadId: this.threadId });
    } catch (e) {
      failed(e);
      return undefined;
    }
    if (!isThenable(r)) {
      started();
      return undefined;
    }
    return withTimeout(Promise.resolve(r), this.options.stopTimeoutMs, 'start').then(started, failed);
  }

  /** Calls the hooks; returns a promise only when a hook went async (already time-bounded and caught). */
  private deliver(ev: AgUiEvent, ctx: ConsumerContext): Promise<void> | undefined {
    this.threadId = ctx.threadId;
    let r: unknown;
    try {
      r = dispatch(this.consumer, ev, ctx);
    } catch (e) {
      this.report('event', `${ev.type} handler failed: ${messageOf(e)}`, ev, e);
      return undefined;
    }
    if (!isThenable(r)) return undefined;
    return withTimeout(Promise.resolve(r), this.options.handlerTimeoutMs, 'handler').then(
      () => undefined,
      (e: unknown) => this.report('event', `${ev.type} handler failed: ${messageOf(e)}`, ev, e),
    );
  }

  private report(phase: ConsumerError['phase'], message: string, event?: AgUiEvent, error?: unknown): void {
    this.errors$.next({ consumerId: this.consumer.id, phase, message, sessionId: this.sessionId(), event, error });
  }
}
