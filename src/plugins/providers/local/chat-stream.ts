import type { Readable } from 'node:stream';
import { AgentRxError } from '../../../core/errors.js';
import type { SseMessage } from '../../../core/http/sse-frame-decoder.js';
import { readSse, type SseRead, type SseStop } from '../../../core/http/sse-reader.js';
import { jsonDepthExceeds, jsonTextMayExceed } from '../../../core/util/json-depth.js';
import { sharedScheduler, type TaskScheduler } from '../../../core/util/time-slice-scheduler.js';
import { MAX_CHUNK_DEPTH, stringifyDecodedArguments } from './chat-completion.js';
import { errorText, isMap, truncate, type WireMap } from './chat-wire.js';

/**
 * Reading an OpenAI `chat.completion.chunk` SSE stream, the `local` provider's streamed model
 * call. The body's life (framing, idle timer, abort, end and break, backpressure) is the shared SSE
 * reader's (`readSse`); this file says what a frame means and how each failure is worded.
 *
 * The other wire helpers of the provider live next to it (`ChunkAccumulator` folds the chunks,
 * `parseChatCompletion` reads a whole completion) and are re-exported here, where the provider's
 * files import them from.
 */

export { ChunkAccumulator, type CallFragment } from './chunk-accumulator.js';
export { noChoicesError, parseChatCompletion, type ChatCompletionResult } from './chat-completion.js';
export { errorText, isMap, truncate, type WireMap } from './chat-wire.js';
export { readBodyText } from '../../../core/http/read-body-text.js';

/** Options of `readChatStream`. */
export interface ReadChatStreamOptions {
  /** Longest silence between two reads of the body; exceeding it rejects with `timeout`. */
  readonly idleTimeoutMs: number;
  /** Called with each parsed chunk, in order, as it arrives. */
  readonly onChunk: (chunk: WireMap) => void;
  /** `POST <url>` for error messages (no secrets). */
  readonly target: string;
  /** Aborting rejects promptly with `cancelled` and destroys the body. */
  readonly signal: AbortSignal;
  /** Where received body text is parsed and `onChunk` called. Default: the shared scheduler. */
  readonly scheduler?: TaskScheduler;
  /**
   * Longest frame buffered while waiting for its end (see `LocalProviderOptionsClass.maxFrameBytes`),
   * counted in UTF-16 code units of the decoded text. Unset: no cap.
   */
  readonly maxFrameBytes?: number;
}

/**
 * Reads an SSE body of `chat.completion.chunk` frames until `data: [DONE]` (or a clean end after a
 * finish reason). Rejects with `AgentRxError`:
 * - `timeout` when the body is silent longer than `idleTimeoutMs`;
 * - `stream_error` for a non-JSON data frame, an error frame, a frame longer than
 *   `maxFrameBytes`, a chunk nested too deep, or a body that ends or breaks before completion.
 *   `details.chunks` counts the chunks delivered before the failure and `details.transient` is
 *   true only for a break before the first chunk (safe to retry);
 * - `cancelled` when `signal` aborts.
 * A chunk whose decoded (object) tool-call arguments nest too deep gets them as JSON text, as
 * streaming servers normally send them: `toToolUse` then refuses them as bad input.
 * The body is destroyed on every failure; on success the rest of the body is discarded.
 *
 * Received text is parsed in tasks of `opts.scheduler` (see `SseReadOptions.scheduler`): per
 * stream in arrival order, the end, close or break of the body looked at only after the text
 * received before it, the body paused while more than 64 KiB waits. Nothing is delivered after a
 * cancellation.
 */
export function readChatStream(body: Readable, opts: ReadChatStreamOptions): Promise<{ chunks: number }> {
  return new Promise((resolve, reject) => {
    const state = new ChatStreamState(opts);
    readSse(body, {
      idleTimeoutMs: opts.idleTimeoutMs,
      ...(opts.maxFrameBytes !== undefined ? { maxFrameBytes: opts.maxFrameBytes } : {}),
      signal: opts.signal,
      scheduler: opts.scheduler ?? sharedScheduler,
      onMessage: (message, read) => state.onMessage(message, read),
      onStop: (stop) => state.onStop(stop),
      onDone: (error) => (error ? reject(error) : resolve({ chunks: state.chunks })),
    });
  });
}

