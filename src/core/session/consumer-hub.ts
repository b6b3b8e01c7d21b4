import type { Observable, Subject, Subscription } from 'rxjs';
import type { AgUiEvent, ToolCallResultEvent } from '../events/agui-event.js';
import { toolCallResultOf } from '../events/tool-call-result.js';
import type { ConsumerContext, EventConsumer, StopReason } from '../plugin/event-consumer.js';
import { messageOf, withTimeout } from '../util/async.js';

/** A consumer fault, published on `consumerErrors$`. The run and other consumers carry on. */
export interface ConsumerError {
  readonly consumerId: string;
  readonly phase: 'start' | 'event' | 'stop' | 'overflow';
  readonly message: string;
  readonly sessionId: string | undefined;
  /** The AG-UI event being handled when it failed (phase `event`). */
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

/**
 * Delivers one session's AG-UI events to every consumer: one ordered, bounded queue and one
 * error boundary per consumer; `start` awaited before the consumer's first event (events that
 * arrive meanwhile are queued); `stop(reason)` exactly once per successful start.
 */
export class ConsumerHub {
  constructor(
    private readonly consumers: readonly EventConsumer[],
    private readonly options: ConsumerHubOptions,
    private readonly errors$: Subject<ConsumerError>,
  ) {}

  /** Subscribes every consumer to `agui$` for one session. Call before the first event is emitted. */
  attach(agui$: Observable<AgUiEvent>, sessionId: () => string | undefined): ConsumerAttachment {
    const lanes = this.consumers.map((c) => new ConsumerLane(c, this.options, this.errors$, sessionId));
    // Every lane receives every event in the same order (a disabled lane receives none after),
    // so the context is the same for all of them: one readonly object per event, not one per lane.
    let seq = 0;
    let threadId = '';
    let runId = '';
    const sub = agui$.subscribe({
      next: (ev) => {
        if (ev.type === 'RUN_STARTED') {
          threadId = ev.threadId;
          runId = ev.runId;
        }
        const ctx: ConsumerContext = { sessionId: sessionId(), threadId, runId, seq: ++seq, at: ev.timestamp ?? Date.now() };
        for (let i = 0; i < lanes.length; i++) lanes[i]!.push(ev, ctx);
      },
    });
    return new ConsumerAttachment(lanes, sub);
  }
}

/** The consumers of one session. */
export class ConsumerAttachment {
  private stopped: Promise<void> | undefined;
  constructor(
    private readonly lanes: readonly ConsumerLane[],
    private readonly sub: Subscription,
  ) {}

  /** Drains every queue (bounded), then calls `stop(reason)` on each started consumer. Idempotent. */
  close(reason: StopReason): Promise<void> {
    this.stopped ??= (async () => {
      this.sub.unsubscribe();
      await Promise.allSettled(this.lanes.map((l) => l.close(reason)));
    })();
    return this.stopped;
  }
}

type LaneState = 'idle' | 'starting' | 'started' | 'disabled';

/**
 * One consumer's queue. Delivery is synchronous while hooks return synchronously (no timer, no
 * microtask per event); a hook that returns a promise pauses the lane until it settles or times
 * out, and events arriving meanwhile wait in the queue (bounded by `queueLimit`).
 */
class ConsumerLane {
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
      await withTimeout(Promise.resolve().then(() => this.consumer.stop?.(reason, { sessionId: this.sessionId(), threadId: this.threadId })), this.options.stopTimeoutMs, 'stop');
    } catch (e) {
      this.report('stop', `stop failed: ${messageOf(e)}`, undefined, e);
    }
  }

  /** Delivers queued events; returns early (leaving `running` set) when a hook goes async. */
  private drain(): void {
    this.running = true;
    while (this.backlog > 0 && this.state !== 'disabled') {
      if (this.state === 'idle') {
        const starting = this.start(this.queue[this.head]!);
        if (starting) {
          void starting.then(() => this.drain());
          return;
        }
        continue;
      }
      const ev = this.queue[this.head]!;
      const ctx = this.contexts[this.head++]!;
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

/** `onToolResult` (its value built only for a consumer that has the hook), then `onToolEnd` once it settled. */
function toolResultHooks(c: EventConsumer, ev: ToolCallResultEvent, ctx: ConsumerContext): void | Promise<void> {
  const end = (): void | Promise<void> => c.onToolEnd?.(ev.toolCallId, ctx);
  if (c.onToolResult === undefined) return end();
  const r = c.onToolResult(ev.toolCallId, toolCallResultOf(ev), ctx);
  return isThenable(r) ? Promise.resolve(r).then(end) : end();
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as PromiseLike<unknown>).then === 'function';
}

/** Calls `onEvent`, then the consumer contract's typed hook for the event; sync unless a hook is async. */
function dispatch(c: EventConsumer, ev: AgUiEvent, ctx: ConsumerContext): void | Promise<void> {
  const first = c.onEvent?.(ev, ctx);
  if (isThenable(first)) return Promise.resolve(first).then(() => typedHook(c, ev, ctx));
  return typedHook(c, ev, ctx);
}

/**
 * The contract's typed hook for one AG-UI event. The tool hooks follow the execution, not the
 * wire: TOOL_CALL_END (the arguments are complete) has no typed hook, and a TOOL_CALL_RESULT is
 * `onToolResult` then `onToolEnd` (the execution is over).
 */
function typedHook(c: EventConsumer, ev: AgUiEvent, ctx: ConsumerContext): void | Promise<void> {
  switch (ev.type) {
    case 'RUN_STARTED':
      return c.onRunStarted?.(ev.threadId, ev.runId, ctx);
    case 'TEXT_MESSAGE_START':
      return c.onTextStart?.(ev.messageId, ev.role, ctx);
    case 'TEXT_MESSAGE_CONTENT':
      return c.onTextContent?.(ev.messageId, ev.delta, ctx);
    case 'TEXT_MESSAGE_END':
      return c.onTextEnd?.(ev.messageId, ctx);
    case 'TOOL_CALL_START':
      return c.onToolStart?.(ev.toolCallId, ev.toolCallName, ctx);
    case 'TOOL_CALL_ARGS':
      return c.onToolArgs?.(ev.toolCallId, ev.delta, ctx);
    case 'TOOL_CALL_RESULT':
      return toolResultHooks(c, ev, ctx);
    case 'STATE_SNAPSHOT':
      return c.onStateSnapshot?.(ev.snapshot, ctx);
    case 'RUN_FINISHED':
      return c.onRunFinished?.(ev.threadId, ev.runId, ctx);
    case 'RUN_ERROR':
      return c.onError?.(ev.message, ev.code, ctx);
    default:
      return;
  }
}
