import { SseFrameDecoder, type SseMessage } from '../../../src/core/http/sse-frame-decoder.js';

/** Feeds `chunks` to a decoder with `maxFrameBytes` and returns what it reported, in order. */
function decode(maxFrameBytes: number | undefined, ...chunks: string[]): { log: string[]; messages: SseMessage[]; decoder: SseFrameDecoder } {
  const log: string[] = [];
  const messages: SseMessage[] = [];
  const decoder = new SseFrameDecoder(
    {
      onMessage: (m) => {
        messages.push(m);
        log.push(`message:${m.data}`);
      },
      onComment: (c) => log.push(`comment:${c}`),
      onOversized: (max) => log.push(`oversized:${max}`),
    },
    maxFrameBytes,
  );
  for (const c of chunks) decoder.feed(c);
  return { log, messages, decoder };
}

describe('SseFrameDecoder', () => {
  describe('.feed', () => {
    describe('when frames use LF, CRLF and CR line ends and are split mid-line', () => {
      it('should report each frame once with its fields, and comments', () => {
        const { log, messages } = decode(undefined, 'event: a\r\nid: 1\r\nda', 'ta: x\r\n\r\n: hb\n', '\ndata: y\rdata: z\r\r\n');
        expect(log).toEqual(['message:x', 'comment:hb', 'message:y\nz']);
        expect(messages[0]).toEqual({ event: 'a', id: '1', data: 'x' });
      });
    });

    describe('when the body stops in the middle of a frame', () => {
      it('should keep the partial frame unreported', () => {
        expect(decode(undefined, 'data: done\n\ndata: partial\n').log).toEqual(['message:done']);
      });
    });

    describe('when a frame grows past maxFrameBytes across feeds', () => {
      it('should report oversized once, stop, and ignore every later feed', () => {
        const { log, decoder } = decode(32, 'data: ok\n\n', 'data: ', 'x'.repeat(20), 'x'.repeat(20), '\n\ndata: later\n\n');
        expect(log).toEqual(['message:ok', 'oversized:32']);
        expect(decoder.isStopped).toBe(true);
      });
    });

    describe('when frames under maxFrameBytes add up to more than it', () => {
      it('should report them all: the cap is per frame, not per stream', () => {
        const frame = `data: ${'y'.repeat(20)}\n\n`;
        const { log, decoder } = decode(32, frame, frame, frame, frame);
        expect(log).toHaveLength(4);
        expect(decoder.isStopped).toBe(false);
      });
    });
  });
});
