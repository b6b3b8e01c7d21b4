import { inspect } from 'node:util';
import type { BedrockAgentCoreClient, InvokeHarnessCommandInput } from '@aws-sdk/client-bedrock-agentcore';
import { AgentRxError, isAgentRxError, type ErrorCode } from '../../../core/errors.js';
import { isTransientStatus, withRetry, type RetryAttemptInfo } from '../../../core/http/retry.js';
import type { Logger } from '../../../core/logger.js';
import type { RawEvent } from '../../../core/model.js';
import { httpStatusOf, isThrottlingName, isTransportError } from './agentcore-clients.js';
import { cleanSdkMessage, decodeFailureOf, HarnessExceptionFrame } from './agentcore-frames.js';
import type { AgentCoreDataSdk } from './agentcore-sdk.js';
import type { AgentCoreProviderOptions } from './agentcore.config.js';

/** `type` of the marker event that follows a failed invoke attempt that will be retried. */
export const ATTEMPT_FAILED = 'agentcore.attempt_failed';
/** `type` of the event that reports an exception frame of the stream (emitted just before the error). */
export const STREAM_EXCEPTION = 'agentcore.stream_exception';

/** Raw events the provider synthesizes; every other raw event is a Converse event exactly as the SDK decoded it. */
export type AgentCoreSyntheticEvent =
  /** A failed attempt; the invoke is sent again after `retryInMs`. `normalize` counts only events after the last marker. */
  | {
      readonly type: typeof ATTEMPT_FAILED;
      readonly attempt: number;
      readonly maxAttempts: number;
      readonly code: ErrorCode;
      readonly reason: string;
      readonly retryInMs: number;
    }
  /** An exception frame (`:message-type: exception`) or error frame the harness sent: the turn fails with `harness_stream_error`. */
  | { readonly type: typeof STREAM_EXCEPTION; readonly exceptionType: string; readonly message: string };

/** The data-plane client and the SDK it came from (loaded lazily by the provider). */
export interface AgentCoreDataPlane {
  readonly client: BedrockAgentCoreClient;
  readonly sdk: Pick<AgentCoreDataSdk, 'InvokeHarnessCommand'>;
}

/**
 * One `InvokeHarness` of the `bedrock-agentcore` provider with its retries and error
 * classification. An invoke has no idempotency token and cannot be rejoined, so the whole invoke
 * is sent again only after a transport error, HTTP 5xx/429, an idle timeout (no frame for
 * `idleTimeoutMs`), a truncated stream (no `messageStop`), or a frame agentrx could not decode
 * (a checksum mismatch, a payload that is not JSON, broken framing), with jittered exponential
 * backoff — never after an exception frame or another 4xx. One rule holds wherever in the stream
 * the failure happens, first frame or later: a stream that can no longer be read is retried like a
 * truncated one, events already delivered included (they are followed by the marker, and
 * `normalize` counts only the last attempt).
 *
 * Errors say who failed: what the harness reported (an exception or error frame) is
 * `harness_stream_error` with `details.origin: 'host'` and the `:exception-type` kept even when
 * the body is not JSON; a frame agentrx could not decode is `stream_error` with
 * `details.origin: 'decode'` (and `decodeKind`). Each failed attempt that will be retried is
 * followed by an `agentcore.attempt_failed` marker event; an exception frame is reported as an
 * `agentcore.stream_exception` event just before the error. Holds no per-session state.
 */
export class AgentCoreInvoker {
  /** @param dataPlane The SDK data-plane client and SDK (loaded and created lazily by the provider, shared by every session). */
  constructor(
    private readonly options: AgentCoreProviderOptions,
    private readonly logger: Logger,
    private readonly dataPlane: () => Promise<AgentCoreDataPlane>,
  ) {}

  /**
   * Sends `request` and emits every decoded event through `replay`, retried as described on the
   * class; resolves after an attempt that reached `messageStop`. Rejects with the last attempt's
   * AgentRxError (`details.attempts` when retries were used up), or the abort reason of `signal`.
   */
  async invoke(request: InvokeHarnessCommandInput, signal: AbortSignal, replay: ReplayAwareEmit): Promise<void> {
    const maxAttempts = this.options.maxRetries + 1;
    const emit = replay.emit;
    try {
      await withRetry(() => this.attempt(request, signal, emit), {
        maxRetries: this.options.maxRetries,
        baseMs: this.options.retryBaseMs,
        signal,
        isRetryable: (e) => isAgentRxError(e) && e.details?.['transient'] === true,
        onRetry: (info) => {
          this.onRetry(info, maxAttempts, emit);
          replay.retrying();
        },
      });
    } catch (e) {
      if (isAgentRxError(e) && e.details?.['transient'] === true && maxAttempts > 1) {
        throw new AgentRxError(e.code, `${e.message} (gave up after ${maxAttempts} attempts)`, { ...e.details, attempts: maxAttempts }, { cause: e });
      }
      throw e;
    }
  }

