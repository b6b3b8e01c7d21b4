import type { AgUiEvent } from './agui-event.js';

/**
 * The items `toAgUi` opens while a turn streams and closes at the turn's end (or the run's): the
 * reasoning message and the tool calls whose arguments arrive as fragments. Per subscription,
 * like the translator that owns them; nothing here throws on malformed input.
 */

/**
 * `name` of the CUSTOM event that follows a streamed call's TOOL_CALL_END when the arguments the
 * turn's end gives the call are not the ones its TOOL_CALL_ARGS fragments spelled out (AG-UI
 * cannot take back an ARGS fragment). `value` `{ toolCallId, args }`: `args` is the JSON text of
 * the input the tool is run with.
 */
export const TOOL_CALL_ARGS_REPLACED_EVENT = 'agentrx.tool_call_args_replaced';

/** Sets `timestamp` on an event the translator just built (no copy: it is not shared yet). */
export function stamp<E extends AgUiEvent>(event: E, at: number | undefined): E {
  if (at !== undefined) (event as { timestamp?: number }).timestamp = at;
  return event;
}

/**
 * The reasoning message of the turn in progress: one at a time, opened (REASONING_START, then
 * REASONING_MESSAGE_START with role `reasoning`, same id) by its first fragment and closed
 * (REASONING_MESSAGE_END, REASONING_END) as soon as anything else of the turn starts, so the
 * thinking precedes the answer it led to. A later fragment with the same id opens it again.
 */
export class ReasoningStream {
  private openId: string | undefined;

  /** True while a reasoning message is open. */
  get isOpen(): boolean {
    return this.openId !== undefined;
  }

  /** The events of one fragment: the opening pair first when `messageId` is not the open message (which is closed first). */
  delta(text: string, messageId: string, at: number | undefined): AgUiEvent[] {
    const events: AgUiEvent[] = [];
    if (this.openId !== messageId) {
      this.close(at, events);
      this.openId = messageId;
      events.push(stamp({ type: 'REASONING_START', messageId }, at), stamp({ type: 'REASONING_MESSAGE_START', messageId, role: 'reasoning' }, at));
    }
    events.push(stamp({ type: 'REASONING_MESSAGE_CONTENT', messageId, delta: text }, at));
    return events;
  }

  /** Appends the closing pair to `into` when a message is open. */
  close(at: number | undefined, into: AgUiEvent[]): void {
    const messageId = this.openId;
    if (messageId === undefined) return;
    this.openId = undefined;
    into.push(stamp({ type: 'REASONING_MESSAGE_END', messageId }, at), stamp({ type: 'REASONING_END', messageId }, at));
  }
}

/** A tool use as the turn's end gives it (checked field by field: envelopes come from outside). */
interface FinalCall {
  readonly input?: unknown;
  readonly inputError?: unknown;
}

/**
 * Tool calls whose arguments stream: each is opened (TOOL_CALL_START with its parent message) at
 * its first fragment, gets one TOOL_CALL_ARGS per non-empty fragment, and is closed
 * (TOOL_CALL_END) by the turn's end, or by the run's end when the turn never names it.
 */
export class StreamedToolCalls {
  /** Open calls by id, with the argument text streamed so far. */
  private readonly open = new Map<string, { args: string }>();
  /** Calls whose first fragment had no name (TOOL_CALL_START needs one): announced whole at the turn's end instead. */
  private readonly unnamed = new Set<string>();

  /** True while any call is open. */
  get size(): number {
    return this.open.size;
  }

  /** True when `toolCallId` is open (streamed, not closed yet). */
  has(toolCallId: string): boolean {
    return this.open.has(toolCallId);
  }

