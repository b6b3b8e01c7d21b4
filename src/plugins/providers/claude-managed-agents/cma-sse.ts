import type { Readable } from 'node:stream';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { Observable } from 'rxjs';
import { AgentRxError, toAgentRxError } from '../../../core/errors.js';
import type { RawEvent } from '../../../core/model.js';
import type { StreamItem } from '../../../core/plugin/agent-provider.js';
import { CmaEventType, errorMessageOf, errorTypeOf, isMap, truncate, typeOf } from './cma-wire.js';

/**
 * Reading the Claude Managed Agents event stream (`GET /v1/sessions/{id}/events/stream`, SSE).
 * Framing is done by `eventsource-parser` (LF/CRLF/CR line ends, multi-line `data:`, comments,
 * frames split anywhere across chunks). The event type is taken from the JSON `type` field, never
 * from the `event:` line; an `event: error` frame fails the stream and `event: ping` is ignored.
 */

/** What the decoder reports for one SSE frame (or comment). */
export type CmaSseItem =
  | { readonly kind: 'event'; readonly event: RawEvent }
  /** A frame that could not be used (not JSON, not an object, no `type`): skipped. */
  | { readonly kind: 'diagnostic'; readonly message: string }
  /** An `event: error` frame: the service reports a stream failure. */
  | { readonly kind: 'error'; readonly message: string; readonly errorType: string | undefined }
  /** A comment line or a `ping` frame: a heartbeat. */
  | { readonly kind: 'heartbeat' }
  /**
   * The frame being read grew past `maxFrameBytes` without a boundary: the decoder stops (every
   * later `feed` is ignored) and the stream must fail.
   */
  | { readonly kind: 'oversized'; readonly maxFrameBytes: number };

/**
 * Incremental SSE decoder for the Managed Agents stream. `feed` any slice of the body text; each
 * complete frame is reported through `onItem` synchronously, in order. A trailing partial frame
 * is kept until more text arrives (and dropped at the end of the body, as SSE requires).
 */
export class CmaSseDecoder {
  private readonly parser: EventSourceParser;
  private stopped = false;

  /**
   * @param onItem Called once per complete frame or comment; must not throw.
   * @param maxFrameBytes Cap of one frame's buffered text (a partial line plus the data lines of
   *   the unfinished frame), counted in UTF-16 code units, which never exceed the UTF-8 bytes.
   *   Past it the decoder reports `{kind:'oversized'}` once and stops. Unset: no cap.
   */
  constructor(
    private readonly onItem: (item: CmaSseItem) => void,
    maxFrameBytes?: number,
  ) {
    this.parser = createParser({
      onEvent: (msg) => this.onFrame(msg),
      onComment: () => this.onItem({ kind: 'heartbeat' }),
      // eventsource-parser enforces the cap itself, on the partial line and the unfinished frame
      // together, and drops what it buffered.
      ...(maxFrameBytes !== undefined ? { maxBufferSize: maxFrameBytes } : {}),
      onError: (e) => {
        if (e.type !== 'max-buffer-size-exceeded' || maxFrameBytes === undefined) return;
        this.stopped = true;
        this.onItem({ kind: 'oversized', maxFrameBytes });
      },
    });
  }

  /** Feeds the next slice of body text (ignored after an oversized frame). */
  feed(text: string): void {
    if (this.stopped) return;
    this.parser.feed(text);
  }

  private onFrame(msg: EventSourceMessage): void {
    if (msg.event === 'ping') {
      this.onItem({ kind: 'heartbeat' });
      return;
    }
    if (msg.event === 'error') {
      this.onItem({ kind: 'error', message: errorMessageOf(msg.data) || truncate(msg.data, 300), errorType: errorTypeOf(msg.data) });
      return;
    }
    if (msg.data.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(msg.data);
    } catch {
      this.onItem({ kind: 'diagnostic', message: `skipped a stream frame that is not JSON: ${truncate(msg.data, 120)}` });
      return;
    }
    if (!isMap(parsed)) {
      this.onItem({ kind: 'diagnostic', message: `skipped a stream frame that is not a JSON object: ${truncate(msg.data, 120)}` });
      return;
    }
    if (typeOf(parsed) === undefined) {
      this.onItem({ kind: 'diagnostic', message: `skipped a stream frame without a string "type": ${truncate(msg.data, 120)}` });
      return;
    }
    this.onItem({ kind: 'event', event: parsed });
  }
}

/** Options of `cmaEventStream`. */
export interface CmaEventStreamOptions {
  /** Longest silence between two chunks of the body (heartbeats count); exceeding it fails the stream. */
  readonly idleTimeoutMs: number;
  /** `GET <path>` for messages (no secrets). */
  readonly target: string;
  /** Longest frame accepted (see `CmaProviderOptionsClass.maxFrameBytes`); a longer one fails the stream. Unset: no cap. */
  readonly maxFrameBytes?: number;
}

