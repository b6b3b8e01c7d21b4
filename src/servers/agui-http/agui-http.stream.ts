import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { BaseEvent } from '@ag-ui/core';
import type { EventEncoder } from '@ag-ui/encoder';
import type { RunFinishedEvent } from '../../core/events/agui-event.js';
import type { AgUiHttpOptions } from './agui-http.config.js';
import type { ClientFrame } from './agui-http.messages.js';
import type { HeaderMap } from './agui-http.reply.js';
import { failureDetail } from './agui-http.wire-errors.js';
import { LEGACY_WIRE_VERSION, clientWireEvent, type AgUiWireVersion } from './agui-http.wire-version.js';

export { toWireEvent } from './agui-http.wire-version.js';

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
 * How the run a response streamed ended, as its client was told: RUN_FINISHED `completed`, or
 * ending waiting on the client (`awaiting_tools`: frontend tool calls pending; `interrupt`), or a
 * RUN_ERROR (`run_error`, with its code and the full text behind the client's message).
 */
export type StreamEnd =
  | { readonly outcome: 'completed' | 'awaiting_tools' | 'interrupt' }
  | { readonly outcome: 'run_error'; readonly code: string | undefined; readonly detail: string };

/** The terminal event each response's stream wrote (what the request log reports). */
const ends = new WeakMap<ServerResponse, StreamEnd>();

/** How the run streamed to `res` ended, once its stream wrote the terminal event (else undefined). */
export function streamEndOf(res: ServerResponse): StreamEnd | undefined {
  return ends.get(res);
}

/**
 * One run's response: AG-UI events encoded with `@ag-ui/encoder`, as SSE (`text/event-stream`)
 * or, when the request's `Accept` names `application/vnd.ag-ui.event+proto`, as length-prefixed
 * protobuf frames (a wildcard Accept such as curl's gets SSE), each event shaped for the AG-UI
 * version the client announced (`clientWireEvent`). An SSE stream that stays silent for
 * `heartbeatMs` gets a `: keep-alive` comment (0 turns that off), so proxies keep it open while a
 * tool runs.
 */
export class AgUiEventStream {
  /** The negotiated media type. */
  readonly contentType: string;
  private readonly encoder: EventEncoder;
  private readonly binary: boolean;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopped = false;

  /**
   * @param accept The request's `Accept` header.
   * @param heartbeatMs Silence before an SSE keep-alive comment (0: none).
   * @param version The AG-UI version the client announced (default: the 0.0.x shape every client accepts).
   */
  constructor(
    private readonly res: ServerResponse,
    accept: string | undefined,
    private readonly heartbeatMs: number,
    private readonly version: AgUiWireVersion = LEGACY_WIRE_VERSION,
  ) {
    // Protobuf only for clients that name its media type: a bare `*/*` (curl) gets SSE.
    const Encoder = encoderOf();
    this.encoder = new Encoder(accept !== undefined && PROTO_TYPE.test(accept) ? { accept } : {});
    this.contentType = this.encoder.getContentType();
    this.binary = this.contentType !== 'text/event-stream';
  }

  /** The stream of a run answering `req`: negotiated from its `Accept`, shaped for the client's `version`. */
  static forRun(req: IncomingMessage, res: ServerResponse, options: Pick<AgUiHttpOptions, 'heartbeatMs'>, version: AgUiWireVersion): AgUiEventStream {
    return new AgUiEventStream(res, req.headers.accept, options.heartbeatMs, version);
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
    this.writeGroup([ev], id);
  }

  /**
   * Writes the client events of one envelope in one chunk, the SSE `id: <seq>` on the last frame
   * only: a client that saw the id saw the whole group, and one cut inside a group resumes from
   * the previous id and gets the whole group again. Nothing is written for an empty group. An
   * event that cannot be encoded would leave a broken stream: the transport fails instead.
   */
  writeGroup(events: readonly ClientFrame[], seq: number | undefined): void {
    const res = this.res;
    if (events.length === 0 || res.writableEnded || res.destroyed) return;
    let chunks: (string | Uint8Array)[];
    try {
      chunks = events.map((ev, i) => this.encode(clientWireEvent(ev, this.version), i === events.length - 1 ? seq : undefined));
    } catch {
      res.destroy();
      return;
    }
    res.write(this.binary ? Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))) : chunks.join(''));
    for (const ev of events) this.noteEnd(ev);
    this.armHeartbeat();
  }

  /** One event's frame; throws when the encoder cannot encode it. */
  private encode(event: BaseEvent, id: number | undefined): string | Uint8Array {
    if (this.binary) return this.encoder.encodeBinary(event);
    const sse = this.encoder.encodeSSE(event);
    // `data: …\n\n` → `data: …\nid: n\n\n`: the id is set when the frame is dispatched.
    return id === undefined ? sse : `${sse.replace(/\n\n$/, '\n')}id: ${id}\n\n`;
  }

  /** Records how the run ended when `ev`, just written, is its terminal event. */
  private noteEnd(ev: ClientFrame): void {
    if (ev.type === 'RUN_ERROR') ends.set(this.res, { outcome: 'run_error', code: ev.code, detail: failureDetail(ev) ?? ev.message });
    else if (ev.type === 'RUN_FINISHED') ends.set(this.res, { outcome: finishedOutcome(ev) });
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

/** What a RUN_FINISHED ended the run with: waiting on the client (its frontend tools, an interrupt), or done. */
function finishedOutcome(ev: RunFinishedEvent): 'completed' | 'awaiting_tools' | 'interrupt' {
  const outcome = ev.outcome;
  if (outcome?.type === 'interrupt') return 'interrupt';
  return outcome?.type === 'success' && (outcome.pendingToolCallIds ?? []).length > 0 ? 'awaiting_tools' : 'completed';
}
