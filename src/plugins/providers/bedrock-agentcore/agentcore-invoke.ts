import { inspect } from 'node:util';
import { InvokeHarnessCommand, type BedrockAgentCoreClient, type InvokeHarnessCommandInput } from '@aws-sdk/client-bedrock-agentcore';
import { AgentRxError, isAgentRxError, type ErrorCode } from '../../../core/errors.js';
import { isTransientStatus, withRetry, type RetryAttemptInfo } from '../../../core/http/retry.js';
import type { Logger } from '../../../core/logger.js';
import type { RawEvent } from '../../../core/model.js';
import { httpStatusOf, isThrottlingName, isTransportError } from './agentcore-clients.js';
import type { AgentCoreProviderOptions } from './agentcore.config.js';

/** `type` of the marker event that follows a failed invoke attempt that will be retried. */
export const ATTEMPT_FAILED = 'agentcore.attempt_failed';
/** `type` of the event that reports an exception frame of the stream (emitted just before the error). */
export const STREAM_EXCEPTION = 'agentcore.stream_exception';

/** Raw events the provider synthesizes; every other raw event is a Converse event exactly as the SDK decoded it. */
export type AgentCoreSyntheticEvent =
  /** A failed attempt; the invoke is sent again after `retryInMs`. `normalize` counts only events after the last marker. */
  | { readonly type: typeof ATTEMPT_FAILED; readonly attempt: number; readonly maxAttempts: number; readonly code: ErrorCode; readonly reason: string; readonly retryInMs: number }
  /** An exception frame (`:message-type: exception`): the turn fails with `harness_stream_error`. */
  | { readonly type: typeof STREAM_EXCEPTION; readonly exceptionType: string; readonly message: string };

/**
 * One `InvokeHarness` of the `bedrock-agentcore` provider with its retries and error
 * classification. An invoke has no idempotency token and cannot be rejoined, so the whole invoke
 * is sent again only after a transport error, HTTP 5xx/429, an idle timeout (no frame for
 * `idleTimeoutMs`), or a truncated stream (no `messageStop`), with jittered exponential backoff —
 * never after an exception frame or another 4xx. Each failed attempt that will be retried is
 * followed by an `agentcore.attempt_failed` marker event; an exception frame is reported as an
 * `agentcore.stream_exception` event just before the error. Holds no per-session state.
 */
export class AgentCoreInvoker {
  /** @param client The SDK data-plane client (created lazily by the provider, shared by every session). */
  constructor(
    private readonly options: AgentCoreProviderOptions,
    private readonly logger: Logger,
    private readonly client: () => BedrockAgentCoreClient,
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
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        ctl.abort(
          new AgentRxError('timeout', `InvokeHarness was idle for more than ${idleMs} ms (after ${events} events)`, { kind: 'idle', idleTimeoutMs: idleMs, events, transient: true }),
        );
      }, idleMs);
    };
    arm();
    try {
      const out = await this.client().send(new InvokeHarnessCommand(request), { abortSignal: ctl.signal });
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
      throw this.invokeError(e, events, emit);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', forward);
    }
    if (!sawStop) {
      throw new AgentRxError('early_termination', `The InvokeHarness stream ended without messageStop after ${events} events (truncated)`, { events, transient: true });
    }
  }

  /** Classifies an SDK error of one attempt (see the class doc for what is transient). */
  private invokeError(e: unknown, events: number, emit: (ev: RawEvent) => void): AgentRxError {
    const o = (typeof e === 'object' && e !== null ? e : {}) as { name?: unknown; message?: unknown; code?: unknown; $fault?: unknown };
    const name = typeof o.name === 'string' ? o.name : 'Error';
    const message = this.redact(typeof o.message === 'string' ? o.message : String(e));
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
    if (o.$fault !== undefined || (name !== 'Error' && o.code === undefined)) {
      // An exception (or error) frame of the event stream: the SDK throws it as a modeled
      // exception, or as an Error named after an unmodeled `:exception-type`.
      emit({ type: STREAM_EXCEPTION, exceptionType: name, message } satisfies AgentCoreSyntheticEvent);
      return new AgentRxError('harness_stream_error', `The harness stream reported ${name}: ${message}`, { exceptionType: name, message, events, transient: false });
    }
    if (/deserializ|aborted|premature close|unexpected end/i.test(message)) {
      // The body was cut inside a frame (even the first): a truncated stream, retried like one.
      return new AgentRxError('early_termination', `The InvokeHarness stream was cut inside a frame after ${events} events: ${message}`, { events, transient: true });
    }
    return new AgentRxError('provider_error', `InvokeHarness failed: ${name}: ${message}`, { errorType: name, events, transient: false });
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
