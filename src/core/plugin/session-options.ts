import type { Outcome, PriorMessage, ToolConfirmation, ToolUse, Usage } from '../model.js';
import type { InputType, JsonSchema, StandardSchemaV1, ToolHandler } from './tool-handler.js';

/**
 * What the final answer must be (`SessionOptions.outputSchema`): a class-validator DTO class, a
 * Standard Schema such as zod 4 (≥ 4.2), or a JSON Schema, of an object. `O` is what
 * `result.output` is typed as (unknown for a JSON Schema).
 */
export type OutputSchema<O = unknown> = InputType<O> | StandardSchemaV1<unknown, O> | JsonSchema;

/**
 * A guard called after every turn that would continue the loop. Return `true` (or a reason
 * string) to halt the request with a `halted` error. Checked before `maxTurns`: the guard wins.
 */
export type TurnGuard = (usage: Usage, turns: number) => boolean | string | undefined;

/**
 * Decides on a tool use the host runs itself but asks to confirm first (Claude Managed Agents'
 * `always_ask` permission policy): `true` allows it, `false` denies it, or return the decision with
 * a message for the agent. May be async (e.g. ask a person); the run timeout still applies. A
 * throw or rejection denies the tool.
 */
export type ConfirmTool = (toolUse: ToolUse) => boolean | ToolDecision | Promise<boolean | ToolDecision>;

/** A `confirmTool` decision with an optional message sent to the agent on a deny. */
export interface ToolDecision {
  readonly allow: boolean;
  readonly denyMessage?: string;
}

/** A client's result of a tool call it ran (a frontend tool): the text the model reads. */
export interface ClientToolResult {
  readonly toolUseId: string;
  readonly content: string;
  readonly isError?: boolean;
}

/**
 * The client's answers to what a stored session waits on (tool uses its ledger holds in state
 * `awaiting_client`): results of frontend tool calls, and decisions on tools that need approval.
 */
export interface ClientAnswers {
  readonly toolResults?: readonly ClientToolResult[];
  readonly confirmations?: readonly ToolConfirmation[];
}

/** Options of one session (`rx.run` / `rx.start`); `O` is the type of `result.output` (see `outputSchema`). */
export interface SessionOptions<O = unknown> {
  /** The user prompt. A fresh session sends it as the kickoff (default "Begin."). */
  readonly prompt?: string;
  /** Resume this provider session: unanswered tool uses are redriven before the prompt. */
  readonly sessionId?: string;
  /**
   * With `sessionId` and no `prompt`: the prompt to kick off with when the host turns out to hold
   * no history for the session (a session taken over before its first turn ended left nothing to
   * resume). Ignored when the host resumes it. The worker pool passes the submission's prompt.
   */
  readonly freshPrompt?: string;
  /**
   * The AG-UI thread id of the session's runs (its record keeps it, so a reader finds the log by
   * thread). Default: the provider-side session id, else a generated one. A resumed session keeps
   * the thread id its record has.
   */
  readonly threadId?: string;
  /**
   * The conversation before `prompt`, for a fresh session that continues one held elsewhere (a
   * chat client's history). A host that accepts prior messages (Local) gets them as history;
   * others get them as a delimited block before the prompt. With `sessionId` (a resume), a host
   * that accepts prior messages takes them instead of the stored conversation (the client's copy
   * is the whole conversation: a message of a request that was aborted before the model answered
   * is in it, not in the stored one), keeping the session's log, ledger and `seq`; other hosts
   * ignore them (the host holds the conversation).
   */
  readonly history?: readonly PriorMessage[];
  /**
   * The agent's state (a JSON object), shared with a client such as an AG-UI page and with tools
   * (`ctx.state`, which they may change in place). Published as an `agentrx.state_snapshot` at
   * each request's start, and each tool's changes as an `agentrx.state_delta` (JSON Patch).
   * `session.setState()` replaces it between requests.
   */
  readonly state?: Readonly<Record<string, unknown>>;
  /** Overrides the configured provider for this session. */
  readonly provider?: string;
  /** Per-request run timeout (ms). */
  readonly timeoutMs?: number;
  /** Turn limit per request (re-prompts included). */
  readonly maxTurns?: number;
  readonly signal?: AbortSignal;
  readonly turnGuard?: TurnGuard;
  /**
   * Answers the host's requests to confirm tool uses of its own. Without it, `run` fails with
   * `unresolved_requires_action` when the host asks, and a live session (`start`) emits
   * `agentrx.confirmation_required` and waits for `sendEvent({ type: 'user.tool_confirmation', … })`.
   */
  readonly confirmTool?: ConfirmTool;
  /** Success criterion for hosts that support outcomes. */
  readonly outcome?: Outcome;
  /** With `terminalTool`: an `end_turn` without a call of that tool re-prompts (`maxReprompts` times). */
  readonly requireTerminalTool?: boolean;
  readonly terminalTool?: string;
  readonly maxReprompts?: number;
  /** Keep raw events in SessionResult.events (default from config). */
  readonly retainEvents?: boolean;
  /**
   * Tools of this session only, offered to the model next to the agent's (an AG-UI client's
   * frontend tools). Needs a provider that takes its tools with every model call (`toolsPerCall`:
   * Local); a name that is taken by an agent tool, or given twice, is an `invalid_options` error.
   */
  readonly tools?: readonly ToolHandler[];
  /**
   * With `sessionId`: the client's answers to the tool uses the stored session waits on (its
   * ledger's `awaiting_client` entries), e.g. from an AG-UI client whose run answers a wait that
   * began before its endpoint restarted. Each answer must name a use that waits for that kind of
   * answer and whose wait has not timed out, else `invalid_options` (the in-process placement
   * checks before it starts anything). The resumed session records them as it redrives those
   * uses, then goes on with the host.
   */
  readonly clientAnswers?: ClientAnswers;
  /**
   * The final answer must be a JSON object matching this schema: it is parsed and validated at the
   * request's end and returned as `result.output` (typed from a DTO class or a Standard Schema).
   * A host with a native form gets the schema (Local: `response_format`); others are asked for
   * the JSON in the prompt. An answer that does not match is sent back to the model once with
   * what was wrong; a second one fails the request with `output_invalid` (its `details.problems`).
   */
  readonly outputSchema?: OutputSchema<O>;
  /** The model of this session instead of the agent's (hosts that take it per call: local, bedrock-agentcore). */
  readonly model?: string;
  /** The system prompt of this session instead of the agent's (local, bedrock-agentcore). */
  readonly instructions?: string;
  /** Sampling temperature, 0 to 2 (local; bedrock-agentcore with a model). */
  readonly temperature?: number;
  /** Nucleus sampling, above 0 and at most 1 (local; bedrock-agentcore with a model). */
  readonly topP?: number;
  /** Most tokens the model may generate per call (local, bedrock-agentcore). */
  readonly maxOutputTokens?: number;
}
