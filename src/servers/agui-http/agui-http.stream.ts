import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { EventType, type AGUIEventOf, type BaseEvent } from '@ag-ui/core';
import type { EventEncoder } from '@ag-ui/encoder';
import type { AgUiEvent, AgUiEventType } from '../../core/events/agui-event.js';
import type { ClientFrame, MessagesSnapshotEvent } from './agui-http.messages.js';
import type { HeaderMap } from './agui-http.reply.js';

const PROTO_TYPE = /application\/vnd\.ag-ui\.event\+proto/i;

let encoderClass: typeof EventEncoder | undefined;
/**
 * `@ag-ui/encoder` (with the protobuf runtime it pulls in, about a tenth of agentrx's import
 * time) is loaded at the first AG-UI response, not when `agentrx` is imported: only the AG-UI
 * HTTP endpoint needs it. Loaded synchronously (its CommonJS build) because a response's
 * content type is negotiated in the constructor.
 */
function encoderOf(): typeof EventEncoder {
  encoderClass ??= (createRequire(import.meta.url)('@ag-ui/encoder') as typeof import('@ag-ui/encoder')).EventEncoder;
  return encoderClass;
}

/**
 * One run's response: AG-UI events encoded with `@ag-ui/encoder`, as SSE (`text/event-stream`)
 * or, when the request's `Accept` names `application/vnd.ag-ui.event+proto`, as length-prefixed
 * protobuf frames (a wildcard Accept such as curl's gets SSE). An SSE stream that stays silent
 * for `heartbeatMs` gets a `: keep-alive` comment (0 turns that off), so proxies keep it open
 * while a tool runs.
 */
export class AgUiEventStream {
  /** The negotiated media type. */
  readonly contentType: string;
  private readonly encoder: EventEncoder;
  private readonly binary: boolean;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly res: ServerResponse,
    accept: string | undefined,
    private readonly heartbeatMs: number,
  ) {
    // Protobuf only for clients that name its media type: a bare `*/*` (curl) gets SSE.
    const Encoder = encoderOf();
    this.encoder = new Encoder(accept !== undefined && PROTO_TYPE.test(accept) ? { accept } : {});
    this.contentType = this.encoder.getContentType();
    this.binary = this.contentType !== 'text/event-stream';
  }

  /** Sends the 200 head (with `headers`, e.g. CORS) now, and starts the keep-alive. */
  open(headers: HeaderMap): void {
    this.res.writeHead(200, {
      ...headers,
      'content-type': this.contentType,
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    });
    this.res.flushHeaders();
    this.armHeartbeat();
  }

  /**
   * Writes one event; a no-op once the response has ended or its socket is gone. An SSE frame
   * gets `id: <id>` when `id` is given (after its `data:` line); protobuf frames carry no ids.
   */
  write(ev: ClientFrame, id?: number): void {
    const res = this.res;
    if (res.writableEnded || res.destroyed) return;
    if (this.encode(ev, id, res)) this.armHeartbeat();
  }

  /** Encodes one event into `out`; false (the response destroyed) when it cannot be encoded. */
  private encode(ev: ClientFrame, id: number | undefined, out: { write(chunk: string | Uint8Array): unknown }): boolean {
    const res = this.res;
    let chunk: string | Uint8Array;
    try {
      const event = ev.type === 'MESSAGES_SNAPSHOT' ? snapshotOnWire(ev) : toWireEvent(ev);
      if (this.binary) chunk = this.encoder.encodeBinary(event);
      else {
        const sse = this.encoder.encodeSSE(event);
        // `data: …\n\n` → `data: …\nid: n\n\n`: the id is set when the frame is dispatched.
        chunk = id === undefined ? sse : `${sse.replace(/\n\n$/, '\n')}id: ${id}\n\n`;
      }
    } catch {
      // An event that cannot be encoded would leave a broken stream: fail the transport instead.
      res.destroy();
      return false;
    }
    out.write(chunk);
    return true;
  }

  /**
   * Writes the client events of one envelope in one chunk, the SSE `id: <seq>` on the last frame
   * only: a client that saw the id saw the whole group, and one cut inside a group resumes from
   * the previous id and gets the whole group again. Nothing is written for an empty group.
   */
  writeGroup(events: readonly ClientFrame[], seq: number | undefined): void {
    const res = this.res;
    if (events.length === 0 || res.writableEnded || res.destroyed) return;
    const chunks: (string | Uint8Array)[] = [];
    const capture = { write: (c: string | Uint8Array) => chunks.push(c) };
    events.forEach((ev, i) => this.encode(ev, i === events.length - 1 ? seq : undefined, capture));
    if (chunks.length !== events.length) return;
    res.write(this.binary ? Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))) : chunks.join(''));
    this.armHeartbeat();
  }

  /** The run is over: stops the keep-alive and ends the response. */
  end(): void {
    this.stop();
    this.res.end();
  }

  /** Stops the keep-alive (the response closed under us). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.heartbeat);
  }

  /** (Re)starts the keep-alive timer of an SSE stream: a comment goes out after `heartbeatMs` of silence. */
  private armHeartbeat(): void {
    if (this.binary || this.heartbeatMs <= 0 || this.stopped) return;
    if (this.heartbeat) {
      this.heartbeat.refresh();
      return;
    }
    this.heartbeat = setTimeout(() => {
      const res = this.res;
      if (this.stopped || res.writableEnded || res.destroyed) return;
      res.write(': keep-alive\n\n');
      this.heartbeat?.refresh();
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }
}

/**
 * An agentrx AG-UI event as `@ag-ui/core` types it: the same fields, `type` as the `EventType`
 * enum member of the same name (the same string at run time).
 */
export function toWireEvent(ev: AgUiEvent): WireEvent {
  return { ...ev, type: EventType[ev.type] };
}

/** The endpoint's MESSAGES_SNAPSHOT as `@ag-ui/core` types an event (its messages are the client's own, verbatim). */
function snapshotOnWire(ev: MessagesSnapshotEvent): BaseEvent {
  const event: BaseEvent & Pick<MessagesSnapshotEvent, 'messages'> = { type: EventType.MESSAGES_SNAPSHOT, messages: ev.messages, timestamp: ev.timestamp };
  return event;
}

/** `E` with `type` as its `EventType` member. */
type OnWire<E extends AgUiEvent> = Omit<E, 'type'> & { readonly type: (typeof EventType)[E['type']] };
/** The event types whose agentrx shape is not the `@ag-ui/core` event of that type. */
type Mismatched<K extends AgUiEventType> = K extends AgUiEventType
  ? OnWire<Extract<AgUiEvent, { type: K }>> extends AGUIEventOf<(typeof EventType)[K]>
    ? never
    : K
  : never;
/**
 * `BaseEvent` (what the encoder takes) as long as every agentrx AG-UI event, `type` aside, is the
 * `@ag-ui/core` event of its type; otherwise a type that names the mismatched event types, so a
 * drift fails to compile in {@link toWireEvent}.
 */
type WireEvent = [Mismatched<AgUiEventType>] extends [never] ? BaseEvent : { readonly notAnAgUiCoreEvent: Mismatched<AgUiEventType> };
