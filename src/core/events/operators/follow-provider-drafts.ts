import { Observable, type MonoTypeOperatorFunction } from '../../util/rxjs.js';
import type { AgentRxEvent, EventDraft } from '../session-event.js';

/** What a {@link followProviderDrafts} deriver returns for one provider draft: nothing, one event or several (in order). */
export type Derived = AgentRxEvent | readonly AgentRxEvent[] | undefined;

/**
 * The shared shape of the ingestion's extraction operators (`extractReasoningDeltas`,
 * `extractToolCallDeltas`, `extractHostToolResults`; `extractTextDeltas`, on every event's path,
 * is the same shape written out): every draft passes
 * through unchanged and in order, and each provider draft is followed by the agentrx events
 * `derive` reads from it, in the same turn, without an `id`.
 *
 * ```
 * source:                       --p--q--a--|
 * followProviderDrafts(derive): --(pd)q--a--|
 *
 * p: provider draft; d: { source: 'agentrx', turn: p.turn, raw: derive(p) }
 * q: provider draft that derives nothing; a: agentrx draft (never given to derive)
 * ```
 *
 * Hand-written rather than concatMap: no inner Observable per event on the hot path. A non-object
 * item is dropped; `derive` must not throw (each caller guards its provider callback). When
 * several of these operators are chained, the events derived by the *last* one come first (it
 * sees the provider draft first): the ingestion orders the chain accordingly.
 *
 * @param derive Reads the agentrx events one provider draft carries.
 * @returns A function that returns an Observable of the source drafts plus the derived ones.
 */
export function followProviderDrafts(derive: (draft: Extract<EventDraft, { source: 'provider' }>) => Derived): MonoTypeOperatorFunction<EventDraft> {
  return (source) =>
    new Observable<EventDraft>((subscriber) =>
      source.subscribe({
        next: (draft) => {
          // Not a draft at all: drop it rather than error the chain.
          if (typeof draft !== 'object' || draft === null) return;
          subscriber.next(draft);
          if (draft.source !== 'provider') return;
          const derived = derive(draft);
          if (derived === undefined) return;
          if (!Array.isArray(derived)) subscriber.next({ source: 'agentrx', turn: draft.turn, raw: derived as AgentRxEvent });
          else for (const raw of derived as readonly AgentRxEvent[]) subscriber.next({ source: 'agentrx', turn: draft.turn, raw });
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      }),
    );
}