  private onRetry(info: RetryAttemptInfo, maxAttempts: number, emit: (e: RawEvent) => void): void {
    const err = isAgentRxError(info.error) ? info.error : new AgentRxError('provider_error', String(info.error));
    const reason = this.redact(err.message);
    emit({ type: ATTEMPT_FAILED, attempt: info.retry, maxAttempts, code: err.code, reason, retryInMs: info.delayMs } satisfies AgentCoreSyntheticEvent);
    this.logger.warn(`bedrock-agentcore: invoke attempt ${info.retry}/${maxAttempts} failed (${err.code}); retrying in ${info.delayMs} ms`, { reason });
  }

  /** One attempt: send, then read the stream, re-arming the idle timer on every frame. */
  private async attempt(request: InvokeHarnessCommandInput, signal: AbortSignal, emit: (e: RawEvent) => void): Promise<void> {
    const ctl = new AbortController();
    const forward = (): void => ctl.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    const idleMs = this.options.idleTimeoutMs;
    let events = 0;
    let sawStop = false;
    let inStream = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        ctl.abort(
          new AgentRxError('timeout', `InvokeHarness was idle for more than ${idleMs} ms (after ${events} events)`, {
            kind: 'idle',
            idleTimeoutMs: idleMs,
            events,
            transient: true,
          }),
        );
      }, idleMs);
    };
    arm();
    try {
      const { client, sdk } = await this.dataPlane();
      const out = await client.send(new sdk.InvokeHarnessCommand(request), { abortSignal: ctl.signal });
      inStream = true;
      if (out.stream) {
        for await (const ev of out.stream) {
          arm();
          events++;
          if (ev.messageStop !== undefined) sawStop = true;
          // The SDK types each event as an interface, which no index signature accepts: a shallow
          // copy is the same event, verbatim, as the plain record it is on the wire.
          emit({ ...ev });
        }
      }
    } catch (e) {
      if (ctl.signal.aborted) {
        const r: unknown = ctl.signal.reason;
        throw r instanceof AgentRxError ? r : new AgentRxError('cancelled', 'The invoke was cancelled');
      }
      throw this.invokeError(e, events, inStream, emit);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', forward);
    }
    if (!sawStop) {
      throw new AgentRxError('early_termination', `The InvokeHarness stream ended without messageStop after ${events} events (truncated)`, {
        events,
        transient: true,
      });
    }
  }

  /** Classifies an SDK error of one attempt (see the class doc for what is transient and who is blamed). */
  private invokeError(e: unknown, events: number, inStream: boolean, emit: (ev: RawEvent) => void): AgentRxError {
    if (isAgentRxError(e)) return e;
    const o = (typeof e === 'object' && e !== null ? e : {}) as { name?: unknown; message?: unknown; code?: unknown; $fault?: unknown };
    const name = typeof o.name === 'string' ? o.name : 'Error';
    const message = this.redact(cleanSdkMessage(typeof o.message === 'string' ? o.message : String(e)));
    const status = httpStatusOf(e);
    if (status !== undefined) {
      const transient = isTransientStatus(status) || isThrottlingName(name);
      return new AgentRxError('http_error', `InvokeHarness returned HTTP ${status} ${name}: ${message}`, { status, errorType: name, events, transient });
    }
    if (isTransportError(e)) {
      return events > 0
        ? new AgentRxError('early_termination', `The InvokeHarness stream broke off after ${events} events: ${message}`, { events, transient: true })
        : new AgentRxError('http_error', `InvokeHarness failed: ${message}`, { errorType: name, events, transient: true });
    }
    if (e instanceof HarnessExceptionFrame) return this.hostError(e.exceptionType, this.redact(e.detail), events, emit);
    const decode = decodeFailureOf(e, inStream);
    if (decode) {
      // Not the host's words: a frame agentrx could not read. Retried like a truncated stream.
      return new AgentRxError(
        'stream_error',
        `agentrx could not decode the InvokeHarness event stream after ${events} events (${decode.kind}): ${this.redact(decode.reason)}. This is not an error the harness reported; the frame was damaged or in a shape this SDK version cannot read`,
        { origin: 'decode', decodeKind: decode.kind, ...(decode.eventType !== undefined ? { eventType: decode.eventType } : {}), events, transient: true },
      );
    }
    if (o.$fault !== undefined || (name !== 'Error' && o.code === undefined)) {
      // An exception (or error) frame of the event stream: the SDK throws it as a modeled
      // exception, or as an Error named after an unmodeled `:exception-type` / `:error-code`.
      return this.hostError(name, messageOfBody(message), events, emit);
    }
    if (/deserializ|aborted|premature close|unexpected end/i.test(typeof o.message === 'string' ? o.message : '')) {
      // The body was cut inside a frame (even the first): a truncated stream, retried like one.
      return new AgentRxError('early_termination', `The InvokeHarness stream was cut inside a frame after ${events} events: ${message}`, {
        events,
        transient: true,
      });
    }
    return new AgentRxError('provider_error', `InvokeHarness failed: ${name}: ${message}`, { errorType: name, events, transient: false });
  }

  /** What the harness reported in an exception or error frame: `harness_stream_error`, announced by a `agentcore.stream_exception` event. */
  private hostError(exceptionType: string, message: string, events: number, emit: (ev: RawEvent) => void): AgentRxError {
    emit({ type: STREAM_EXCEPTION, exceptionType, message } satisfies AgentCoreSyntheticEvent);
    return new AgentRxError('harness_stream_error', `The harness stream reported ${exceptionType}: ${message}`, {
      origin: 'host',
      exceptionType,
      message,
      events,
      transient: false,
    });
  }

  /** Removes configured secret values from text that might have echoed them. */
  private redact(text: string): string {
    let out = text;
    for (const s of [this.options.secretAccessKey, this.options.sessionToken]) {
      const v = s?.reveal();
      if (v !== undefined && v.length >= 4) out = out.split(v).join('[redacted]');
    }
    return out;
  }

  /** Shows nothing of the options (they may hold credentials). */
  [inspect.custom](): string {
    return 'AgentCoreInvoker';
  }
}

