import { Observable, map, type OperatorFunction } from '../util/rxjs.js';
import type { AgUiEvent } from './agui-event.js';
import { AgUiTranslator } from './operators/to-ag-ui.js';
import type { SessionEvent } from './session-event.js';

/**
 * One AG-UI event with the envelope it was translated from, so that whoever needs both (the
 * consumer hub: AG-UI hooks and typed hooks) reads them from one translation instead of running
 * `toAgUi` again or decoding typed data back out of AG-UI fields.
 */
export interface TranslatedEvent {
  readonly event: AgUiEvent;
  /**
   * The envelope `event` was translated from: for a host-run tool's result held until its call
   * was announced, the `agentrx.host_tool_result` that carried it. Undefined for the terminal
   * `toAgUi` synthesizes when the envelopes end (or fail) inside a run, which no envelope produced.
   */
  readonly envelope: SessionEvent | undefined;
}

/**
 * `toAgUi`, with each AG-UI event paired with the envelope it was translated from.
 *
 * ```
 * source:     --s-----t-------p----|
 * withAgUi(): --S-----(MC)---------(EX|)
 *
 * s: agentrx.run_started → S: { event: RUN_STARTED, envelope: s }
 * t: agentrx.text_delta  → M: { event: TEXT_MESSAGE_START, envelope: t }, C: { event: TEXT_MESSAGE_CONTENT, envelope: t }
 * p: a provider event    → nothing
 * |: completion in a run → E: { event: TEXT_MESSAGE_END, envelope: undefined }, X: { event: RUN_ERROR, envelope: undefined }
 * ```
 *
 * Errors and completion pass through as with `toAgUi`; the state (the run, the held results) is
 * per subscription.
 *
 * @returns A function that returns an Observable of translated events.
 */
export function withAgUi(): OperatorFunction<SessionEvent, TranslatedEvent> {
  // toAgUi's own translator, driven here rather than a tap and a map around toAgUi: it translates
  // each envelope synchronously, so each event is paired as it is returned (bench/pipeline).
  return (source) =>
    new Observable<TranslatedEvent>((subscriber) => {
      const translator = new AgUiTranslator(false);
      const synthesized = (events: readonly AgUiEvent[]): void => {
        for (const event of events) subscriber.next({ event, envelope: undefined });
      };
      return source.subscribe({
        next: (envelope) => {
          const out = translator.translate(envelope);
          if (!Array.isArray(out)) subscriber.next({ event: out as AgUiEvent, envelope });
          else for (const event of out as readonly AgUiEvent[]) subscriber.next({ event, envelope: translator.sourceOf(event, envelope) });
        },
        error: (err: unknown) => {
          synthesized(translator.fail(err));
          subscriber.error(err);
        },
        complete: () => {
          synthesized(translator.complete());
          subscriber.complete();
        },
      });
    });
}

/**
 * The AG-UI events of a translation (what `toAgUi` alone emits).
 *
 * ```
 * source:   --S--M--C--|
 * agUiOf(): --s--m--c--|
 * ```
 *
 * @returns A function that returns an Observable of AG-UI events.
 */
export function agUiOf(): OperatorFunction<TranslatedEvent, AgUiEvent> {
  return map((t) => t.event);
}
