/**
 * Script model of the Gemini API emulator: the turns `generateContent` / `streamGenerateContent`
 * requests play, the faults injected into them, and Google's error bodies.
 */

/** One function call of a scripted turn. */
export interface GeminiEmulatorFunctionCall {
  /** Sent as `functionCall.id` when set (Gemini 2.5 on the Gemini API sends none). */
  readonly id?: string;
  readonly name: string;
  /** The call's arguments, sent as `functionCall.args`. */
  readonly args: Readonly<Record<string, unknown>>;
}

/** Token counts of a scripted turn, as the API reports them in `usageMetadata`. */
export interface GeminiEmulatorUsage {
  readonly promptTokenCount: number;
  readonly candidatesTokenCount: number;
  /** Omitted from `usageMetadata` when unset. */
  readonly cachedContentTokenCount?: number;
  /** Omitted from `usageMetadata` when unset. */
  readonly thoughtsTokenCount?: number;
}

/**
 * One scripted model answer, consumed by one successfully served generate request. Its parts come
 * in the API's order: the thought summary, the text, then one `functionCall` part per call.
 */
export interface GeminiEmulatorTurn {
  /**
   * A thought summary: a part with `thought: true`, sent first (streamed in several pieces), only
   * when the request asks `generationConfig.thinkingConfig.includeThoughts: true` (as the API does).
   * Either way the next part carries a `thoughtSignature` (a deterministic digest of the thought),
   * as Gemini 2.5 sends it, and `thoughtsTokenCount` is reported.
   */
  readonly thought?: string;
  /** Model text; streamed as several small pieces, one chunk each. */
  readonly text?: string;
  /** Function calls (parallel when more than one); streamed whole, one chunk each, as Gemini does. */
  readonly functionCalls?: readonly GeminiEmulatorFunctionCall[];
  /** Default `STOP` (the API's finish reason for function calls too). */
  readonly finishReason?: string;
  /** Default: a deterministic estimate (characters / 4; `thoughtsTokenCount` only when a thought is scripted). */
  readonly usage?: GeminiEmulatorUsage;
}

/**
 * What goes wrong with one generate request (after its key, path and body passed the checks). A
 * faulted request never consumes its turn. `afterEvents` counts the response chunks written before
 * the fault. The stream faults are meant for `streamGenerateContent`; a `generateContent` request
 * gets their nearest equivalent, as noted on each.
 */
export type GeminiEmulatorFault =
  /**
   * Answer with this status and a Google error body (`{"error":{code,message,status}}`, the status
   * name from the code: 429 `RESOURCE_EXHAUSTED`, 500 `INTERNAL`, 503 `UNAVAILABLE`…), or with
   * `body` verbatim (a string) or as JSON. `retryAfter` (seconds) sets the `retry-after` header and
   * adds a `google.rpc.RetryInfo` detail with that `retryDelay`, as the API does on 429.
   */
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: number; readonly message?: string; readonly body?: unknown }
  /** Never answer (no status line, no headers) until the client leaves or `close()`. */
  | { readonly kind: 'hang' }
  /**
   * Stream `afterEvents` chunks, then write nothing more and keep the socket open (until the client
   * leaves or `close()`). Non-streamed: the status line and headers, then nothing.
   */
  | { readonly kind: 'stall'; readonly afterEvents: number }
  /** Stream `afterEvents` chunks (flushed), then destroy the socket. Non-streamed: destroy it unanswered. */
  | { readonly kind: 'drop'; readonly afterEvents: number }
  /**
   * Stream `afterEvents` chunks, then a `data:` line that is not JSON, then the rest.
   * Non-streamed: a 200 whose JSON body is cut short.
   */
  | { readonly kind: 'malformed_event'; readonly afterEvents: number }
  /**
   * Stream `afterEvents` chunks, then a `data:` line holding
   * `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
   * and end the response (as the API does when it is overloaded mid-stream). Non-streamed: HTTP 503 with that body.
   */
  | { readonly kind: 'error_event'; readonly afterEvents: number };

/** A Google API error body: `{"error":{"code","message","status"[,"details"]}}`. */
export interface GoogleErrorBody {
  readonly error: { readonly code: number; readonly message: string; readonly status: string; readonly details?: readonly unknown[] };
}

/** The `google.rpc.Code` name the API gives an HTTP status. */
export function googleStatusForCode(code: number): string {
  const names: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    409: 'ABORTED',
    429: 'RESOURCE_EXHAUSTED',
    499: 'CANCELLED',
    500: 'INTERNAL',
    501: 'UNIMPLEMENTED',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
  };
  return names[code] ?? (code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

/** The message the Gemini API gives an error status of a fault that does not name one. */
export function defaultErrorMessage(code: number): string {
  if (code === 429) {
    return 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.';
  }
  if (code === 500) return 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting';
  if (code === 503) return 'The model is overloaded. Please try again later.';
  if (code === 504) return 'Deadline expired before operation could complete.';
  return `Emulated error with status ${code}.`;
}

/** A Google error body for `code` (status name from the code). */
export function googleError(code: number, message: string, details?: readonly unknown[]): GoogleErrorBody {
  return { error: { code, message, status: googleStatusForCode(code), ...(details ? { details } : {}) } };
}

/** The in-stream error the API sends when the model is overloaded mid-stream (also the non-streamed `error_event` body). */
export const OVERLOADED: GoogleErrorBody = googleError(503, defaultErrorMessage(503));

/** The API's answer to a request whose key is not valid (HTTP 400). */
export const INVALID_KEY: GoogleErrorBody = googleError(400, 'API key not valid. Please pass a valid API key.', [
  {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: 'API_KEY_INVALID',
    domain: 'googleapis.com',
    metadata: { service: 'generativelanguage.googleapis.com' },
  },
  { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
]);

/** The API's answer to a request that carries no key at all (HTTP 403). */
export const MISSING_KEY: GoogleErrorBody = googleError(
  403,
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
);
