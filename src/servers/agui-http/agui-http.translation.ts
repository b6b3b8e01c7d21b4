import { Observable, Subject } from '../../core/util/rxjs.js';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import { toAgUi } from '../../core/events/operators/index.js';
import type { SessionEvent } from '../../core/events/session-event.js';
import type { LiveSession } from '../../core/plugin/live-session.js';

/**
 * One envelope and the AG-UI events it translated to (often none): what the endpoint writes as one
 * group, with the envelope's `seq` as the SSE id of its last frame.
 */
export interface TranslatedEnvelope {
  /** The envelope; undefined for what the end of the envelopes adds (a RUN_ERROR for a run left open). */
  readonly envelope: SessionEvent | undefined;
  readonly agui: readonly AgUiEvent[];
}

/** Shared empty translation: most envelopes (provider events) translate to nothing. */
const NONE: readonly AgUiEvent[] = [];

/**
 * A live session's envelopes with their AG-UI events, taken from the session's own `agui$` (the
 * one translation it makes, for its consumers too) instead of translating them again. `agui$` is
 * subscribed first: a live session derives it synchronously from the envelopes, through a reading
 * of them that started no later than this one's, so each envelope's AG-UI events have arrived
 * when the envelope reaches this `events$` subscriber, and those the end adds (a run left open)
 * when `events$` completes.
 */
export function liveTranslation(session: LiveSession): Observable<TranslatedEnvelope> {
  return new Observable<TranslatedEnvelope>((subscriber) => {
    let pending: AgUiEvent[] = [];
    const take = (): readonly AgUiEvent[] => {
      if (pending.length === 0) return NONE;
      const agui = pending;
      pending = [];
      return agui;
    };
    // Its error and completion are the envelopes' too: they are handled there.
    const agui = session.agui$.subscribe({ next: (ev) => pending.push(ev), error: () => undefined });
    const envelopes = session.events$.subscribe({
      next: (envelope) => subscriber.next({ envelope, agui: take() }),
      error: (e: unknown) => subscriber.error(e),
      complete: () => {
        subscriber.next({ envelope: undefined, agui: take() });
        subscriber.complete();
      },
    });
    return () => {
      envelopes.unsubscribe();
      agui.unsubscribe();
    };
  });
}

/**
 * A stored log's envelopes with their AG-UI events, translated here (nothing translated them for
 * this reader): one `toAgUi` per reader, run once per envelope.
 */
export function logTranslation(events$: Observable<SessionEvent>): Observable<TranslatedEnvelope> {
  return new Observable<TranslatedEnvelope>((subscriber) => {
    const input = new Subject<SessionEvent>();
    let group: AgUiEvent[] = [];
    // toAgUi emits synchronously for each envelope: `group` holds this envelope's events once fed.
    const translated = input.pipe(toAgUi()).subscribe({ next: (ev) => group.push(ev), error: () => undefined });
    const feed = (envelope: SessionEvent | undefined, step: () => void): void => {
      group = [];
      step();
      subscriber.next({ envelope, agui: group });
    };
    const source = events$.subscribe({
      next: (envelope) => feed(envelope, () => input.next(envelope)),
      error: (e: unknown) => subscriber.error(e),
      complete: () => {
        feed(undefined, () => input.complete());
        subscriber.complete();
      },
    });
    return () => {
      source.unsubscribe();
      translated.unsubscribe();
    };
  });
}
