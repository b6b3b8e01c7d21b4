import type { RawEvent, ToolConfirmation, ToolUse } from '../model.js';

/**
 * What the Session needs to know of one host event, decoded once by its provider
 * (`ProviderBase.decode`). A raw event decodes to none, one or several of these (a Local chunk
 * may carry reasoning, text and tool-call fragments at once); the raw event itself still flows,
 * verbatim, to `events$` and the store. Tagged by `kind`.
 */
export type HostEvent = HostText | HostReasoning | HostToolCallDelta | HostToolResult | HostToolUse | HostToolAnswered | HostTurnEnd;

/** A chunk of the assistant's answer as it streams (an `agentrx.text_delta` follows its raw event). */
export interface HostText {
  readonly kind: 'text';
  /** Non-empty; an empty chunk is no chunk. */
  readonly text: string;
  /** The message the chunk belongs to; default `msg-<turn>`. */
  readonly messageId?: string;
}

/** A chunk of the model's reasoning before it answers (an `agentrx.reasoning_delta` follows its raw event). */
export interface HostReasoning {
  readonly kind: 'reasoning';
  readonly text: string;
  /** The reasoning message, kept apart from the text message's id; default `reasoning-<turn>`. */
  readonly messageId?: string;
}

/**
 * A fragment of a tool call's arguments as the host streams them (an `agentrx.tool_call_delta`
 * follows its raw event; `toAgUi` opens the call at its first fragment).
 */
export interface HostToolCallDelta {
  readonly kind: 'tool_call_delta';
  /** The id the turn's `normalize` gives the call (and its result uses). */
  readonly toolUseId: string;
  /** The tool's name: required on the call's first fragment. */
  readonly name?: string;
  /** The next piece of the arguments' JSON text; may be empty. */
  readonly argsDelta: string;
  readonly parentMessageId?: string;
}

/** The result of a tool the host ran itself (an `agentrx.host_tool_result` follows its raw event). */
export interface HostToolResult {
  readonly kind: 'host_tool_result';
  readonly toolUseId: string;
  /** The result text (blocks joined). */
  readonly content: string;
  readonly isError: boolean;
}

/**
 * A tool use the host asked for: `caller` for a custom tool the Session runs, `host` for one the
 * host runs itself (which may wait for the caller's confirmation). Reported by hosts whose turn
 * may be split across stream attachments, so a `requires_action` whose uses came earlier is
 * answered from the request's history.
 */
export interface HostToolUse {
  readonly kind: 'tool_use';
  readonly runBy: 'caller' | 'host';
  readonly use: ToolUse;
}

/** The host's record that a tool use was answered: by a posted `result`, or by a `confirmation` decision. */
export interface HostToolAnswered {
  readonly kind: 'tool_answered';
  readonly toolUseId: string;
  readonly by: 'result' | 'confirmation';
}

/**
 * The event closes a turn (a streaming host; a request/response host's turn ends with its batch).
 * With `requiresAction`, the turn stops for the caller: `toolUseIds` are the tool uses it names,
 * in order; absent, it names every tool use before it.
 */
export interface HostTurnEnd {
  readonly kind: 'turn_end';
  readonly requiresAction?: { readonly toolUseIds?: readonly string[] };
}

/** Decodes nothing: the shared empty answer of `decode` (allocation-free on the hot path). */
export const NO_HOST_EVENTS: readonly HostEvent[] = Object.freeze([]);

/**
 * The caller's decision on a tool use that waits for confirmation, as `sendEvent` takes it:
 * `{ type: 'user.tool_confirmation', tool_use_id, result: 'allow' | 'deny', deny_message? }`
 * (the shape Claude Managed Agents takes, so one call answers a host-run tool's confirmation and a
 * local tool's approval alike, with any provider). Undefined for any other event. Never throws.
 */
export function toolConfirmationOf(event: RawEvent): ToolConfirmation | undefined {
  const toolUseId = event['tool_use_id'];
  if (event['type'] !== 'user.tool_confirmation' || typeof toolUseId !== 'string') return undefined;
  const denyMessage = event['deny_message'];
  return { toolUseId, allow: event['result'] === 'allow', ...(typeof denyMessage === 'string' ? { denyMessage } : {}) };
}
