import type { MonoTypeOperatorFunction } from 'rxjs';
import type { RawEvent } from '../../model.js';
import type { EventDraft, ToolCallDelta } from '../session-event.js';
import { followProviderDrafts, type Derived } from './follow-provider-drafts.js';

/** One fragment of a tool call's arguments (a provider's decoded `tool_call_delta`). */
export interface ToolCallDeltaPart {
  /** The id the turn's end and the tool's result will use for the call. */
  readonly toolUseId: string;
  /** The tool's name (needed on the call's first fragment). */
  readonly name?: string;
  /** The next piece of the arguments' JSON text; may be empty. */
  readonly argsDelta: string;
  /** The assistant message the call belongs to. */
  readonly parentMessageId?: string;
}

/** What a tool-call reader returns for one raw event: nothing, one fragment, or several (parallel calls in one event). */
export type ToolCallDeltaOf = ToolCallDeltaPart | readonly ToolCallDeltaPart[] | undefined;

/**
 * Follows every provider draft that carries tool-call argument fragments with one synthesized
 * `agentrx.tool_call_delta` draft per fragment.
 *
 * ```
 * source:                               --p--q--a--|
 * extractToolCallDeltas(toolCallDelta): --(pcd)q--a--|
 *
 * p: provider draft carrying fragments of calls 1 and 2; c, d: { source: 'agentrx', turn: p.turn,
 *    raw: { type: 'agentrx.tool_call_delta', toolUseId, name?, argsDelta, parentMessageId? } }
 * q: any other provider draft; a: agentrx draft (never given to toolCallDelta)
 * ```
 *
 * Every draft passes through unchanged and in order; the synthesized drafts come right after
 * their provider draft, in the order `toolCallDelta` returned them, in the same turn, without an
 * `id`. A fragment with an empty id or a non-string `argsDelta` is dropped; an empty or non-string
 * `name` / `parentMessageId` is left out. A `toolCallDelta` that throws counts as "no fragment"; a
 * non-object item is dropped; the operator never errors on its own. Stateless: which fragment
 * opens a call is `toAgUi`'s business.
 *
 * @param toolCallDelta Maps one raw provider event to the argument fragments it carries.
 * @returns A function that returns an Observable of the source drafts plus the synthesized ones.
 */
export function extractToolCallDeltas(toolCallDelta: (raw: RawEvent) => ToolCallDeltaOf): MonoTypeOperatorFunction<EventDraft> {
  return followProviderDrafts((draft) => toolCallDeltaEvents(toolCallDelta, draft.raw));
}

/**
 * The `agentrx.tool_call_delta` events one raw provider event carries (what `extractToolCallDeltas`
 * appends after its draft), or undefined; never throws.
 */
export function toolCallDeltaEvents(toolCallDelta: (raw: RawEvent) => ToolCallDeltaOf, raw: RawEvent): Derived {
  try {
    const result: unknown = toolCallDelta(raw);
    if (typeof result !== 'object' || result === null) return undefined;
    if (!Array.isArray(result)) return deltaEvent(result);
    const events: ToolCallDelta[] = [];
    for (const part of result as readonly unknown[]) {
      const ev = deltaEvent(part);
      if (ev !== undefined) events.push(ev);
    }
    return events.length > 0 ? events : undefined;
  } catch {
    // A throwing callback (or a throwing getter on what it returned) is "no fragment".
    return undefined;
  }
}

function deltaEvent(part: unknown): ToolCallDelta | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  const { toolUseId, name, argsDelta, parentMessageId } = part as { toolUseId?: unknown; name?: unknown; argsDelta?: unknown; parentMessageId?: unknown };
  if (typeof toolUseId !== 'string' || toolUseId.length === 0 || typeof argsDelta !== 'string') return undefined;
  return {
    type: 'agentrx.tool_call_delta',
    toolUseId,
    ...(typeof name === 'string' && name.length > 0 ? { name } : {}),
    argsDelta,
    ...(typeof parentMessageId === 'string' && parentMessageId.length > 0 ? { parentMessageId } : {}),
  };
}
