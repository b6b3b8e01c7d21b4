import { Observable } from '../util/rxjs.js';
import type { SessionEvent } from '../events/session-event.js';

/**
 * Replays a log after `afterSeq`, then follows it: reads pages until one is empty, again each
 * time `wake$` emits (an in-process append) and every `pollMs` (to see other writers; the page
 * reader is then asked to `refresh`). One read at a time; every envelope once, in `seq` order.
 * Errors with whatever the page reader throws. The poll timer is unref'd and lives only while
 * subscribed.
 *
 * @param readPage the envelopes after a seq (a page, gap-free from it).
 */
export function followLog(
  afterSeq: number,
  readPage: (afterSeq: number, refresh: boolean) => Promise<SessionEvent[]>,
  wake$: Observable<void>,
  pollMs: number,
): Observable<SessionEvent> {
  return new Observable<SessionEvent>((subscriber) => {
    let next = Math.max(0, Math.floor(afterSeq));
    let running = false;
    let again = false;
    let refreshWanted = false;
    const pump = (refresh: boolean): void => {
      refreshWanted ||= refresh;
      if (running) {
        again = true;
        return;
      }
      running = true;
      void (async () => {
        try {
          do {
            again = false;
            const refreshNow = refreshWanted;
            refreshWanted = false;
            for (;;) {
              const page = await readPage(next, refreshNow);
              for (const env of page) {
                if (subscriber.closed) return;
                subscriber.next(env);
                next = env.seq;
              }
              if (page.length === 0 || subscriber.closed) break;
            }
          } while (again && !subscriber.closed);
        } catch (e) {
          subscriber.error(e);
        } finally {
          running = false;
        }
      })();
    };
    const woken = wake$.subscribe(() => pump(false));
    const timer = setInterval(() => pump(true), pollMs);
    timer.unref();
    pump(true);
    return () => {
      woken.unsubscribe();
      clearInterval(timer);
    };
  });
}
