import { inspect } from 'node:util';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min, MinLength } from '../../../core/util/class-validator.js';
import { IsStringRecord } from '../../../core/config/config-section.js';

/** Default `maxFrameBytes` of the `local` provider: 8 MiB. */
export const DEFAULT_LOCAL_MAX_FRAME_BYTES = 8 * 1024 * 1024;

/** Token under which the validated `LocalProviderOptionsClass` instance is bound (`toConstantValue`). */
export const LocalProviderOptions = Symbol('LocalProviderOptions');

/** Validated options of the `local` provider (config section `local`). */
export type LocalProviderOptions = LocalProviderOptionsClass;

/** The model APIs the Local loop speaks (`api`). */
export const LOCAL_MODEL_APIS = ['openai-chat', 'anthropic-messages', 'openai-responses', 'gemini'] as const;

/** One of {@link LOCAL_MODEL_APIS}. */
export type LocalModelApiId = (typeof LOCAL_MODEL_APIS)[number];

/** Options of the `local` provider: any OpenAI-compatible `/v1/chat/completions` endpoint, or the Anthropic Messages API. */
export class LocalProviderOptionsClass {
  /**
   * The model API: `openai-chat` (`POST <baseUrl>/chat/completions`, any OpenAI-compatible
   * server), `anthropic-messages` (`<baseUrl>/messages`, baseUrl `https://api.anthropic.com/v1`;
   * the key as `x-api-key`), `openai-responses` (`<baseUrl>/responses`, baseUrl
   * `https://api.openai.com/v1`; `store: false`, encrypted reasoning sent back) or `gemini`
   * (`<baseUrl>/models/<model>:streamGenerateContent`, baseUrl
   * `https://generativelanguage.googleapis.com/v1beta`; the key as `x-goog-api-key`). Thinking and
   * reasoning become reasoning events, and what the API needs of them goes back with the next request.
   */
  @IsIn(LOCAL_MODEL_APIS)
  api: LocalModelApiId = 'openai-chat';

  /** Endpoint prefix up to and including `/v1` (Ollama's default; vLLM and llama.cpp use `:8000/v1`, `:8080/v1`). */
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  baseUrl: string = 'http://127.0.0.1:11434/v1';

  /** Sent as `Authorization: Bearer <apiKey>` (`anthropic-messages`: `x-api-key`). Never logged, never in an error message or `inspect` output. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  apiKey?: string;

  /** Model name; `AgentSpec.model`, when set, takes precedence. */
  @IsString()
  @MinLength(1)
  model: string = 'llama3.1';

  /** Extra headers sent on every request (gateways, tenancy). Values are never logged. */
  @IsOptional()
  @IsStringRecord()
  headers?: Record<string, string>;

  /** Stream the answer (SSE) so text arrives live; `false` = one buffered response per turn. */
  @IsBoolean()
  stream: boolean = true;

  /**
   * Wait for a response in ms: the response headers when streaming, the whole response otherwise.
   * Exceeding it is a transient failure (retried).
   */
  @IsInt()
  @Min(1)
  requestTimeoutMs: number = 120_000;

  /** Longest silence between two streamed chunks, in ms; exceeding it fails the turn with `timeout`. */
  @IsInt()
  @Min(1)
  idleTimeoutMs: number = 60_000;

  /**
   * Longest SSE frame (characters of data since the last frame boundary) a streamed answer may
   * buffer. A frame that grows past it — a body that never sends the blank line ending a frame, by
   * fault or malice — fails the turn with `stream_error` ("an SSE frame exceeded maxFrameBytes")
   * instead of buffering without bound until the idle timeout. The check counts UTF-16 code units
   * of the decoded text, never more than its UTF-8 bytes, so no frame within the limit is refused.
   * Default 8 MiB (streamed chunks are a few hundred bytes).
   */
  @IsInt()
  @Min(1024)
  maxFrameBytes: number = DEFAULT_LOCAL_MAX_FRAME_BYTES;

  /** Retries of a model call after a transient failure (408/429/5xx, reset, refused, timeout). */
  @IsInt()
  @Min(0)
  @Max(20)
  maxRetries: number = 3;

  /** Backoff base in ms (equal jitter, doubling per retry); a Retry-After header wins. */
  @IsInt()
  @Min(0)
  retryBaseMs: number = 500;

  /**
   * Model calls allowed per request (a user message starts a request). The call that would reach
   * it carries a final-turn directive asking the model to answer now without tools. Unset = the
   * session's turn limit (`limits.maxTurns`, or the `maxTurns` session option).
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  maxTurns?: number;

  /** Keeps `apiKey` and header values out of `inspect` output. */
  [inspect.custom](): Record<string, unknown> {
    return this.toJSON();
  }

  /** Keeps `apiKey` and header values out of JSON dumps. */
  toJSON(): Record<string, unknown> {
    return {
      ...Object.fromEntries(Object.entries(this)),
      apiKey: this.apiKey === undefined ? undefined : '[redacted]',
      headers: this.headers === undefined ? undefined : Object.fromEntries(Object.keys(this.headers).map((k) => [k, '[redacted]'])),
    };
  }
}

/** The `local` config section: validated when `provider` is `local`. */
export const localConfigSection = {
  key: 'local',
  options: LocalProviderOptionsClass,
  token: LocalProviderOptions,
  required: (cfg: Readonly<Record<string, unknown>>): boolean => cfg['provider'] === 'local',
};
