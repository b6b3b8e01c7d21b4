import { AgentRxError } from '../core/errors.js';
import type { LiveResult } from '../core/plugin/live-session.js';
import type { RawEvent, SessionResult } from '../core/model.js';
import type { ClientAnswers } from '../core/plugin/session-options.js';

/**
 * A request's result as it travels through Redis: the SessionResult without `events` and
 * `transcript` (raw provider events and the client-held history stay in the session's log and
 * record; a result is meant to be small).
 */
export type RemoteResult = Omit<SessionResult, 'events' | 'transcript'>;

/** An error as it travels through Redis: an AgentRxError's code and message. */
export interface WireError {
  readonly code: string;
  readonly message: string;
}

/** What a handle sends to the owner worker on the submission's input stream. */
export type InputMessage =
  | { readonly kind: 'message'; readonly text: string }
  | { readonly kind: 'event'; readonly event: RawEvent }
  /** Replaces the agent's state before the session's next request (`LiveSession.setState`). */
  | { readonly kind: 'state'; readonly state: Readonly<Record<string, unknown>> }
  /** The client's answers to what the running request waits on (`LiveSession.answerClient`). */
  | { readonly kind: 'answer'; readonly answers: ClientAnswers }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'close' };

/** What the owner worker publishes on the submission's output stream. */
export type OutputMessage =
  | { readonly kind: 'opened'; readonly sessionId: string }
  | { readonly kind: 'result'; readonly result: RemoteResult }
  /** An input was applied (`error`: it was refused, e.g. `sendEvent` on a provider without raw input). */
  | { readonly kind: 'ack'; readonly input: string; readonly error?: WireError }
  /** The session ended for good; its log ends at `lastSeq`. `error`: it failed or was cancelled. */
  | { readonly kind: 'closed'; readonly lastSeq: number; readonly error?: WireError };

/** The one field of every stream entry: the message as JSON. */
export const MESSAGE_FIELD = 'm';

/** A SessionResult as a RemoteResult (drops `events` and `transcript`). */
export function toRemoteResult(result: LiveResult): RemoteResult {
  const { events: _events, transcript: _transcript, ...rest } = result;
  return rest;
}

/** An error as it travels (code and message only: no cause, no details). */
export function toWireError(e: AgentRxError): WireError {
  return { code: e.code, message: e.message };
}

/** The AgentRxError a handle raises for a WireError. */
export function fromWireError(e: WireError): AgentRxError {
  return new AgentRxError(e.code as AgentRxError['code'], e.message, { remote: true });
}

/** Decodes a stream entry's fields (`[field, value, …]`); undefined when it carries no message. */
export function decodeEntry<T>(fields: readonly string[]): T | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== MESSAGE_FIELD) continue;
    try {
      return JSON.parse(fields[i + 1]!) as T;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