/**
 * A cold Observable over one stream attachment. On subscribe it calls `open` (which performs the
 * GET and resolves with the body of a 2xx response, or rejects with an AgentRxError), emits
 * `{kind:'open'}`, then one `{kind:'event'}` per event frame and `{kind:'diagnostic'}` per
 * skipped frame.
 *
 * It errors with `stream_error` when the body breaks, when it is idle for longer than
 * `idleTimeoutMs`, on an `event: error` frame, when a frame grows past `maxFrameBytes`, and on a clean end before a terminal event
 * (`session.status_terminated` / `session.deleted`) — a clean close before a terminal is a drop.
 * After a terminal event a clean end completes. Unsubscribing aborts the request (the signal
 * given to `open`) and destroys the body.
 */
export function cmaEventStream(open: (signal: AbortSignal) => Promise<Readable>, opts: CmaEventStreamOptions): Observable<StreamItem> {
  return new Observable<StreamItem>((subscriber) => {
    const ctrl = new AbortController();
    let body: Readable | undefined;
    let idleTimer: NodeJS.Timeout | undefined;
    let done = false;
    let terminalSeen = false;
    let events = 0;

    const finish = (error?: AgentRxError): void => {
      if (done) return;
      done = true;
      clearTimeout(idleTimer);
      if (body) {
        body.removeAllListeners('data');
        body.on('error', noop);
        if (!body.destroyed) body.destroy();
      }
      ctrl.abort();
      if (error) subscriber.error(error);
      else subscriber.complete();
    };
    const armIdle = (): void => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        finish(
          new AgentRxError('stream_error', `the event stream ${opts.target} was idle for more than ${opts.idleTimeoutMs} ms (after ${events} events)`, {
            idle: true,
            idleTimeoutMs: opts.idleTimeoutMs,
            events,
          }),
        );
      }, opts.idleTimeoutMs);
    };
    const decoder = new CmaSseDecoder((item) => {
      if (done) return;
      switch (item.kind) {
        case 'event': {
          events++;
          const type = typeOf(item.event);
          if (type === CmaEventType.statusTerminated || type === CmaEventType.sessionDeleted) terminalSeen = true;
          subscriber.next({ kind: 'event', event: item.event });
          return;
        }
        case 'diagnostic':
          subscriber.next({ kind: 'diagnostic', message: `claude-managed-agents: ${item.message}` });
          return;
        case 'error':
          finish(new AgentRxError('stream_error', `the event stream ${opts.target} reported an error${item.errorType ? ` (${item.errorType})` : ''}: ${item.message}`, { errorType: item.errorType, events }));
          return;
        case 'oversized':
          finish(
            new AgentRxError(
              'stream_error',
              `an SSE frame exceeded maxFrameBytes (${item.maxFrameBytes} bytes); the event stream ${opts.target} sent that much without ending a frame (after ${events} events). The service never sends such frames: check what answers at the base URL, or raise providers.claude-managed-agents.maxFrameBytes`,
              { maxFrameBytes: item.maxFrameBytes, events, oversized: true },
            ),
          );
          return;
        case 'heartbeat':
          return;
      }
    }, opts.maxFrameBytes);

    open(ctrl.signal).then(
      (b) => {
        if (done) {
          b.on('error', noop);
          b.destroy();
          return;
        }
        body = b;
        subscriber.next({ kind: 'open' });
        if (done) return;
        b.setEncoding('utf8');
        b.on('data', (chunk: string) => {
          if (done) return;
          armIdle();
          decoder.feed(chunk);
        });
        b.on('end', () => {
          if (terminalSeen) finish();
          else finish(new AgentRxError('stream_error', `the event stream ${opts.target} closed before the session ended (after ${events} events)`, { events, closed: true }));
        });
        b.on('error', (e: unknown) => finish(new AgentRxError('stream_error', `the event stream ${opts.target} broke off after ${events} events: ${toAgentRxError(e).message}`, { events })));
        b.on('close', () => {
          if (!done) finish(new AgentRxError('stream_error', `the event stream ${opts.target} was closed after ${events} events`, { events }));
        });
        armIdle();
      },
      (e: unknown) => {
        if (!done) finish(toAgentRxError(e, 'stream_error'));
      },
    );

    return () => {
      if (done) return;
      done = true;
      clearTimeout(idleTimer);
      ctrl.abort();
      if (body) {
        body.on('error', noop);
        body.destroy();
      }
    };
  });
}

function noop(): void {}
