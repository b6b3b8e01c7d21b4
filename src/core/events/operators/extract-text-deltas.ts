import type { MonoTypeOperatorFunction } from 'rxjs';
import type { RawEvent } from '../../model.js';
import type { EventDraft, TextDelta } from '../session-event.js';
import { followProviderDrafts } from './follow-provider-drafts.js';

/** What a text reader returns for one raw event (a provider's decoded `text`). */
export type TextDeltaResult = string | { readonly text: string; readonly messageId?: string } | undefined;

/**
 * Follows every provider draft that carries text with a synthesized `agentrx.text_delta` draft.
 *
 * ```
 * source:                       --p--q--a--|
 * extractTextDeltas(textDelta): --(pt)q--a--|
 *
 * p: provider draft with text; t: { source: 'agentrx', turn: p.turn,
 *    raw: { type: 'agentrx.text_delta', text, messageId } }
 * q: provider draft without text; a: agentrx draft (never given to textDelta)
 * ```
 *
 * Every draft passes through unchanged and in order; the synthesized draft comes right after its
 * provider draft, in the same turn, and has no `id`. `messageId` is the one `textDelta` returned,
 * else `msg-<turn>`. Empty text produces nothing. A `textDelta` that throws or returns something
 * malformed counts as "no delta"; a non-object item is dropped; the operator never errors on its
 * own. Stateless.
 *
 * @param textDelta Maps one raw provider event to a text chunk (optionally with its message id),
 * or `undefined`.
 * @returns A function that returns an Observable of the source drafts plus the synthesized ones.
 */
export function extractTextDeltas(textDelta: (raw: RawEvent) => TextDeltaResult): MonoTypeOperatorFunction<EventDraft> {
  return followProviderDrafts((draft) => textDeltaEvent(textDelta, draft.raw, draft.turn));
}

/**
 * The `agentrx.text_delta` event for one raw provider event, or undefined when it carries no text
 * (what `extractTextDeltas` appends after a provider draft of turn `turn`; also called directly by
 * the Session's ingestion, which runs the extraction without the operator chain).
 */
export function textDeltaEvent(textDelta: (raw: RawEvent) => TextDeltaResult, raw: RawEvent, turn: number): TextDelta | undefined {
  // Written out (not through readTextChunk): this runs for every event, and allocates only the event.
  let text: unknown;
  let messageId: unknown;
  try {
    const result: unknown = textDelta(raw);
    if (typeof result === 'string') text = result;
    else if (typeof result === 'object' && result !== null) ({ text, messageId } = result as { text?: unknown; messageId?: unknown });
  } catch {
    // A throwing callback (or a throwing getter on what it returned) is "no delta".
    return undefined;
  }
  if (typeof text !== 'string' || text.length === 0) return undefined;
  return { type: 'agentrx.text_delta', text, messageId: typeof messageId === 'string' && messageId.length > 0 ? messageId : `msg-${turn}` };
}

/**
 * The non-empty text (and non-empty message id, when given) a text-shaped provider callback
 * (`reasoningDelta`, like `textDelta`) returns for one raw event; undefined for no text, a
 * malformed return or a throw.
 */
export function readTextChunk(
  fn: (raw: RawEvent) => TextDeltaResult,
  raw: RawEvent,
): { readonly text: string; readonly messageId: string | undefined } | undefined {
  let text: unknown;
  let messageId: unknown;
  try {
    const result: unknown = fn(raw);
    if (typeof result === 'string') text = result;
    else if (typeof result === 'object' && result !== null) ({ text, messageId } = result as { text?: unknown; messageId?: unknown });
  } catch {
    // A throwing callback (or a throwing getter on what it returned) is "no reasoning".
    return undefined;
  }
  if (typeof text !== 'string' || text.length === 0) return undefined;
  return { text, messageId: typeof messageId === 'string' && messageId.length > 0 ? messageId : undefined };
}
