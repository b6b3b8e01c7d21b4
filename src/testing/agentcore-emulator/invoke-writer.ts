import type { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { AgentCoreRecordedRequest } from '../agentcore-emulator.js';
import { exceptionFrame, malformedHeaderFrame, rawFrame, withBadChecksum } from './frames.js';
import type { AgentCoreFault } from './script.js';

/**
 * The body of an `InvokeHarness` answer as the AgentCore emulator writes it: event-stream frames
 * split into TCP writes (`chunkBytes`), the invoke's stalls (held until `release`), and its ending
 * fault (an exception frame, or a truncated stream). Progress is recorded on the request record
 * and signalled on `changes`.
 */
export class InvokeWriter {
  /**
   * @param chunkBytes Split each body into writes of this many bytes (frames straddle writes).
   * @param changes Emits `change` after every write and stall; stalls wait on it for a release.
   * @param granted How many stall releases invoke `n` was granted so far.
   */
  constructor(
    private readonly chunkBytes: number | undefined,
    private readonly changes: EventEmitter,
    private readonly granted: (invoke: number) => number,
  ) {}

  /** Writes the head of a 200 event-stream answer. */
  start(res: ServerResponse, requestId: string): void {
    res.socket?.setNoDelay(true);
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': requestId });
    res.flushHeaders();
  }

  /**
   * Writes the frames of a turn, applying its stalls (in `afterFrames` order) and its ending
   * fault (`exception`, `truncate` or `corrupt`), if any. Resolves true when the invoke completed.
   */
  async play(res: ServerResponse, record: AgentCoreRecordedRequest, frames: readonly Uint8Array[], faults: readonly AgentCoreFault[]): Promise<boolean> {
    const stalls = faults.filter((f): f is Extract<AgentCoreFault, { kind: 'stall' }> => f.kind === 'stall').sort((a, b) => a.afterFrames - b.afterFrames);
    const end = faults.find(
      (f): f is Extract<AgentCoreFault, { kind: 'exception' | 'truncate' | 'corrupt' }> =>
        f.kind === 'exception' || f.kind === 'truncate' || f.kind === 'corrupt',
    );
    const clamp = (n: number): number => Math.max(0, Math.min(n, frames.length));
    const endAt = end ? clamp(end.afterFrames) : frames.length;
    let pos = 0;
    // The unsent rest of frame `pos` when only its first half went out.
    let carry: Uint8Array | undefined;
    const sendUpTo = async (limit: number, half: boolean): Promise<boolean> => {
      const parts: Uint8Array[] = [];
      let from = pos;
      if (carry) {
        parts.push(carry);
        carry = undefined;
        from = pos + 1;
      }
      const upTo = Math.max(limit, from);
      parts.push(...frames.slice(from, upTo));
      const whole = parts.length;
      const head = half && upTo < frames.length ? frames[upTo]!.subarray(0, Math.ceil(frames[upTo]!.length / 2)) : undefined;
      if (head) parts.push(head);
      const ok = await this.write(res, record, parts, whole, pos);
      pos = upTo;
      if (head) carry = frames[upTo]!.subarray(head.length);
      return ok;
    };
    for (const stall of stalls) {
      if (end && stall.afterFrames >= endAt) break;
      if (!(await sendUpTo(clamp(stall.afterFrames), stall.midFrame === true))) return false;
      record.outcome = 'fault';
      record.message = 'Emulated stall';
      if (!(await this.waitRelease(res, record))) return false;
    }
    if (!end) {
      if (!(await sendUpTo(frames.length, false))) return false;
      res.end();
      record.outcome = 'completed';
      record.message = undefined;
      return true;
    }
    record.outcome = 'fault';
    if (end.kind === 'exception') {
      if (!(await sendUpTo(endAt, false))) return false;
      record.message = end.message ?? 'Emulated exception';
      const ok = await this.write(res, record, [exceptionFrame(end.exceptionType ?? 'internalServerException', { message: record.message })], 1, pos);
      if (ok) res.end();
      return false;
    }
    if (end.kind === 'corrupt') {
      if (!(await sendUpTo(endAt, false))) return false;
      record.message = `Emulated damaged frame (${end.damage})`;
      const damaged =
        end.damage === 'checksum'
          ? withBadChecksum(frames[Math.min(endAt, frames.length - 1)]!)
          : end.damage === 'headers'
            ? malformedHeaderFrame()
            : end.damage === 'payload'
              ? rawFrame('event', 'contentBlockDelta', end.body ?? '{"contentBlockIndex":0,"delta":{"text":"cut')
              : rawFrame('exception', end.exceptionType ?? 'internalServerException', end.body ?? 'upstream model failed: no JSON here');
      const ok = await this.write(res, record, [damaged], 1, pos);
      if (ok) res.end();
      return false;
    }
    if (!(await sendUpTo(endAt, end.midFrame === true))) return false;
    record.message = 'Emulated truncated stream';
    if (carry) res.socket?.destroy();
    else res.end();
    return false;
  }

  /** Waits in a stall until a release is granted (true) or the connection closes (false). */
  private waitRelease(res: ServerResponse, record: AgentCoreRecordedRequest): Promise<boolean> {
    record.stalls++;
    this.changes.emit('change');
    return new Promise<boolean>((resolve) => {
      const done = (released: boolean): void => {
        this.changes.off('change', check);
        res.off('close', onClose);
        resolve(released && !res.destroyed);
      };
      const check = (): void => {
        if (this.granted(record.invoke!) >= record.stalls) done(true);
      };
      const onClose = (): void => done(false);
      this.changes.on('change', check);
      res.once('close', onClose);
      check();
    });
  }

  /**
   * Writes `parts` as the body (split into `chunkBytes` writes when set); `wholeFrames` of them
   * count as frames (a trailing half frame does not). Resolves false when the client went away.
   */
  async write(res: ServerResponse, record: AgentCoreRecordedRequest, parts: readonly Uint8Array[], wholeFrames: number, framesBefore = 0): Promise<boolean> {
    const ends: number[] = [];
    let total = 0;
    for (const p of parts) {
      total += p.length;
      ends.push(total);
    }
    const all = Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.length)));
    const size = this.chunkBytes !== undefined && this.chunkBytes > 0 ? this.chunkBytes : undefined;
    const pieces: Buffer[] = [];
    if (size) for (let i = 0; i < all.length; i += size) pieces.push(all.subarray(i, i + size));
    else {
      let start = 0;
      for (const end of ends) {
        pieces.push(all.subarray(start, end));
        start = end;
      }
    }
    let sent = 0;
    for (const piece of pieces) {
      if (res.destroyed || record.closed) return false;
      await new Promise<void>((resolve) => res.write(piece, () => resolve()));
      sent += piece.length;
      record.writes++;
      record.framesSent = framesBefore + ends.slice(0, wholeFrames).filter((e) => e <= sent).length;
      this.changes.emit('change');
    }
    return !res.destroyed && !record.closed;
  }
}
