import type { Readable } from 'node:stream';
import type { TaskScheduler } from '../util/time-slice-scheduler.js';
import { SseFrameDecoder, type SseMessage } from './sse-frame-decoder.js';

/** How long the rest of a body may take to end after a successful read before it is destroyed. */
const DRAIN_AFTER_SUCCESS_MS = 1_000;
/** Body text waiting for the scheduler beyond which the body is paused (backpressure). */
const PAUSE_AT_CHARS = 64 * 1024;

/**
 * Why a read stops when the frame handler did not end it first: the body ended cleanly (`end`),
 * was closed without ending (`close`), broke (`error`, with what it emitted), stayed silent longer
 * than the idle timeout (`idle`), sent a frame past the cap (`oversized`), or the caller's signal
 * aborted (`aborted`).
 */
export type SseStop =
  | { readonly kind: 'end' }
  | { readonly kind: 'close' }
  | { readonly kind: 'error'; readonly cause: unknown }
  | { readonly kind: 'idle'; readonly idleTimeoutMs: number }
  | { readonly kind: 'oversized'; readonly maxFrameBytes: number }
  | { readonly kind: 'aborted' };

/** A read in progress, as its handlers and its owner see it. */
export interface SseRead {
  /**
   * Ends the read as a success (the protocol's last frame arrived): no frame is delivered after
   * it, `onDone()` is called, and the rest of the body is read and discarded (so a keep-alive
   * connection can be reused), or destroyed when it does not end within a second.
   */
  succeed(): void;
  /** Ends the read as a failure: no frame is delivered after it, the body is destroyed, `onDone(error)` is called. */
  fail(error: Error): void;
  /** Stops reading without an outcome (the owner lost interest): the body is destroyed, `onDone` is never called. */
  cancel(): void;
  /** True once the read succeeded, failed or was cancelled. */
  readonly settled: boolean;
}

/** Options of `readSse`: limits, and the transport's own reading of frames and stops. */
export interface SseReadOptions {
  /** Longest silence between two pieces of body text (comments count); exceeding it stops the read with `idle`. */
  readonly idleTimeoutMs: number;
  /** Longest frame buffered while waiting for its end (see `SseFrameDecoder`). Unset: no cap. */
  readonly maxFrameBytes?: number;
  /** Aborting it stops the read with `aborted` at once (queued text is never delivered). */
  readonly signal?: AbortSignal;
  /**
   * Where received text is decoded and handed to the handlers. Unset: in the body's `data`
   * callback. Set: text is queued and handled by a task of the scheduler, so that hundreds of
   * streams readable in the same loop turn are handled in time slices instead of one long block.
   * Per body, text is handled in arrival order, and the end, close or break of the body is looked
   * at only after the text received before it. More than 64 KiB of queued text pauses the body
   * until it is handled.
   */
  readonly scheduler?: TaskScheduler;
  /** Called with each complete frame, in order, until the read settles. May end the read through `read`; must not throw. */
  readonly onMessage: (message: SseMessage, read: SseRead) => void;
  /** Called with each comment line (a heartbeat) until the read settles; must not throw. */
  readonly onComment?: (comment: string, read: SseRead) => void;
  /**
   * Decides how a stop the handlers did not pre-empt ends the read: the error it fails with, or
   * `undefined` when it is a success (typically a clean `end` after the protocol's last frame).
   * Must not throw.
   */
  readonly onStop: (stop: SseStop) => Error | undefined;
  /** Called once when the read succeeds (no argument) or fails; never after `cancel`. Must not throw. */
  readonly onDone: (error?: Error) => void;
}

/**
 * Reads a `text/event-stream` response body: the one SSE reader of the HTTP transports. Framing
 * is `SseFrameDecoder`'s (over `eventsource-parser`); the body is read as UTF-8 text, so a
 * character split across network chunks arrives whole. The reader owns the body's life: the idle
 * timer (armed at the start and at each piece of text), the caller's abort signal, the end, close
 * or break of the body, backpressure when a scheduler is used, and the body's disposal (destroyed
 * on failure and cancel, drained after a success). What a frame means and what each stop is
 * called belongs to the transport (`onMessage`, `onStop`).
 *
 * Returns the read's handle; `onDone` reports its outcome. A signal already aborted fails the
 * read before this returns.
 */
export function readSse(body: Readable, options: SseReadOptions): SseRead {
  return new SseBodyReader(body, options);
}

