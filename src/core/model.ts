/** Provider-native event, kept verbatim. Providers tag most events with a string `type`. */
export type RawEvent = { readonly [key: string]: unknown };

/** Token counts. Summed per turn by providers and per session by the Session. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0 });
export const addUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
});

/** A tool call the model asked for. */
export interface ToolUse {
  /** The host's tool-use id: the ledger and idempotency key. */
  readonly id: string;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
  /**
   * Set when the host sent arguments that could not be decoded (e.g. invalid JSON). The tool is
   * not run; the model gets an `is_error` result carrying this text.
   */
  readonly inputError?: string;
}

/** What the model is told of a tool use no recorded result answers (a resume, a client's history with an open call). */
export const NO_RESULT_TEXT = 'No result was recorded for this tool call.';

/** {@link NO_RESULT_TEXT} as the error content of an OpenAI-style tool message (what Local sends for an error result). */
export const NO_RESULT_CONTENT = JSON.stringify({ error: NO_RESULT_TEXT, isError: true });

/** The answer to one ToolUse, as posted back to the host. */
export interface ToolResult {
  readonly toolUseId: string;
  /** Result text the model reads. */
  readonly content: string;
  readonly isError: boolean;
  /**
   * Set when `content` is the JSON text of the value the tool returned (the dispatcher sets it),
   * so consumers can get the value back (`onToolResult`'s `result.value`) instead of the text.
   */
  readonly json?: true;
}

/** How a turn ended. */
export type TurnTerminal = 'end_turn' | 'requires_action' | 'terminated';

/** The canonical outcome of one turn (the provider contract's `TurnResult`). Normalization is additive. */
export interface TurnResult {
  readonly terminal: TurnTerminal;
  /** The host's raw stop reason, verbatim (string, object or undefined). */
  readonly stopReason: unknown;
  readonly text: string;
  /** Tool uses the caller must run locally, in call order. */
  readonly customToolUses: readonly ToolUse[];
  /** Tool uses the host ran itself: observed, never dispatched. */
  readonly serverToolUses: readonly ToolUse[];
  readonly usage: Usage;
  /** Raw events of the turn, verbatim and in arrival order. */
  readonly events: readonly RawEvent[];
  /**
   * `requires_action` with no custom tool uses because the provider already answered every call
   * itself (e.g. duplicate calls answered in history). The Session continues with an empty
   * resume instead of failing with `unresolved_requires_action`.
   */
  readonly continueWithoutTools?: boolean;
  /**
   * The tool-use ids the boundary event names (Claude Managed Agents `stop_reason.event_ids`),
   * in order. When none of them is in the batch and none is unanswered in the history, the
   * Session answers the re-ask from the ledger's recorded results instead of failing.
   */
  readonly requestedToolUseIds?: readonly string[];
  /**
   * `requires_action`: tool uses the host runs itself but that wait for the caller to allow or
   * deny them first (Claude Managed Agents' `always_ask` permission policy), in the order the
   * boundary names them. The Session answers them with the `confirmTool` session option.
   */
  readonly confirmationToolUses?: readonly ToolUse[];
}

/** The caller's decision on a host-run tool use that waits for confirmation. */
export interface ToolConfirmation {
  readonly toolUseId: string;
  readonly allow: boolean;
  /** Sent with a deny, to tell the agent why. */
  readonly denyMessage?: string;
}

/** What a whole session request produced. */
export interface SessionResult<O = unknown> extends Omit<TurnResult, 'usage' | 'events' | 'customToolUses' | 'serverToolUses'> {
  /**
   * The final answer: the text of the request's last turn (earlier turns' texts are in `texts`).
   * `stopReason`, `terminal` and `continueWithoutTools` are the last turn's too.
   */
  readonly text: string;
  /** The text of each turn of the request, in order (empty strings included); the last is `text`. */
  readonly texts: readonly string[];
  /** Every custom tool use of the request, all turns, in call order. */
  readonly customToolUses: readonly ToolUse[];
  /** Every tool use the host ran itself during the request, all turns, in order. */
  readonly serverToolUses: readonly ToolUse[];
  readonly sessionId: string | undefined;
  readonly provider: string;
  /** Turns taken in this request (re-prompts included). */
  readonly turns: number;
  /** Usage summed over the request's turns. */
  readonly usage: Usage;
  /** The provider's client-held history, verbatim, when it keeps one (Local); else undefined. */
  readonly transcript: readonly RawEvent[] | undefined;
  /** Raw provider events of the request (never normalized text deltas); see `retainEvents`. */
  readonly events: readonly RawEvent[];
  /**
   * With `outputSchema`: the final answer, parsed as JSON and validated (a DTO instance for a
   * class, the Standard Schema's output, or the object itself for a JSON Schema). Else undefined.
   */
  readonly output?: O;
}

/**
 * Model settings of one session (`SessionOptions.model`, `instructions`, sampling), as a provider
 * receives them (`OpenOptions.settings`): they override the agent's for this session only and
 * never change what is provisioned.
 */
export interface RunSettings {
  readonly model?: string;
  /** The system prompt, instead of the agent's. */
  readonly instructions?: string;
  readonly temperature?: number;
  readonly topP?: number;
  /** Most tokens the model may generate per call. */
  readonly maxOutputTokens?: number;
  /**
   * The JSON Schema (an object schema) the final answer must match, for a host that takes it
   * natively (`nativeOutputSchema`); the Session validates the answer either way.
   */
  readonly outputSchema?: Readonly<Record<string, unknown>>;
}

/** A per-session model setting a provider may take (`ProviderBase.runSettings`). */
export type RunSetting = Exclude<keyof RunSettings, 'outputSchema'>;

/**
 * One message of an earlier conversation carried into a fresh session (`SessionOptions.history`:
 * a chat client's history, an AG-UI thread the server does not know).
 */
export interface PriorMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  /** The text ('' for an assistant message that only calls tools). */
  readonly content: string;
  /** assistant: the tool calls it made (`arguments`: JSON text, as the model wrote it). */
  readonly toolCalls?: readonly { readonly id: string; readonly name: string; readonly arguments: string }[];
  /** tool: the id of the call it answers. */
  readonly toolCallId?: string;
}

/** The agent the host runs: what `provision` creates. */
export interface AgentSpec {
  readonly name: string;
  readonly model?: string;
  readonly systemPrompt?: string;
  /** Tool declarations sent to the host (generated from the bound ToolHandlers). */
  readonly tools: readonly ToolDeclaration[];
}

/** What the host sees of a tool: never its code or data. */
export interface ToolDeclaration {
  readonly name: string;
  readonly description: string;
  /** JSON Schema (draft-07 object schema) of the input. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** A success criterion for hosts that grade their own work (Claude Managed Agents outcomes). */
export interface Outcome {
  readonly description: string;
  /** Markdown rubric. */
  readonly rubric: string;
  readonly maxIterations?: number;
}