/** What a chunk stream has delivered so far, and what its frames and stops mean. */
class ChatStreamState {
  /** Chunks handed to `onChunk`. */
  chunks = 0;
  /** A chunk carried a finish reason: a clean end from here on is a complete answer. */
  private finishSeen = false;

  constructor(private readonly opts: ReadChatStreamOptions) {}

  /** One frame: `[DONE]` ends the read, a chunk goes to `onChunk`, anything unusable fails the read. */
  onMessage(ev: SseMessage, read: SseRead): void {
    const data = ev.data.trim();
    if (data === '[DONE]') {
      read.succeed();
      return;
    }
    if (data === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      read.fail(this.failure(`sent a malformed chunk (not JSON) after ${this.chunks} chunks: ${truncate(data, 120)}`));
      return;
    }
    if (!isMap(parsed)) {
      read.fail(this.failure(`sent a chunk that is not a JSON object after ${this.chunks} chunks`));
      return;
    }
    // The walk only when the text could nest that deep (a chunk holds a handful of brackets).
    if (jsonTextMayExceed(data, MAX_CHUNK_DEPTH) && jsonDepthExceeds(parsed, MAX_CHUNK_DEPTH)) {
      stringifyDecodedArguments(parsed);
      if (jsonDepthExceeds(parsed, MAX_CHUNK_DEPTH)) {
        read.fail(this.failure(`sent a chunk nested deeper than ${MAX_CHUNK_DEPTH} levels after ${this.chunks} chunks`));
        return;
      }
    }
    if (ev.event === 'error' || (parsed['error'] !== undefined && parsed['choices'] === undefined)) {
      read.fail(this.failure(`reported an error after ${this.chunks} chunks: ${truncate(errorText(parsed), 300)}`));
      return;
    }
    this.chunks++;
    const choices = parsed['choices'];
    if (Array.isArray(choices) && choices.some((c) => isMap(c) && typeof c['finish_reason'] === 'string')) this.finishSeen = true;
    this.opts.onChunk(parsed);
  }

  /** The error a stop of the body means (`undefined`: a clean end after a finish reason, a success). */
  onStop(stop: SseStop): AgentRxError | undefined {
    const { target, idleTimeoutMs } = this.opts;
    const chunks = this.chunks;
    switch (stop.kind) {
      case 'end':
        // Servers that omit [DONE] still end cleanly after the finish reason.
        return this.finishSeen ? undefined : this.broken('ended before the completion finished');
      case 'close':
        return this.broken('was closed before the completion finished');
      case 'error':
        return this.broken('broke off (connection lost)');
      case 'idle':
        return new AgentRxError('timeout', `The model stream from ${target} was idle for more than ${idleTimeoutMs} ms (after ${chunks} chunks)`, {
          kind: 'idle',
          idleTimeoutMs,
          chunks,
          transient: false,
        });
      case 'oversized':
        return new AgentRxError(
          'stream_error',
          `an SSE frame exceeded maxFrameBytes (${stop.maxFrameBytes} bytes); the model stream from ${target} sent that much without ending a frame (after ${chunks} chunks). ` +
            'An OpenAI-compatible server never sends such frames: check what answers at baseUrl, or raise providers.local.maxFrameBytes',
          { chunks, maxFrameBytes: stop.maxFrameBytes, transient: false },
        );
      case 'aborted':
        return new AgentRxError('cancelled', 'The model call was cancelled');
    }
  }

  /** A frame that makes the stream unusable: not transient (the server would send it again). */
  private failure(what: string): AgentRxError {
    return new AgentRxError('stream_error', `The model stream from ${this.opts.target} ${what}`, { chunks: this.chunks, transient: false });
  }

  /** A body that stopped before the completion did: transient only before the first chunk. */
  private broken(why: string): AgentRxError {
    return new AgentRxError('stream_error', `The model stream from ${this.opts.target} ${why} after ${this.chunks} chunks`, {
      chunks: this.chunks,
      transient: this.chunks === 0,
    });
  }
}
