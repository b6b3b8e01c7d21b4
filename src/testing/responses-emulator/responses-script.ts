/**
 * Script model of the OpenAI Responses emulator: the turns `POST /v1/responses` requests play, the
 * faults injected into them, and OpenAI's error bodies.
 */

/** One function call of a scripted turn. */
export interface ResponsesEmulatorFunctionCall {
  /** Default `call_e<request>_<i>` (`request`: the 0-based index among `/v1/responses` requests). */
  readonly callId?: string;
  readonly name: string;
  /**
   * The arguments: an object is sent as its JSON text, a string verbatim (so a test may script
   * arguments that are not JSON). Streamed as several `response.function_call_arguments.delta` pieces.
   */
  readonly arguments: Readonly<Record<string, unknown>> | string;
}

/** Token counts of a scripted turn, as the API reports them in `usage`. */
export interface ResponsesEmulatorUsage {
  readonly input_tokens: number;
  /** Reasoning tokens included, as in the API. */
  readonly output_tokens: number;
  /** `input_tokens_details.cached_tokens`; default 0. */
  readonly cached_tokens?: number;
  /** `output_tokens_details.reasoning_tokens`; default 0. */
  readonly reasoning_tokens?: number;
}

/**
 * One scripted model answer, consumed by one successfully served `/v1/responses` request. Its
 * output items come in the API's order: a `reasoning` item, a `message` item, then one
 * `function_call` item per function call.
 */
export interface ResponsesEmulatorTurn {
  /**
   * Reasoning before the answer: a `reasoning` item (`rs_e<request>_0`) whose summary is this text
   * (streamed as several `response.reasoning_summary_text.delta` events). The item carries an
   * opaque `encrypted_content` when the request's `include` asks for `reasoning.encrypted_content`
   * (as the API does); the emulator verifies it when the item is sent back. Unlike the API, which
   * summarizes only when `reasoning.summary` is asked for, the summary is always given.
   */
  readonly reasoning?: string;
  /** Assistant text: a `message` item with one `output_text` part; streamed as several small deltas. */
  readonly text?: string;
  /** Function calls (parallel when more than one). */
  readonly functionCalls?: readonly ResponsesEmulatorFunctionCall[];
  /** Default: a deterministic estimate (characters / 4), cached and reasoning counts 0. */
  readonly usage?: ResponsesEmulatorUsage;
  /**
   * Default `completed`. `incomplete` gives `incomplete_details: {reason: 'max_output_tokens'}`, a
   * message item of status `incomplete`, and (streamed) a final `response.incomplete` event.
   */
  readonly status?: 'completed' | 'incomplete';
}

/**
 * What goes wrong with one `/v1/responses` request (after its headers and body passed the checks).
 * A faulted request never consumes its turn. `afterEvents` counts the SSE events written before
 * the fault. The stream faults are meant for streamed requests; a non-streamed request gets their
 * nearest equivalent, as noted on each.
 */
export type ResponsesEmulatorFault =
  /**
   * Answer with this status and an OpenAI error body (`{"error":{message,type,param,code}}`: 429
   * `rate_limit_exceeded`, 500 `server_error`, 503 overloaded…), or with `body` verbatim (a string)
   * or as JSON; `retryAfter` sets the `retry-after` header.
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
   * Stream `afterEvents` events, then a `response.output_text.delta` event whose data line is not
   * JSON, then the rest. Non-streamed: a 200 whose JSON body is cut short.
   */
  | { readonly kind: 'malformed_event'; readonly afterEvents: number }
  /**
   * Stream `afterEvents` events, then an in-stream `event: error` with
   * `{"type":"error","code":"server_error","message":…,"param":null,"sequence_number":n}`, and end
   * the response. Non-streamed: HTTP 500 with the `server_error` body.
   */
  | { readonly kind: 'error_event'; readonly afterEvents: number; readonly message?: string }
  /**
   * Stream `afterEvents` events, then a `response.failed` event whose response has `status:
   * 'failed'`, `error: {code: 'server_error', message}` and the output items finished so far, and
   * end the response. Non-streamed: a 200 `response` object of status `failed` with no output.
   */
  | { readonly kind: 'failed'; readonly afterEvents: number; readonly message?: string };

/** The message of an in-stream error or failed response whose fault does not name one. */
export const SERVER_ERROR_MESSAGE = 'The server had an error while processing your request. Sorry about that!';

/** An OpenAI error body: `{"error":{message,type,param,code}}`. */
export function errorBody(message: string, type: string, param: string | null = null, code: string | null = null): Record<string, unknown> {
  return { error: { message, type, param, code } };
}

/** The error body OpenAI gives a status of a fault that does not name a body. */
export function statusErrorBody(status: number, message?: string): Record<string, unknown> {
  if (status === 401) return errorBody(message ?? 'Incorrect API key provided.', 'invalid_request_error', null, 'invalid_api_key');
  if (status === 429) {
    return errorBody(message ?? 'Rate limit reached for requests. Please try again later.', 'requests', null, 'rate_limit_exceeded');
  }
  if (status === 503) return errorBody(message ?? 'The engine is currently overloaded, please try again later.', 'server_error', null, 'server_overloaded');
  if (status >= 500) return errorBody(message ?? SERVER_ERROR_MESSAGE, 'server_error', null, 'server_error');
  return errorBody(message ?? `Emulated error with status ${status}.`, 'invalid_request_error');
}
