import type { AgUiEvent } from '../core/events/agui-event.js';
import type { ConsumerContext, EventConsumer, StopReason } from '../core/plugin/event-consumer.js';

/** Records every hook call, in order. For tests and debugging. */
export class RecordingConsumer implements EventConsumer {
  readonly events: AgUiEvent[] = [];
  readonly contexts: ConsumerContext[] = [];
  readonly calls: string[] = [];
  readonly stops: StopReason[] = [];
  starts = 0;

  constructor(readonly id = 'recording') {}

  start(): void {
    this.starts++;
    this.calls.push('start');
  }
  stop(reason: StopReason): void {
    this.stops.push(reason);
    this.calls.push(`stop:${reason}`);
  }
  onEvent(event: AgUiEvent, ctx: ConsumerContext): void {
    this.events.push(event);
    this.contexts.push(ctx);
    this.calls.push(event.type);
  }

  /** The concatenated text of all TEXT_MESSAGE_CONTENT events. */
  get text(): string {
    return this.events.map((e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? e.delta : '')).join('');
  }
}
