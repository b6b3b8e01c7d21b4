import { Observable, Subject } from '../util/rxjs.js';
import type { AgUiEvent } from '../events/agui-event.js';
import { toAgUi } from '../events/operators/index.js';
import type { SessionEvent } from '../events/session-event.js';
import type { SessionStore } from '../store/session-store.js';

/** An AG-UI event and the `seq` of the envelope it was translated from (an SSE `id:`). */
export interface SequencedAgUiEvent {
  readonly seq: number;
  readonly event: AgUiEvent;
}

/** A reader attached to a session's log: what was recorded after a point, then what follows live. */
export interface LogAttachment {
  /** Envelopes with `seq` > `afterSeq`, in order, then live ones. Never completes on its own. */
  readonly events$: Observable<SessionEvent>;
  /**
   * The AG-UI translation of the same envelopes, each event tagged with its envelope's `seq`. The
   * translation runs from the start of the log (so a run that was open at `afterSeq` goes on
   * well-formed); only events of envelopes after `afterSeq` are emitted.
   */
  readonly agui$: Observable<SequencedAgUiEvent>;
}

/** Attaches to `sessionId`'s log in `store` after `afterSeq` (0: from the start). */
export function attachLog(store: SessionStore, sessionId: string, afterSeq = 0): LogAttachment {
  const events$ = store.tail(sessionId, afterSeq);
  const agui$ = new Observable<SequencedAgUiEvent>((subscriber) => {
    const input = new Subject<SessionEvent>();
    let seq = 0;
    // toAgUi emits synchronously for each envelope, so `seq` is the envelope's while it does.
    const translated = input.pipe(toAgUi()).subscribe((event) => {
      if (seq > afterSeq) subscriber.next({ seq, event });
    });
    const source = store.tail(sessionId, 0).subscribe({
      next: (env) => {
        seq = env.seq;
        input.next(env);
      },
      error: (e: unknown) => subscriber.error(e),
    });
    return () => {
      source.unsubscribe();
      translated.unsubscribe();
    };
  });
  return { events$, agui$ };
}
