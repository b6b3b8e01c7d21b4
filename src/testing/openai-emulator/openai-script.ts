/**
 * Script model of the OpenAI-compatible chat emulator: the model answers completion requests
 * play, the wire quirks of real OpenAI-compatible servers it can imitate, and the faults injected
 * into completion requests.
 */

/** One tool call of a scripted turn. `arguments` as a string is sent verbatim (may be invalid JSON). */
export interface EmulatorToolCall {
  /**
   * Default `call_e<completion>_<i>`. Any id may be scripted, one used before or by another call
   * of the same turn included (servers that reuse ids); the request validation then pairs each
   * `tool` message with one call of that id, in order.
   */
  readonly id?: string;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>> | string;
}

/** One scripted model answer; consumed by one successful completion request. */
export interface EmulatorTurn {
  /**
   * Reasoning the model shows before its answer, as OpenAI-compatible reasoning servers (vLLM,
   * DeepSeek, llama.cpp) send it: streamed as `delta.reasoning_content` in several small deltas
   * before any text or tool call; in a non-streamed body, `message.reasoning_content`.
   */
  readonly reasoning?: string;
  /** Assistant text; streamed in several small deltas. */
  readonly text?: string;
  /** Tool calls (parallel when more than one). */
  readonly toolCalls?: readonly EmulatorToolCall[];
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  readonly finishReason?: string;
  /** Default: a deterministic estimate (characters / 4). */
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number };
  /**
   * Answer with `choices: []` (a server that produced no answer): the body's choices are empty;
   * streamed, no chunk carries a choice (only the usage chunk, when asked), then `[DONE]`.
   */
  readonly noChoices?: boolean;
}

/** Wire quirks of real OpenAI-compatible servers (streaming unless noted). */
export interface EmulatorQuirks {
  /** The first chunk of each tool call carries `function.arguments: null`. */
  readonly nullFirstArguments?: boolean;
  /** The finish chunk also carries an empty-arguments delta (with the id repeated) for the last call. */
  readonly finishWithEmptyArgsDelta?: boolean;
  /** Chunks of parallel tool calls are interleaved round-robin by `index`. */
  readonly interleaveParallelToolCalls?: boolean;
  /** Each call's arguments lose their last character (invalid JSON); streamed and not. */
  readonly invalidJsonArguments?: boolean;
}

/** What goes wrong with one completion request. */
export type EmulatorFault =
  /** Answer with this status (OpenAI-style error body unless `body` is given); the turn is not consumed. */
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string | number; readonly body?: unknown }
  /** Never answer (no status line, no headers) until the client leaves or `close()`; the turn is not consumed. */
  | { readonly kind: 'hang' }
  /** Stream `afterChunks` chunks, then write nothing more and keep the socket open (until the client leaves or `close()`). */
  | { readonly kind: 'stall'; readonly afterChunks: number }
  /** Stream `afterChunks` chunks (flushed), then destroy the socket. */
  | { readonly kind: 'drop'; readonly afterChunks: number }
  /** Stream `afterChunks` chunks, then a `data:` line that is not JSON, then the rest. */
  | { readonly kind: 'malformed_chunk'; readonly afterChunks: number }
  /** Serve this request with these quirks. */
  | ({ readonly kind: 'quirks' } & EmulatorQuirks)
  /**
   * Answer with this status (default 200), content type and body, verbatim, whatever was asked
   * (e.g. the HTML page of a web UI or a proxy at a wrong base URL); the turn is not consumed.
   */
  | { readonly kind: 'body'; readonly status?: number; readonly contentType: string; readonly body: string }
  /**
   * Stream `afterChunks` chunks, then start a `data:` line of `bytes` bytes that never ends (no
   * line break, no blank line) and keep the socket open, writing nothing more (until the client
   * leaves or `close()`). The turn is not consumed.
   */
  | { readonly kind: 'unbounded_frame'; readonly afterChunks: number; readonly bytes: number };

/**
 * Faults per 0-based index of chat-completion requests (other endpoints don't count): an object
 * `{ 0: fault }` or a list `[fault, undefined, [fault, fault]]`.
 */
export type FaultPlan = Readonly<Record<number, EmulatorFault | readonly EmulatorFault[] | undefined>>;

/** The faults planned for completion request `completion`, as a list. */
export function faultsFor(plan: FaultPlan | undefined, completion: number): EmulatorFault[] {
  const f = plan?.[completion];
  if (f === undefined) return [];
  return Array.isArray(f) ? [...(f as readonly EmulatorFault[])] : [f as EmulatorFault];
}
