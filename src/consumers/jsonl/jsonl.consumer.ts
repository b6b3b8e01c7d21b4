import type { Writable } from 'node:stream';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import type { EventConsumer } from '../../core/plugin/event-consumer.js';

/**
 * Writes one AG-UI event per line as compact JSON (camelCase; optional fields omitted, never
 * null), one write per event. Parsing the lines reproduces the events.
 */
export class JsonlConsumer implements EventConsumer {
  readonly id = 'jsonl';
  constructor(private readonly out: Writable = process.stdout) {}

  onEvent(ev: AgUiEvent): void {
    this.out.write(`${JSON.stringify(ev)}\n`);
  }
}