  /**
   * The events of one fragment. Nothing for a call that cannot stream: one whose first fragment
   * had no name, or one `closed` says was already announced in this run (a late fragment must not
   * reopen it).
   */
  delta(
    fragment: { readonly toolCallId: string; readonly name: string | undefined; readonly argsDelta: string; readonly parentMessageId: string | undefined },
    closed: (toolCallId: string) => boolean,
    at: number | undefined,
  ): AgUiEvent[] {
    const { toolCallId, argsDelta } = fragment;
    let call = this.open.get(toolCallId);
    const events: AgUiEvent[] = [];
    if (call === undefined) {
      if (this.unnamed.has(toolCallId) || closed(toolCallId)) return events;
      if (fragment.name === undefined) {
        this.unnamed.add(toolCallId);
        return events;
      }
      call = { args: '' };
      this.open.set(toolCallId, call);
      const parent = fragment.parentMessageId;
      events.push(
        stamp({ type: 'TOOL_CALL_START', toolCallId, toolCallName: fragment.name, ...(parent !== undefined ? { parentMessageId: parent } : {}) }, at),
      );
    }
    if (argsDelta.length > 0) {
      call.args += argsDelta;
      events.push(stamp({ type: 'TOOL_CALL_ARGS', toolCallId, delta: argsDelta }, at));
    }
    return events;
  }

  /**
   * Closes the streamed call `toolCallId` as the turn's end gives it (`final`), appending to
   * `into` its TOOL_CALL_END, then a CUSTOM {@link TOOL_CALL_ARGS_REPLACED_EVENT} when the
   * streamed arguments are not `final.input`. Returns false (and appends nothing) for a call that
   * did not stream.
   */
  end(toolCallId: string, final: FinalCall, at: number | undefined, into: AgUiEvent[]): boolean {
    const call = this.open.get(toolCallId);
    if (call === undefined) return false;
    this.open.delete(toolCallId);
    into.push(stamp({ type: 'TOOL_CALL_END', toolCallId }, at));
    if (!argsMatch(call.args, final)) {
      const args = safeStringify(final.input);
      if (args !== undefined) into.push(stamp({ type: 'CUSTOM', name: TOOL_CALL_ARGS_REPLACED_EVENT, value: { toolCallId, args } }, at));
    }
    return true;
  }

  /** Closes every open call (TOOL_CALL_END, in opening order) into `into`; returns their ids. Forgets the unnamed ones. */
  closeAll(at: number | undefined, into: AgUiEvent[]): string[] {
    const ids = [...this.open.keys()];
    for (const toolCallId of ids) into.push(stamp({ type: 'TOOL_CALL_END', toolCallId }, at));
    this.open.clear();
    this.unnamed.clear();
    return ids;
  }
}

/**
 * Whether the streamed argument text stands for the input the call runs with: the same JSON value
 * (key order aside), an empty text for an empty object, or any text when the host could not
 * decode it (`inputError`: the text is what the model sent, and the error result says why).
 */
function argsMatch(streamed: string, final: FinalCall): boolean {
  if (typeof final.inputError === 'string') return true;
  const input = final.input;
  if (streamed.trim() === '') return isObject(input) && !Array.isArray(input) && Object.keys(input).length === 0;
  try {
    return jsonEqual(JSON.parse(streamed) as unknown, input);
  } catch {
    // Not JSON (or too deep to compare): the input the tool runs with is not what was streamed.
    return false;
  }
}

/** Deep equality of two JSON values; object key order is ignored. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!isObject(a) || !isObject(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs: readonly unknown[] = Array.isArray(b) ? b : [];
    return a.length === bs.length && a.every((v, i) => jsonEqual(v, bs[i]));
  }
  const ak = Object.keys(a);
  return ak.length === Object.keys(b).length && ak.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
}

function isObject(v: unknown): v is { readonly [key: string]: unknown } {
  return typeof v === 'object' && v !== null;
}

/** `JSON.stringify(v)` when it gives a string, else undefined (never throws). */
export function safeStringify(v: unknown): string | undefined {
  try {
    const json: unknown = JSON.stringify(v);
    return typeof json === 'string' ? json : undefined;
  } catch {
    return undefined;
  }
}
