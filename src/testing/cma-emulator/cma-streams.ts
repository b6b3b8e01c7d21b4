import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CmaWireEvent } from './cma-script.js';
import type { CmaEmulatorState, Session, Stream } from './cma-state.js';

/**
 * The SSE side of the Claude Managed Agents emulator: attaching a stream to a session, writing
 * event frames to every live stream of a session (previews only to streams that asked for them),
 * heartbeats, and the frame-indexed faults of the plan (drops, a stall, a malformed frame, and
 * duplicates on re-attach). Event-frame counts are global over every stream the emulator serves.
 */
export class CmaStreams {
  private readonly usedDrops = new Set<number>();
  private stallUsed = false;
  private malformedUsed = false;
  private unboundedUsed = false;

  /** @param heartbeatMs Heartbeat comment interval on open streams, ms (0 = none). */
  constructor(
    private readonly state: CmaEmulatorState,
    private readonly heartbeatMs: number,
  ) {}

  /**
   * Serves `GET /v1/sessions/{id}/events/stream` once its fault (if any) was checked: writes the
   * head, registers the stream, re-sends duplicates on a re-attach when the plan asks, and opens
   * with a `: connected` comment (to which a frame-0 fault applies).
   */
  attach(req: IncomingMessage, res: ServerResponse, url: URL, s: Session): void {
    const deltas = url.searchParams
      .getAll('event_deltas')
      .flatMap((v) => v.split(','))
      .includes('agent.message');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    req.socket.setNoDelay(true);
    s.attachments++;
    const stream: Stream = { res, deltas, live: true, heartbeat: undefined };
    s.streams.add(stream);
    if (this.heartbeatMs > 0) {
      stream.heartbeat = setInterval(() => {
        if (stream.live) this.writeRaw(stream, ': heartbeat\n\n');
      }, this.heartbeatMs);
      stream.heartbeat.unref();
    }
    res.on('close', () => {
      stream.live = false;
      clearInterval(stream.heartbeat);
      s.streams.delete(stream);
      this.state.changed();
    });
    const dup = this.state.faults.duplicateOnReattach ?? 0;
    if ((s.attachments > 1 || s.seeded) && dup > 0) for (const ev of s.history.slice(-dup)) this.writeEvent(stream, ev, false);
    // Frame-0 faults: the stream opened (headers and a comment reach the client), then fails.
    this.writeWithFault(stream, ': connected\n\n', this.state.counters.frame === 0 ? this.frameFault(0) : undefined);
    this.state.changed();
  }

  /** Appends to history (unless `streamOnly` or `preview`) and writes to every live stream of the session. */
  broadcast(s: Session, event: CmaWireEvent, o: { streamOnly?: boolean; preview?: boolean } = {}): void {
    if (!o.streamOnly && !o.preview) s.history.push(event);
    for (const stream of [...s.streams]) {
      if (o.preview) {
        if (stream.deltas) this.writeEvent(stream, event, false);
      } else this.writeEvent(stream, event);
    }
    this.state.changed();
  }

  /** Ends every stream of a deleted session cleanly. */
  endAll(s: Session): void {
    for (const stream of [...s.streams]) this.writeWithFault(stream, '', 'close');
  }

  /** Stops the heartbeats of every stream of `s` (the emulator is closing). */
  stopHeartbeats(s: Session): void {
    for (const stream of s.streams) clearInterval(stream.heartbeat);
  }

  private writeRaw(stream: Stream, text: string, then?: () => void): void {
    if (stream.res.writableEnded || stream.res.destroyed) return;
    stream.res.write(text, () => then?.());
  }

  /**
   * Writes `text` and applies the frame fault decided for it: the stream stops being live at once
   * (later events of the same tick go to history only); `error` destroys the connection once the
   * frame was handed to the socket, `close` ends the body cleanly, `stall` just stops writing.
   */
  private writeWithFault(stream: Stream, text: string, fault: 'error' | 'close' | 'stall' | undefined): void {
    if (fault) {
      stream.live = false;
      clearInterval(stream.heartbeat);
    }
    this.writeRaw(stream, text, fault === 'error' ? () => stream.res.destroy() : undefined);
    if (fault === 'close') stream.res.end();
    if (fault) this.state.changed();
  }

  /**
   * The `unboundedFrame` fault: the stream stops being live (like a stall), then a frame opening
   * and `bytes` of data without any line break are written in 16 KiB slices, each after the last
   * one drained (a client that gave up and closed the connection ends it early).
   */
  private writeUnbounded(stream: Stream, bytes: number): void {
    stream.live = false;
    clearInterval(stream.heartbeat);
    this.state.changed();
    const slice = 'x'.repeat(16 * 1024);
    let left = bytes;
    const next = (): void => {
      if (left <= 0 || stream.res.writableEnded || stream.res.destroyed) return;
      const text = left >= slice.length ? slice : slice.slice(0, left);
      left -= text.length;
      this.writeRaw(stream, text, next);
    };
    this.writeRaw(stream, 'event: message\ndata: {"type":"agent.message","content":"', next);
  }

  /** The fault (if any) due after event frame `n`; each fires once. */
  private frameFault(n: number): 'error' | 'close' | 'stall' | undefined {
    const faults = this.state.faults;
    const drops = faults.drops ?? [];
    for (let i = 0; i < drops.length; i++) {
      if (drops[i]!.after === n && !this.usedDrops.has(i)) {
        this.usedDrops.add(i);
        return drops[i]!.kind;
      }
    }
    if (faults.stallAfter === n && !this.stallUsed) {
      this.stallUsed = true;
      return 'stall';
    }
    return undefined;
  }

  /** Writes one event frame on one stream, applying the frame-indexed faults (uncounted frames get none). */
  private writeEvent(stream: Stream, event: CmaWireEvent, counted = true): void {
    if (!stream.live) return;
    if (!counted) {
      this.writeRaw(stream, frame(event));
      return;
    }
    const n = ++this.state.counters.frame;
    if (this.state.faults.malformedFrameBefore === n && !this.malformedUsed) {
      this.malformedUsed = true;
      this.writeRaw(stream, 'event: message\ndata: {"type": "agent.message", this is not json\n\n');
    }
    const unbounded = this.state.faults.unboundedFrame;
    if (unbounded?.before === n && !this.unboundedUsed) {
      this.unboundedUsed = true;
      this.writeUnbounded(stream, unbounded.bytes);
      return;
    }
    this.writeWithFault(stream, frame(event), this.frameFault(n));
  }
}

/** One SSE frame with an `event:` line (the official SDK skips frames without one). */
function frame(event: CmaWireEvent): string {
  const type = typeof event['type'] === 'string' ? event['type'] : 'message';
  return `event: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
}
