import type { EventConsumer } from '../../src/core/plugin/event-consumer.js';

/** Throws from every hook. */
export class ThrowingConsumer implements EventConsumer {
  readonly id = 'throwing';
  stops = 0;
  onEvent(): void {
    throw new Error('consumer exploded');
  }
  stop(): void {
    this.stops++;
  }
}

/** Never settles any hook. */
export class HangingConsumer implements EventConsumer {
  readonly id = 'hanging';
  stops = 0;
  onEvent(): Promise<void> {
    return new Promise<void>(() => undefined);
  }
  stop(): void {
    this.stops++;
  }
}
