import type { Observable, Subject, Subscription } from 'rxjs';
import type { TranslatedEvent } from '../events/translated-event.js';
import type { ConsumerContext, EventConsumer, StopReason } from '../plugin/event-consumer.js';
import { ConsumerLane, type ConsumerError, type ConsumerHubOptions } from './consumer-lane.js';

export type { ConsumerError, ConsumerHubOptions } from './consumer-lane.js';

/**
 * Delivers one session's events to every consumer: each AG-UI event with the typed session event
 * it was translated from, through one ordered, bounded queue and one error boundary per consumer;
 * `start` awaited before the consumer's first event (events that arrive meanwhile are queued);
 * `stop(reason)` exactly once per successful start.
 */
export class ConsumerHub {
  constructor(
    private readonly consumers: readonly EventConsumer[],
    private readonly options: ConsumerHubOptions,
    private readonly errors$: Subject<ConsumerError>,
  ) {}

  /**
   * Subscribes every consumer to one session's translated events (`events$.pipe(withAgUi())`:
   * the session's one AG-UI translation, shared with its `agui$`); each hook's `ctx.source` is
   * the typed event of the envelope its AG-UI event came from. Call before the first event.
   */
  attach(translated$: Observable<TranslatedEvent>, sessionId: () => string | undefined): ConsumerAttachment {
    const lanes = this.consumers.map((c) => new ConsumerLane(c, this.options, this.errors$, sessionId));
    // Every lane receives every event in the same order (a disabled lane receives none after),
    // so the context is the same for all of them: one readonly object per event, not one per lane.
    let seq = 0;
    let threadId = '';
    let runId = '';
    const sub = translated$.subscribe({
      next: ({ event, envelope }) => {
        if (event.type === 'RUN_STARTED') {
          threadId = event.threadId;
          runId = event.runId;
        }
        const source = envelope?.source === 'agentrx' ? envelope.raw : undefined;
        const ctx: ConsumerContext = { sessionId: sessionId(), threadId, runId, seq: ++seq, at: event.timestamp ?? Date.now(), source };
        for (let i = 0; i < lanes.length; i++) lanes[i]?.push(event, ctx);
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
