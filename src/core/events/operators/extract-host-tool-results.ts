import type { MonoTypeOperatorFunction } from 'rxjs';
import type { RawEvent } from '../../model.js';
import type { EventDraft, HostToolResultEvent } from '../session-event.js';
import { followProviderDrafts } from './follow-provider-drafts.js';

/** What a host-tool-result reader returns for one raw event (a provider's decoded `host_tool_result`): the result of a tool the host ran, or undefined. */
export type HostToolResultOf = { readonly toolUseId: string; readonly content: string; readonly isError: boolean } | undefined;

/**
 * Follows every provider draft that carries the result of a host-run tool with a synthesized
 * `agentrx.host_tool_result` draft.
 *
 * ```
 * source:                                --p--q--a--|
 * extractHostToolResults(hostToolResult): --(ph)q--a--|
 *
 * p: provider draft carrying a host tool result; h: { source: 'agentrx', turn: p.turn,
 *    raw: { type: 'agentrx.host_tool_result', toolUse: { id }, result: { content, isError } } }
 * q: any other provider draft; a: agentrx draft (never given to hostToolResult)
 * ```
 *
 * Every draft passes through unchanged and in order; the synthesized draft comes right after its
 * provider draft, in the same turn, and has no `id`. A `hostToolResult` that throws or returns
 * something malformed (an empty id, a non-string content, a non-boolean `isError`) counts as "no
 * result"; a non-object item is dropped; the operator never errors on its own. Stateless.
 *
 * @param hostToolResult Maps one raw provider event to the host-run tool result it carries, or `undefined`.
 * @returns A function that returns an Observable of the source drafts plus the synthesized ones.
 */
export function extractHostToolResults(hostToolResult: (raw: RawEvent) => HostToolResultOf): MonoTypeOperatorFunction<EventDraft> {
  return followProviderDrafts((draft) => hostToolResultEvent(hostToolResult, draft.raw));
}

/**
 * The `agentrx.host_tool_result` event for one raw provider event (what `extractHostToolResults`
 * appends), or undefined when it carries none; never throws.
 */
export function hostToolResultEvent(hostToolResult: (raw: RawEvent) => HostToolResultOf, raw: RawEvent): HostToolResultEvent | undefined {
  let toolUseId: unknown;
  let content: unknown;
  let isError: unknown;
  try {
    const result: unknown = hostToolResult(raw);
    if (typeof result !== 'object' || result === null) return undefined;
    ({ toolUseId, content, isError } = result as { toolUseId?: unknown; content?: unknown; isError?: unknown });
  } catch {
    // A throwing callback (or a throwing getter on what it returned) is "no result".
    return undefined;
  }
  if (typeof toolUseId !== 'string' || toolUseId.length === 0 || typeof content !== 'string' || typeof isError !== 'boolean') return undefined;
  return { type: 'agentrx.host_tool_result', toolUse: { id: toolUseId }, result: { content, isError } };
}
