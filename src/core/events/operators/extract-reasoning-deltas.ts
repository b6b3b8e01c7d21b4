import type { MonoTypeOperatorFunction } from 'rxjs';
import type { RawEvent } from '../../model.js';
import type { EventDraft, ReasoningDelta } from '../session-event.js';
import { readTextChunk, type TextDeltaResult } from './extract-text-deltas.js';
import { followProviderDrafts } from './follow-provider-drafts.js';

/**
 * Follows every provider draft that carries reasoning text (the model thinking aloud before its
 * answer) with a synthesized `agentrx.reasoning_delta` draft.
 *
 * ```
 * source:                                 --p--q--a--|
 * extractReasoningDeltas(reasoningDelta): --(pr)q--a--|
 *
 * p: provider draft with reasoning text; r: { source: 'agentrx', turn: p.turn,
 *    raw: { type: 'agentrx.reasoning_delta', text, messageId } }
 * q: provider draft without reasoning; a: agentrx draft (never given to reasoningDelta)
 * ```
 *
 * Every draft passes through unchanged and in order; the synthesized draft comes right after its
 * provider draft, in the same turn, and has no `id`. `messageId` is the one `reasoningDelta`
 * returned, else `reasoning-<turn>`; it names the reasoning message, which AG-UI keeps apart from
 * the text message. Empty text produces nothing. A `reasoningDelta` that throws or returns
 * something malformed counts as "no reasoning"; a non-object item is dropped; the operator never
 * errors on its own. Stateless.
 *
 * @param reasoningDelta Maps one raw provider event to a reasoning chunk (optionally with its
 * message id), or `undefined`.
 * @returns A function that returns an Observable of the source drafts plus the synthesized ones.
 */
export function extractReasoningDeltas(reasoningDelta: (raw: RawEvent) => TextDeltaResult): MonoTypeOperatorFunction<EventDraft> {
  return followProviderDrafts((draft) => reasoningDeltaEvent(reasoningDelta, draft.raw, draft.turn));
}

/** The `agentrx.reasoning_delta` event of one raw provider event of turn `turn` (what `extractReasoningDeltas` appends), or undefined; never throws. */
export function reasoningDeltaEvent(reasoningDelta: (raw: RawEvent) => TextDeltaResult, raw: RawEvent, turn: number): ReasoningDelta | undefined {
  const chunk = readTextChunk(reasoningDelta, raw);
  return chunk === undefined ? undefined : { type: 'agentrx.reasoning_delta', text: chunk.text, messageId: chunk.messageId ?? `reasoning-${turn}` };
}
