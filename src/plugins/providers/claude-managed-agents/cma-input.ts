import type { RawEvent } from '../../../core/model.js';
import { CmaEventType, typeOf, type WireMap } from './cma-wire.js';

/** What `pushInput` sends: one POST of user events. */
export interface CmaInput {
  /** `results`: tool results (an ambiguous failure is reconciled with the history); `send`: anything else. */
  readonly kind: 'send' | 'results';
  readonly events: readonly WireMap[];
}

/**
 * The reconciler `pushInput` hands the client for a `results` input (undefined for `send`): after
 * an ambiguous failure the POST may have landed, so each tool use must still be answered exactly
 * once: only the tool results and confirmations `history` lacks are re-sent.
 */
export function unansweredEvents(input: CmaInput): ((history: readonly RawEvent[]) => WireMap[]) | undefined {
  if (input.kind !== 'results') return undefined;
  return (history: readonly RawEvent[]): WireMap[] => {
    const answered = new Set(history.filter((e) => typeOf(e) === CmaEventType.userCustomToolResult).map((e) => String(e['custom_tool_use_id'])));
    const confirmed = new Set(history.filter((e) => typeOf(e) === CmaEventType.userToolConfirmation).map((e) => String(e['tool_use_id'])));
    return input.events.filter((e) =>
      typeOf(e) === CmaEventType.userToolConfirmation ? !confirmed.has(String(e['tool_use_id'])) : !answered.has(String(e['custom_tool_use_id'])),
    );
  };
}