/** An invoke's `emit`, made aware of retries (see `replayAwareEmit`). */
export interface ReplayAwareEmit {
  /** Emits one event of the current attempt. */
  readonly emit: (e: RawEvent) => void;
  /** Called when an attempt failed and the invoke is sent again. */
  readonly retrying: () => void;
}

/**
 * Wraps `emit` for one invoke so that a retried attempt's repeated text is not shown twice: each
 * text event of a retry gets an entry in `overrides` (the session's `textOverrides`) with what it
 * adds to the text shown so far (nothing while it repeats it). A retry that diverges is shown as
 * it comes.
 */
export function replayAwareEmit(overrides: WeakMap<RawEvent, string>, emit: (e: RawEvent) => void): ReplayAwareEmit {
  let shown = '';
  let current = '';
  let retried = false;
  return {
    retrying: () => {
      retried = true;
      current = '';
    },
    emit: (e) => {
      const t = rawTextOf(e);
      if (t !== undefined) {
        current += t;
        if (!retried) shown += t;
        else if (shown.startsWith(current)) overrides.set(e, '');
        else if (current.startsWith(shown)) {
          overrides.set(e, current.slice(shown.length));
          shown = current;
        } else shown += t;
      }
      emit(e);
    },
  };
}

/** The text of a Converse `contentBlockDelta` with `delta.text`, if any. */
export function rawTextOf(event: RawEvent): string | undefined {
  const d = event['contentBlockDelta'];
  const delta = typeof d === 'object' && d !== null ? (d as { delta?: unknown }).delta : undefined;
  const text = typeof delta === 'object' && delta !== null ? (delta as { text?: unknown }).text : undefined;
  return typeof text === 'string' && text !== '' ? text : undefined;
}

/**
 * The `message` of an exception body the SDK passed on as text (an unmodeled exception type
 * carries its raw JSON body as its message), else the text itself.
 */
function messageOfBody(text: string): string {
  if (!text.startsWith('{')) return text;
  try {
    const parsed: unknown = JSON.parse(text);
    const m = typeof parsed === 'object' && parsed !== null ? (parsed as { message?: unknown }).message : undefined;
    return typeof m === 'string' ? m : text;
  } catch {
    return text;
  }
}
