import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackBody, ManualScheduler } from '../../support/loopback-body.js';
import type { SseMessage } from '../../../src/core/http/sse-frame-decoder.js';
import { readSse, type SseRead, type SseReadOptions, type SseStop } from '../../../src/core/http/sse-reader.js';

/** What one read reported, in order: frames, comments, the stop it was asked about, then its outcome. */
interface Recorded {
  readonly log: string[];
  readonly messages: SseMessage[];
  readonly stops: SseStop[];
  /** Settles with `onDone`'s argument (`undefined` for a success). */
  readonly done: Promise<Error | undefined>;
  readonly doneCalls: () => number;
}

/** Options of one read in these tests: the reader's, with recording handlers unless overridden. */
type ReadOverrides = Partial<Omit<SseReadOptions, 'onDone'>>;

function record(body: IncomingMessage, overrides: ReadOverrides = {}): { read: SseRead; rec: Recorded } {
  const log: string[] = [];
  const messages: SseMessage[] = [];
  const stops: SseStop[] = [];
  let calls = 0;
  let settle!: (e: Error | undefined) => void;
  const done = new Promise<Error | undefined>((resolve) => (settle = resolve));
  const read = readSse(body, {
    idleTimeoutMs: 10_000,
    onMessage: (m) => {
      messages.push(m);
      log.push(`message:${m.data}`);
    },
    onComment: (c) => log.push(`comment:${c}`),
    onStop: (s) => {
      stops.push(s);
      log.push(`stop:${s.kind}`);
      return s.kind === 'end' ? undefined : new Error(s.kind);
    },
    ...overrides,
    onDone: (e) => {
      calls++;
      log.push(e ? `failed:${e.message}` : 'succeeded');
      settle(e);
    },
  });
  return { read, rec: { log, messages, stops, done, doneCalls: () => calls } };
}

