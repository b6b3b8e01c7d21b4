import { Subject } from 'rxjs';
import { withAgUi } from '../../src/core/events/translated-event.js';
import type { AgentRxEnvelope, AgentRxEvent, SessionEvent } from '../../src/core/events/session-event.js';
import type { EventConsumer, StopReason } from '../../src/core/plugin/event-consumer.js';
import { ConsumerHub, type ConsumerAttachment, type ConsumerError } from '../../src/core/session/consumer-hub.js';

/** Wraps synthesized events in envelopes, `at` one ms apart from `at0`. */
export function envelopes(events: readonly AgentRxEvent[], at0 = 1_000): SessionEvent[] {
  return events.map((raw, i): AgentRxEnvelope => ({ seq: i + 1, sessionId: 's', turn: 1, provider: 'scripted', source: 'agentrx', raw, at: at0 + i }));
}

/** A hub of `consumers` fed by hand, as a session feeds it: envelopes translated once by `withAgUi`. */
export class HubFeed {
  readonly errors: ConsumerError[] = [];
  private readonly source = new Subject<SessionEvent>();
  private readonly attachment: ConsumerAttachment;
  private seq = 0;

  constructor(consumers: EventConsumer[], opts = { handlerTimeoutMs: 1000, queueLimit: 1000, stopTimeoutMs: 1000 }) {
    const errors$ = new Subject<ConsumerError>();
    errors$.subscribe((e) => this.errors.push(e));
    this.attachment = new ConsumerHub(consumers, opts, errors$).attach(this.source.pipe(withAgUi()), () => 's');
  }

  /** Emits each event in its own envelope, all at `at`. */
  at(at: number, ...events: AgentRxEvent[]): this {
    for (const raw of events) this.source.next({ seq: ++this.seq, sessionId: 's', turn: 1, provider: 'scripted', source: 'agentrx', raw, at });
    return this;
  }

  /** Emits each event in its own envelope, one ms apart. */
  push(...events: AgentRxEvent[]): this {
    for (const env of envelopes(events, 1_000 + this.seq)) this.source.next({ ...env, seq: ++this.seq });
    return this;
  }

  /** Ends the session's events and stops the consumers. */
  async close(reason: StopReason = 'completed'): Promise<void> {
    this.source.complete();
    await this.attachment.close(reason);
  }
}
