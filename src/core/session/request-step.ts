import type { RawEvent, TurnResult } from '../model.js';
import type { Asked } from './tool-answerer.js';

/** What the Session's inbox holds: closed turns, redrives and follow-up messages, handled one at a time. */
export type InboxItem =
  | { readonly kind: 'turn'; readonly events: readonly RawEvent[] }
  | { readonly kind: 'redrive'; readonly asked: Asked }
  | { readonly kind: 'message'; readonly text: string };

/** A follow-up message: what `close()` still answers before the session ends. */
export const isMessage = (item: InboxItem): boolean => item.kind === 'message';

/** Anything but a follow-up message: what a running request takes from the inbox. */
export const notMessage = (item: InboxItem): boolean => item.kind !== 'message';

/**
 * One step of a request's run loop (`Session.request`): each step is run, and yields the next,
 * until `finish`.
 * - `send`: post an input (the prompt, a tool answer, a re-prompt); its turn comes back later.
 * - `await`: nothing is ready; wait for the inbox (a turn the host closes, a redrive).
 * - `redrive`: answer what a resume or a re-attach found unanswered.
 * - `turn`: a turn closed; fold it and decide (answer it, re-prompt, go on, or finish).
 * - `finish`: the request's terminal (with the validated `output` when the session has an `outputSchema`).
 */
export type RequestStep =
  | { readonly kind: 'send'; readonly input: unknown }
  | { readonly kind: 'await' }
  | Exclude<InboxItem, { readonly kind: 'message' }>
  | { readonly kind: 'finish'; readonly turn: TurnResult; readonly output?: unknown };

/** What a request has in flight: inputs queued to send, and whether one is waiting for its turn. */
export interface RequestRun {
  readonly toSend: unknown[];
  /** An input was sent (or the caller was asked) and its turn has not closed yet: queued inputs wait. */
  awaiting: boolean;
}
