import type { Readable } from 'node:stream';
import { Observable } from '../../../core/util/rxjs.js';
import { AgentRxError, toAgentRxError } from '../../../core/errors.js';
import { readSse, type SseRead, type SseStop } from '../../../core/http/sse-reader.js';
import { SseFrameDecoder, type SseMessage } from '../../../core/http/sse-frame-decoder.js';
import type { RawEvent } from '../../../core/model.js';
import type { StreamItem } from '../../../core/plugin/agent-provider.js';
import { CmaEventType, errorMessageOf, errorTypeOf, isMap, truncate, typeOf } from './cma-wire.js';

/**
 * Reading the Claude Managed Agents event stream (`GET /v1/sessions/{id}/events/stream`, SSE).
 * Framing and the body's life (idle timer, end, break, disposal) are the shared SSE reader's
 * (`readSse`); this file says what a frame means. The event type is taken from the JSON `type`
 * field, never from the `event:` line; an `event: error` frame fails the stream and `event: ping`
 * is ignored.
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
  private readonly frames: SseFrameDecoder;

  /**
   * @param onItem Called once per complete frame or comment; must not throw.
   * @param maxFrameBytes Cap of one frame's buffered text (a partial line plus the data lines of
   *   the unfinished frame), counted in UTF-16 code units, which never exceed the UTF-8 bytes.
   *   Past it the decoder reports `{kind:'oversized'}` once and stops. Unset: no cap.
   */
  constructor(onItem: (item: CmaSseItem) => void, maxFrameBytes?: number) {
    this.frames = new SseFrameDecoder(
      {
        onMessage: (message) => {
          const item = cmaSseItemOf(message);
          if (item) onItem(item);
        },
        onComment: () => onItem(HEARTBEAT),
        onOversized: (max) => onItem({ kind: 'oversized', maxFrameBytes: max }),
      },
      maxFrameBytes,
    );
  }

  /** Feeds the next slice of body text (ignored after an oversized frame). */
  feed(text: string): void {
    this.frames.feed(text);
  }
}

const HEARTBEAT: CmaSseItem = { kind: 'heartbeat' };

/**
 * What one complete SSE frame of the Managed Agents stream is; `undefined` for a frame with blank
 * data (nothing to report). Never `oversized`: that is the framing's to say.
 */
export function cmaSseItemOf(msg: SseMessage): CmaSseItem | undefined {
  if (msg.event === 'ping') return HEARTBEAT;
  if (msg.event === 'error') return { kind: 'error', message: errorMessageOf(msg.data) || truncate(msg.data, 300), errorType: errorTypeOf(msg.data) };
  if (msg.data.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(msg.data);
  } catch {
    return { kind: 'diagnostic', message: `skipped a stream frame that is not JSON: ${truncate(msg.data, 120)}` };
  }
  if (!isMap(parsed)) return { kind: 'diagnostic', message: `skipped a stream frame that is not a JSON object: ${truncate(msg.data, 120)}` };
  if (typeOf(parsed) === undefined) return { kind: 'diagnostic', message: `skipped a stream frame without a string "type": ${truncate(msg.data, 120)}` };
  return { kind: 'event', event: parsed };
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
 * `idleTimeoutMs`, on an `event: error` frame, when a frame grows past `maxFrameBytes`, and on a
 * clean end before a terminal event (`session.status_terminated` / `session.deleted`) — a clean
 * close before a terminal is a drop. After a terminal event a clean end completes. The request is
 * aborted (the signal given to `open`) when the stream errors, completes or is unsubscribed, and
 * the body is destroyed.
 */
export function cmaEventStream(open: (signal: AbortSignal) => Promise<Readable>, opts: CmaEventStreamOptions): Observable<StreamItem> {
  return new Observable<StreamItem>((subscriber) => {
    const ctrl = new AbortController();
    let read: SseRead | undefined;
    let unsubscribed = false;
    let terminalSeen = false;
    let events = 0;

    const onItem = (item: CmaSseItem, r: SseRead): void => {
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
          r.fail(
            new AgentRxError(
              'stream_error',
              `the event stream ${opts.target} reported an error${item.errorType ? ` (${item.errorType})` : ''}: ${item.message}`,
              { errorType: item.errorType, events },
            ),
          );
          return;
        case 'oversized':
        case 'heartbeat':
          return;
      }
    };
    const onStop = (stop: SseStop): Error | undefined => {
      switch (stop.kind) {
        case 'end':
          return terminalSeen
            ? undefined
            : new AgentRxError('stream_error', `the event stream ${opts.target} closed before the session ended (after ${events} events)`, {
                events,
                closed: true,
              });
        case 'error':
          return new AgentRxError('stream_error', `the event stream ${opts.target} broke off after ${events} events: ${toAgentRxError(stop.cause).message}`, {
            events,
          });
        case 'idle':
          return new AgentRxError('stream_error', `the event stream ${opts.target} was idle for more than ${stop.idleTimeoutMs} ms (after ${events} events)`, {
            idle: true,
            idleTimeoutMs: stop.idleTimeoutMs,
            events,
          });
        case 'oversized':
          return new AgentRxError(
            'stream_error',
            `an SSE frame exceeded maxFrameBytes (${stop.maxFrameBytes} bytes); the event stream ${opts.target} sent that much without ending a frame (after ${events} events). ` +
              'The service never sends such frames: check what answers at the base URL, or raise providers.claude-managed-agents.maxFrameBytes',
            { maxFrameBytes: stop.maxFrameBytes, events, oversized: true },
          );
        case 'close':
        case 'aborted':
          return new AgentRxError('stream_error', `the event stream ${opts.target} was closed after ${events} events`, { events });
      }
    };

    open(ctrl.signal).then(
      (body) => {
        if (unsubscribed || subscriber.closed) {
          body.on('error', noop);
          body.destroy();
          return;
        }
        subscriber.next({ kind: 'open' });
        if (subscriber.closed) {
          body.on('error', noop);
          body.destroy();
          return;
        }
        read = readSse(body, {
          idleTimeoutMs: opts.idleTimeoutMs,
          ...(opts.maxFrameBytes !== undefined ? { maxFrameBytes: opts.maxFrameBytes } : {}),
          onMessage: (message, r) => {
            const item = cmaSseItemOf(message);
            if (item) onItem(item, r);
          },
          onStop,
          onDone: (error) => {
            ctrl.abort();
            if (error) subscriber.error(error);
            else subscriber.complete();
          },
        });
      },
      (e: unknown) => {
        ctrl.abort();
        if (!unsubscribed) subscriber.error(toAgentRxError(e, 'stream_error'));
      },
    );

    return () => {
      unsubscribed = true;
      ctrl.abort();
      read?.cancel();
    };
  });
}

function noop(): void {}
