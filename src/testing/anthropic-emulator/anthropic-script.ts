/**
 * Script model of the Anthropic Messages emulator: the turns `POST /v1/messages` requests play,
 * and the faults injected into them.
 */

/** One tool use of a scripted turn. */
export interface AnthropicEmulatorToolUse {
  /** Default `toolu_e<request>_<i>` (`request`: the 0-based index among `/v1/messages` requests). */
  readonly id?: string;
  readonly name: string;
  /** The tool input, sent as the `tool_use` block's `input` (streamed as `input_json_delta` pieces). */
  readonly input: Readonly<Record<string, unknown>>;
}

/** Token counts of a scripted turn, as the API reports them in `usage`. */
export interface AnthropicEmulatorUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  /** Default 0. */
  readonly cache_read_input_tokens?: number;
  /** Default 0. */
  readonly cache_creation_input_tokens?: number;
}

/**
 * One scripted model answer, consumed by one successfully served `/v1/messages` request. Its
 * content blocks come in the API's order: a `thinking` block, a `text` block, then one `tool_use`
 * block per tool use.
 */
export interface AnthropicEmulatorTurn {
  /**
   * Extended thinking before the answer: a `thinking` block with a deterministic `signature`
   * (derived from the text, so the emulator can check it when a client sends the block back);
   * streamed as several `thinking_delta` events, then one `signature_delta`.
   */
  readonly thinking?: string;
  /** Assistant text; streamed as several small `text_delta` events. */
  readonly text?: string;
  /** Tool uses (parallel when more than one). */
  readonly toolUses?: readonly AnthropicEmulatorToolUse[];
  /** Default `tool_use` when there are tool uses, else `end_turn`. */
  readonly stopReason?: string;
  /** Default: a deterministic estimate (characters / 4), cache counts 0. */
  readonly usage?: AnthropicEmulatorUsage;
}

/**
 * What goes wrong with one `/v1/messages` request (after its headers and body passed the checks).
 * A faulted request never consumes its turn. `afterEvents` counts the SSE events written before
 * the fault (`ping` included). The stream faults are meant for streamed requests; a non-streamed
 * request gets their nearest equivalent, as noted on each.
 */
export type AnthropicEmulatorFault =
  /**
   * Answer with this status and an Anthropic error body (`{"type":"error","error":{type,message}}`,
   * the type from the status: 429 `rate_limit_error`, 529 `overloaded_error`, 500 `api_error`…),
   * or with `body` verbatim (a string) or as JSON; `retryAfter` sets the `retry-after` header.
   */
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string | number; readonly message?: string; readonly body?: unknown }
  /** Never answer (no status line, no headers) until the client leaves or `close()`. */
  | { readonly kind: 'hang' }
  /**
   * Stream `afterEvents` events, then write nothing more and keep the socket open (until the
   * client leaves or `close()`). Non-streamed: the status line and headers, then nothing.
   */
  | { readonly kind: 'stall'; readonly afterEvents: number }
  /** Stream `afterEvents` events (flushed), then destroy the socket. Non-streamed: destroy it unanswered. */
  | { readonly kind: 'drop'; readonly afterEvents: number }
  /**
   * Stream `afterEvents` events, then a `content_block_delta` event whose data line is not JSON,
   * then the rest. Non-streamed: a 200 whose JSON body is cut short.
   */
  | { readonly kind: 'malformed_event'; readonly afterEvents: number }
  /**
   * Stream `afterEvents` events, then an in-stream `event: error` with
   * `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, and end the
   * response (as the API does when it is overloaded mid-stream). Non-streamed: HTTP 529 with that body.
   */
  | { readonly kind: 'error_event'; readonly afterEvents: number };

/** The `error.type` the Anthropic API gives a status. */
export function errorTypeForStatus(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    500: 'api_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  };
  return types[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** The message the Anthropic API gives an error status of a fault that does not name one. */
export function defaultErrorMessage(status: number): string {
  if (status === 401) return 'invalid x-api-key';
  if (status === 429) return 'Number of request tokens has exceeded your per-minute rate limit.';
  if (status === 529) return 'Overloaded';
  if (status >= 500) return 'Internal server error';
  return `Emulated error with status ${status}.`;
}