describe('readSse', () => {
  const loopback = new LoopbackBody();
  afterEach(() => loopback.close());

  /** Serves `handler` on loopback (head flushed at once) and returns the response body of one GET. */
  const body = (handler: (res: ServerResponse) => void): Promise<IncomingMessage> => loopback.body(handler, { flushHeaders: true });

  const write = (res: ServerResponse, chunk: string | Buffer): Promise<void> => new Promise((resolve) => res.write(chunk, () => resolve()));

  describe('when frames arrive split anywhere, a UTF-8 character across network chunks included', () => {
    it('should report every frame and comment whole, in order, then the clean end', async () => {
      const text = 'data: {"t":"héllo ✓ 😀"}\r\n\r\n: ping\n\nevent: x\rdata: a\rdata: b\r\r\n';
      const bytes = Buffer.from(text, 'utf8');
      const res = await body(
        (r) =>
          void (async () => {
            for (let i = 0; i < bytes.length; i += 3) await write(r, bytes.subarray(i, i + 3));
            r.end();
          })(),
      );
      const { rec } = record(res);
      expect(await rec.done).toBeUndefined();
      expect(rec.log).toEqual(['message:{"t":"héllo ✓ 😀"}', 'comment:ping', 'message:a\nb', 'stop:end', 'succeeded']);
      expect(rec.messages[1]).toMatchObject({ event: 'x' });
    });
  });

  describe('when the connection breaks mid-body', () => {
    it('should deliver the frames before it, then stop with error and fail', async () => {
      const res = await body((r) => void write(r, 'data: a\n\n').then(() => r.destroy()));
      const { rec } = record(res);
      expect(await rec.done).toMatchObject({ message: 'error' });
      expect(rec.log).toEqual(['message:a', 'stop:error', 'failed:error']);
      expect(rec.stops[0]).toMatchObject({ kind: 'error', cause: expect.objectContaining({ code: 'ECONNRESET' }) });
    });
  });

  describe('when the body is silent longer than idleTimeoutMs', () => {
    it('should stop with idle, fail and destroy the body', async () => {
      const res = await body((r) => void write(r, 'data: a\n\n'));
      const { rec } = record(res, { idleTimeoutMs: 60 });
      expect(await rec.done).toMatchObject({ message: 'idle' });
      expect(rec.stops).toEqual([{ kind: 'idle', idleTimeoutMs: 60 }]);
      expect(rec.log).toEqual(['message:a', 'stop:idle', 'failed:idle']);
      await loopback.responseClosed;
      expect(res.destroyed).toBe(true);
    });
  });

  describe('when the signal aborts mid-read', () => {
    it('should stop with aborted, fail and destroy the body', async () => {
      const controller = new AbortController();
      const res = await body((r) => void write(r, 'data: a\n\n'));
      const { rec } = record(res, {
        signal: controller.signal,
        onMessage: (m) => {
          rec.log.push(`message:${m.data}`);
          controller.abort();
        },
      });
      expect(await rec.done).toMatchObject({ message: 'aborted' });
      expect(rec.log).toEqual(['message:a', 'stop:aborted', 'failed:aborted']);
      await loopback.responseClosed;
    });
  });

  describe('when the signal is already aborted', () => {
    it('should fail before returning and destroy the body', async () => {
      const controller = new AbortController();
      controller.abort();
      const res = await body((r) => void write(r, 'data: a\n\n'));
      const { rec } = record(res, { signal: controller.signal });
      expect(rec.log).toEqual(['stop:aborted', 'failed:aborted']);
      await loopback.responseClosed;
      expect(rec.messages).toEqual([]);
    });
  });

  describe('when a frame grows past maxFrameBytes', () => {
    it('should deliver the frames before it, then stop with oversized, fail and destroy the body', async () => {
      // The cap is on text buffered while waiting for a frame's end: this frame never ends.
      const res = await body((r) => void write(r, `data: a\n\ndata: ${'x'.repeat(100)}`));
      const { rec } = record(res, { maxFrameBytes: 64 });
      expect(await rec.done).toMatchObject({ message: 'oversized' });
      expect(rec.stops).toEqual([{ kind: 'oversized', maxFrameBytes: 64 }]);
      expect(rec.log).toEqual(['message:a', 'stop:oversized', 'failed:oversized']);
      await loopback.responseClosed;
    });
  });

  describe('when a frame handler calls succeed before the body ends', () => {
    it('should succeed without consulting onStop, deliver nothing more, and read the body to its end', async () => {
      const res = await body((r) => void write(r, 'data: last\n\ndata: after\n\n').then(() => r.end(': tail\n\n')));
      const ended = new Promise<void>((resolve) => res.once('end', resolve));
      const { rec } = record(res, {
        onMessage: (m, read) => {
          rec.log.push(`message:${m.data}`);
          read.succeed();
        },
      });
      expect(await rec.done).toBeUndefined();
      await ended;
      expect(rec.log).toEqual(['message:last', 'succeeded']);
      expect(rec.doneCalls()).toBe(1);
    });
  });

  describe('when a frame handler calls fail', () => {
    it('should fail with its error, deliver nothing more and destroy the body', async () => {
      const res = await body((r) => void write(r, 'data: bad\n\ndata: after\n\n'));
      const { rec } = record(res, {
        onMessage: (m, read) => {
          rec.log.push(`message:${m.data}`);
          read.fail(new Error('bad frame'));
        },
      });
      expect(await rec.done).toMatchObject({ message: 'bad frame' });
      await loopback.responseClosed;
      expect(rec.log).toEqual(['message:bad', 'failed:bad frame']);
    });
  });

  describe('when cancelled', () => {
    it('should destroy the body and never report an outcome', async () => {
      let wrote!: () => void;
      const written = new Promise<void>((resolve) => (wrote = resolve));
      const res = await body((r) => void write(r, ': hi\n\n').then(wrote));
      const { read, rec } = record(res);
      await written;
      read.cancel();
      expect(read.settled).toBe(true);
      await loopback.responseClosed;
      await new Promise<void>((resolve) => (res.destroyed ? resolve() : res.once('close', () => resolve())));
      expect(rec.doneCalls()).toBe(0);
      expect(rec.stops).toEqual([]);
    });
  });

  describe('when a scheduler is given and the whole body has arrived before it runs', () => {
    it('should deliver nothing in the data callback, then the frames before the end once it runs', async () => {
      const res = await body((r) => r.end('data: a\n\ndata: b\n\n'));
      const scheduler = new ManualScheduler();
      const ended = new Promise<void>((resolve) => res.once('end', resolve));
      const { rec } = record(res, { scheduler });
      await ended;
      expect(rec.log).toEqual([]);
      scheduler.runAll();
      expect(await rec.done).toBeUndefined();
      expect(rec.log).toEqual(['message:a', 'message:b', 'stop:end', 'succeeded']);
    });
  });
});
