import type { CmaFilesFaultPlan } from './cma-files-store.js';
/**
 * Script model of the Claude Managed Agents emulator: what the scripted agent does on one turn,
 * and the fault plan. Event shapes follow the official `@anthropic-ai/sdk` types
 * (`resources/beta/sessions/events.d.ts`).
 */

/** A JSON object as it travels on the wire. */
export type CmaWireEvent = Record<string, unknown>;

/** One custom tool use of a scripted turn (the agent waits for its `user.custom_tool_result`). */
export interface CmaScriptToolUse {
  /** Event id of the `agent.custom_tool_use` (default: a generated `sevt_…`). Unique per emulator. */
  readonly id?: string;
  /** Tool name (one of the agent's custom tools). */
  readonly name: string;
  /** Tool input. Default `{}`. */
  readonly input?: Readonly<Record<string, unknown>>;
}

/** One server tool use (`agent.tool_use` + `agent.tool_result`): observed by the client, never run by it. */
export interface CmaScriptServerToolUse {
  /** Event id of the `agent.tool_use` (default: generated). */
  readonly id?: string;
  /** Built-in tool name, e.g. `web_search`. */
  readonly name: string;
  /** Tool input. Default `{}`. */
  readonly input?: Readonly<Record<string, unknown>>;
  /** Text of the `agent.tool_result`. Default `ok`. */
  readonly result?: string;
  /**
   * `always_ask` permission: the `agent.tool_use` carries `evaluated_permission: 'ask'`, the
   * closing `requires_action` names it, and the tool runs only after a `user.tool_confirmation`:
   * `allow` → its `agent.tool_result`; `deny` → an `agent.tool_result` with `is_error` and the
   * `deny_message` (this emulator's rendering of a denial).
   */
  readonly ask?: boolean;
  /** Make it an `agent.mcp_tool_use` of this MCP server instead of an `agent.tool_use`. */
  readonly mcpServer?: string;
}

/**
 * What the scripted agent does on one turn. A turn starts when an input arrives (a
 * `user.message` or `user.define_outcome`, or the last missing `user.custom_tool_result`) and
 * consumes the next scripted turn. Its events, in order: `session.status_running`,
 * `span.model_request_start`, the `agent.message`s, server tool uses, custom tool uses,
 * `span.model_request_end` (usage), `extra`, the outcome evaluation spans, then the closing status:
 * `requires_action` naming the custom tool uses when there are any, else `end`, else the outcome
 * verdict, else `end_turn`.
 */
export interface CmaScriptTurn {
  /** `agent.message` texts, one event each (one text block). */
  readonly text?: string | readonly string[];
  readonly toolUses?: readonly CmaScriptToolUse[];
  readonly serverToolUses?: readonly CmaScriptServerToolUse[];
  /** `span.model_request_end.model_usage` of the turn. Default `{input_tokens: 10, output_tokens: 5}`. */
  readonly usage?: { readonly input_tokens: number; readonly output_tokens: number };
  /**
   * Outcome grading: one `span.outcome_evaluation_start`/`_end` pair per verdict (`result` field,
   * as in the official types). The closing idle's `stop_reason.type` is the last verdict
   * (`idle: 'verdict'`, the default) or `end_turn` (`idle: 'end_turn'`).
   */
  readonly outcome?: { readonly verdicts: readonly string[]; readonly idle?: 'verdict' | 'end_turn' };
  /** Closing status when there are no custom tool uses: an idle `stop_reason`, `session.status_terminated`, or a `session.error`. */
  readonly end?: { readonly stopReason: CmaWireEvent } | { readonly terminated: true } | { readonly error: CmaWireEvent };
  /** Extra raw events (any type, unknown ones included), emitted verbatim (plus `id`/`processed_at` when absent) before the closing status. */
  readonly extra?: readonly CmaWireEvent[];
  /** The agent works this long (ms) before the turn's events after `session.status_running`; heartbeats keep flowing. */
  readonly thinkMs?: number;
  /** Preview each `agent.message` with `event_start`/`event_delta` on streams that asked for `event_deltas`. */
  readonly previews?: boolean;
}

/** A failure of one POST. */
export type CmaPostFault =
  /** Answer this status without processing the request (nothing took effect). */
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: number | string; readonly body?: unknown }
  /** Process the request, then destroy the connection without answering (an ambiguous outcome). */
  | { readonly kind: 'drop_after_accept' };

/** A failure of one GET (stream or list). */
export type CmaGetFault = { readonly kind: 'status'; readonly status: number; readonly retryAfter?: number | string };

/**
 * Faults of an emulator. Event-frame counts are 1-based and global over every stream the
 * emulator serves (duplicates re-sent on re-attach and previews are not counted); each drop,
 * stall and malformed frame fires once.
 */
export interface CmaFaultPlan {
  /** Drop the stream right after event frame `after` (0 = right after it opened): `error` destroys the connection mid-body, `close` ends the body cleanly. */
  readonly drops?: readonly { readonly after: number; readonly kind: 'error' | 'close' }[];
  /** After event frame `n`, write nothing more on that stream (no heartbeats either) and keep it open. */
  readonly stallAfter?: number;
  /** Write a frame whose data is not JSON right before event frame `n`. */
  readonly malformedFrameBefore?: number;
  /**
   * Right before event frame `before`, start a frame (`event: message`, `data: ` and `bytes` of
   * JSON-ish text) that never ends: no line break, no blank line. Then write nothing more on that
   * stream (no heartbeats either) and keep it open, as a broken or hostile server would.
   */
  readonly unboundedFrame?: { readonly before: number; readonly bytes: number };
  /** On every attach after a session's first (every attach of a seeded session), re-send its last `n` history events first (duplicates). */
  readonly duplicateOnReattach?: number;
  /** 0-based script-turn indexes whose first `requires_action` names only the first custom tool use (the rest are re-asked after its result: a split batch). */
  readonly splitBatchTurns?: readonly number[];
  /** 0-based script-turn indexes: when results for the turn's tool uses arrive, emit a stale `requires_action` idle re-naming them before the echo. */
  readonly staleIdleTurns?: readonly number[];
  /** Echo `user.custom_tool_result` on the stream only after the next closing idle (history has it at once). */
  readonly lateEcho?: boolean;
  /** By 0-based index of `POST /v1/sessions/{id}/events` requests. */
  readonly sendFaults?: Readonly<Record<number, CmaPostFault>>;
  /** By 0-based index of create requests per collection. */
  readonly createFaults?: {
    readonly sessions?: Readonly<Record<number, CmaPostFault>>;
    readonly agents?: Readonly<Record<number, CmaPostFault>>;
    readonly environments?: Readonly<Record<number, CmaPostFault>>;
  };
  /** By 0-based index of archive requests per collection (`POST /v1/{agents|environments}/{id}/archive`): answered without archiving. */
  readonly archiveFaults?: { readonly agents?: Readonly<Record<number, CmaGetFault>>; readonly environments?: Readonly<Record<number, CmaGetFault>> };
  /** By 0-based index of stream requests. */
  readonly streamFaults?: Readonly<Record<number, CmaGetFault>>;
  /** By 0-based index of `GET /v1/sessions/{id}/events` (list) requests. */
  readonly listFaults?: Readonly<Record<number, CmaGetFault>>;
  /** Every list page after the first answers the same `next_page` again (a cursor loop). */
  readonly repeatCursor?: boolean;
  /** Faults of the Files API routes (list without `data`, statuses, slow downloads). */
  readonly files?: CmaFilesFaultPlan;
}