/** The state of one `readSse`. */
class SseBodyReader implements SseRead {
  private done = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly decoder: SseFrameDecoder;
  /** Received text and end/close/error handlers, in arrival order, waiting for `drain` (scheduler mode). */
  private queued: (string | (() => void))[] = [];
  private queuedChars = 0;
  private drainScheduled = false;
  private paused = false;

  constructor(
    private readonly body: Readable,
    private readonly options: SseReadOptions,
  ) {
    this.decoder = new SseFrameDecoder(
      {
        onMessage: (message) => {
          if (!this.done) options.onMessage(message, this);
        },
        onComment: (comment) => {
          if (!this.done) options.onComment?.(comment, this);
        },
        onOversized: (maxFrameBytes) => this.stop({ kind: 'oversized', maxFrameBytes }),
      },
      options.maxFrameBytes,
    );
    if (options.signal?.aborted) {
      this.stop({ kind: 'aborted' });
      return;
    }
    body.setEncoding('utf8');
    body.on('data', this.onData);
    body.on('end', this.onEnd);
    body.on('close', this.onClose);
    body.on('error', this.onError);
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.armIdle();
  }

  get settled(): boolean {
    return this.done;
  }

  succeed(): void {
    if (this.done) return;
    this.cleanup();
    const body = this.body;
    if (!body.readableEnded && !body.destroyed) {
      // Drain the tail (a chunked terminator usually follows the last frame) so the keep-alive
      // connection can be reused; a server that keeps the body open gets it destroyed.
      const drainLimit = setTimeout(() => body.destroy(), DRAIN_AFTER_SUCCESS_MS);
      drainLimit.unref();
      body.once('end', () => clearTimeout(drainLimit));
      body.once('close', () => clearTimeout(drainLimit));
      body.resume();
    }
    this.options.onDone();
  }

  fail(error: Error): void {
    if (this.done) return;
    this.cleanup();
    this.body.destroy();
    this.options.onDone(error);
  }

  cancel(): void {
    if (this.done) return;
    this.cleanup();
    this.body.destroy();
  }

  /** Ends the read as the transport says `stop` does. */
  private stop(stop: SseStop): void {
    if (this.done) return;
    const error = this.options.onStop(stop);
    if (error) this.fail(error);
    else this.succeed();
  }

  private cleanup(): void {
    this.done = true;
    this.queued = [];
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const body = this.body;
    body.off('data', this.onData);
    body.off('end', this.onEnd);
    body.off('close', this.onClose);
    body.off('error', this.onError);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    // Swallow late errors of a body no longer read.
    body.on('error', noop);
  }

  private armIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(this.onIdle, this.options.idleTimeoutMs);
  }

  private readonly onIdle = (): void => this.stop({ kind: 'idle', idleTimeoutMs: this.options.idleTimeoutMs });
  private readonly onAbort = (): void => this.stop({ kind: 'aborted' });

  private readonly onData = (text: string): void => {
    if (this.done) return;
    this.armIdle();
    if (!this.options.scheduler) {
      this.decoder.feed(text);
      return;
    }
    this.enqueue(text);
    this.queuedChars += text.length;
    if (this.queuedChars >= PAUSE_AT_CHARS && !this.paused) {
      this.paused = true;
      this.body.pause();
    }
  };

  private readonly onEnd = (): void => this.afterQueued(() => this.stop({ kind: 'end' }));
  private readonly onClose = (): void => this.afterQueued(() => this.stop({ kind: 'close' }));
  private readonly onError = (cause: unknown): void => this.afterQueued(() => this.stop({ kind: 'error', cause }));

  /** Runs `handle` once the text received before it has been handled. */
  private afterQueued(handle: () => void): void {
    if (this.done) return;
    if (this.queued.length > 0) this.enqueue(handle);
    else handle();
  }

  private enqueue(item: string | (() => void)): void {
    this.queued.push(item);
    if (!this.drainScheduled) {
      this.drainScheduled = true;
      // `afterQueued` enqueues only behind queued text, which exists only with a scheduler.
      this.options.scheduler?.schedule(this.drain);
    }
  }

  private readonly drain = (): void => {
    this.drainScheduled = false;
    const items = this.queued;
    this.queued = [];
    this.queuedChars = 0;
    for (const item of items) {
      if (this.done) return;
      if (typeof item === 'string') this.decoder.feed(item);
      else item();
    }
    if (this.paused && !this.done) {
      this.paused = false;
      this.body.resume();
    }
  };
}

function noop(): void {}
