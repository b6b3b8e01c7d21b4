import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';

/** One complete SSE frame: its `event`, `id` and (joined) `data` fields, as `eventsource-parser` gives them. */
export type SseMessage = EventSourceMessage;

/** What an `SseFrameDecoder` reports, each called synchronously from `feed`, in stream order. */
export interface SseFrameHandlers {
  /** Called once per complete frame. Must not throw. */
  readonly onMessage: (message: SseMessage) => void;
  /** Called once per comment line (`: …`), the heartbeat of most services. Must not throw. */
  readonly onComment?: (comment: string) => void;
  /**
   * Called once when the frame being read grows past `maxFrameBytes` without a boundary; the
   * decoder has stopped then, and every later `feed` is ignored. Must not throw.
   */
  readonly onOversized?: (maxFrameBytes: number) => void;
}

/**
 * Incremental SSE framing over `eventsource-parser`: LF, CRLF and CR line ends, multi-line
 * `data:` joined with newlines, comments, frames split anywhere across `feed` calls. A trailing
 * partial frame is kept until more text arrives, and dropped at the end of the body, as SSE
 * requires. Text, not bytes: the caller decodes UTF-8 (a `setEncoding('utf8')` body keeps a
 * character split across network chunks whole).
 */
export class SseFrameDecoder {
  private readonly parser: EventSourceParser;
  private stopped = false;

  /**
   * @param handlers Where frames, comments and an oversized frame are reported.
   * @param maxFrameBytes Cap of one frame's buffered text (a partial line plus the data lines of
   *   the unfinished frame), counted in UTF-16 code units, which never exceed the UTF-8 bytes.
   *   Unset: no cap.
   */
  constructor(handlers: SseFrameHandlers, maxFrameBytes?: number) {
    const { onMessage, onComment, onOversized } = handlers;
    this.parser = createParser({
      onEvent: onMessage,
      ...(onComment ? { onComment } : {}),
      // eventsource-parser enforces the cap itself, on the partial line and the unfinished frame
      // together, drops what it buffered and refuses further text: the decoder stops with it.
      ...(maxFrameBytes !== undefined ? { maxBufferSize: maxFrameBytes } : {}),
      onError: (e) => {
        if (e.type !== 'max-buffer-size-exceeded' || maxFrameBytes === undefined) return;
        this.stopped = true;
        onOversized?.(maxFrameBytes);
      },
    });
  }

  /** Feeds the next slice of body text (ignored once a frame was oversized). */
  feed(text: string): void {
    if (this.stopped) return;
    this.parser.feed(text);
  }

  /** True once a frame grew past the cap: nothing more is decoded. */
  get isStopped(): boolean {
    return this.stopped;
  }
}
