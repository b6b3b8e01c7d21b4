import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentRxError } from '../../../../src/core/errors.js';
import { LoopbackBody, ManualScheduler } from '../../../support/loopback-body.js';
import { parseChatCompletion, readChatStream, type WireMap } from '../../../../src/plugins/providers/local/chat-stream.js';

const frame = (i: number): string => `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { content: `t${i}` } }] })}\n\n`;
const finish = `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`;

describe('readChatStream', () => {
  const loopback = new LoopbackBody();
  afterEach(() => loopback.close());

  /** Serves `handler` on loopback and returns the response body of one GET. */
  const body = (handler: (res: ServerResponse) => void): Promise<IncomingMessage> => loopback.body(handler);

  const texts = (chunks: WireMap[]): string[] =>
    chunks.map((c) => ((c['choices'] as WireMap[])[0]!['delta'] as WireMap)['content'] as string | undefined).filter((t) => t !== undefined);

  describe('when a whole stream has arrived but the scheduler has not run', () => {
    it('should deliver nothing yet, then every chunk in order and resolve once it runs', async () => {
      const res = await body((r) => {
        for (let i = 0; i < 5; i++) r.write(frame(i));
        r.write(finish);
        r.end('data: [DONE]\n\n');
      });
      const scheduler = new ManualScheduler();
      const chunks: WireMap[] = [];
      let settled = false;
      const ended = new Promise<void>((resolve) => res.once('end', resolve));
      const done = readChatStream(res, {
        idleTimeoutMs: 10_000,
        target: 't',
        signal: new AbortController().signal,
        scheduler,
        onChunk: (c) => chunks.push(c),
      }).finally(() => (settled = true));
      await ended;
      expect(chunks).toEqual([]);
      expect(settled).toBe(false);
      scheduler.runAll();
      await expect(done).resolves.toEqual({ chunks: 6 });
      expect(texts(chunks)).toEqual(['t0', 't1', 't2', 't3', 't4']);
    });
  });

  describe('when the body closes before [DONE] while text is still queued', () => {
    it('should deliver the queued chunks first, then fail with stream_error counting them', async () => {
      const res = await body((r) => {
        r.write(frame(0));
        r.write(frame(1), () => r.destroy());
      });
      const scheduler = new ManualScheduler();
      const chunks: WireMap[] = [];
      const closed = new Promise<void>((resolve) => res.once('close', resolve));
      const done = readChatStream(res, { idleTimeoutMs: 10_000, target: 't', signal: new AbortController().signal, scheduler, onChunk: (c) => chunks.push(c) });
      const failure = done.then(
        () => undefined,
        (e: unknown) => e,
      );
      await closed;
      scheduler.runAll();
      const e = await failure;
      expect(e).toBeInstanceOf(AgentRxError);
      expect((e as AgentRxError).code).toBe('stream_error');
      expect((e as AgentRxError).details).toMatchObject({ chunks: 2 });
      expect(texts(chunks)).toEqual(['t0', 't1']);
    });
  });

  describe('when more text is queued than the pause threshold', () => {
    it('should pause the body until the queued text is handled', async () => {
      const big = Array.from({ length: 2_000 }, (_, i) => frame(i)).join('');
      const res = await body((r) => {
        r.write(big);
        r.write(finish);
        r.end('data: [DONE]\n\n');
      });
      const scheduler = new ManualScheduler();
      const chunks: WireMap[] = [];
      const paused = new Promise<void>((resolve) => res.once('pause', resolve));
      const done = readChatStream(res, { idleTimeoutMs: 10_000, target: 't', signal: new AbortController().signal, scheduler, onChunk: (c) => chunks.push(c) });
      await paused;
      expect(res.isPaused()).toBe(true);
      expect(chunks).toEqual([]);
      while (chunks.length < 2_001) {
        scheduler.runAll();
        if (chunks.length < 2_001) await new Promise<void>((resolve) => res.once('data', () => resolve()));
      }
      scheduler.runAll();
      await expect(done).resolves.toEqual({ chunks: 2_001 });
      expect(texts(chunks)).toEqual(Array.from({ length: 2_000 }, (_, i) => `t${i}`));
    });
  });

  describe('when the signal aborts while text is queued', () => {
    it('should reject with cancelled and never deliver the queued chunks', async () => {
      const res = await body((r) => {
        r.write(frame(0));
        r.write(finish);
        r.end('data: [DONE]\n\n');
      });
      const scheduler = new ManualScheduler();
      const chunks: WireMap[] = [];
      const controller = new AbortController();
      const ended = new Promise<void>((resolve) => res.once('end', resolve));
      const done = readChatStream(res, { idleTimeoutMs: 10_000, target: 't', signal: controller.signal, scheduler, onChunk: (c) => chunks.push(c) });
      await ended;
      controller.abort();
      scheduler.runAll();
      await expect(done).rejects.toMatchObject({ code: 'cancelled' });
      expect(chunks).toEqual([]);
    });
  });

  describe('when a chunk carries decoded tool-call arguments nested 5,000 levels deep', () => {
    it('should deliver the chunk with the arguments as JSON text', async () => {
      const args = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
      const res = await body((r) => {
        r.write(`data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","function":{"name":"echo","arguments":${args}}}]}}]}\n\n`);
        r.write(finish);
        r.end('data: [DONE]\n\n');
      });
      const chunks: WireMap[] = [];
      await expect(
        readChatStream(res, { idleTimeoutMs: 10_000, target: 't', signal: new AbortController().signal, onChunk: (c) => chunks.push(c) }),
      ).resolves.toEqual({ chunks: 2 });
      const call = (((chunks[0]!['choices'] as WireMap[])[0]!['delta'] as WireMap)['tool_calls'] as WireMap[])[0]!['function'] as WireMap;
      expect(call['arguments']).toBe(args);
    });
  });

  describe('when a chunk is nested 5,000 levels deep outside the tool-call arguments', () => {
    it('should fail with stream_error naming the depth', async () => {
      const res = await body((r) => r.end(`data: {"id":"c","extra":${'['.repeat(5_000)}${']'.repeat(5_000)}}\n\n`));
      const e = await readChatStream(res, { idleTimeoutMs: 10_000, target: 't', signal: new AbortController().signal, onChunk: () => undefined }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toMatchObject({ code: 'stream_error', message: expect.stringContaining('nested deeper than 72 levels') });
    });
  });

  describe('when a frame grows past maxFrameBytes', () => {
    it('should fail with stream_error naming the limit and the option after the chunks before it', async () => {
      const res = await body((r) => {
        r.write(frame(0));
        r.write(`data: ${'x'.repeat(3_000)}`);
      });
      const chunks: WireMap[] = [];
      const e = await readChatStream(res, {
        idleTimeoutMs: 10_000,
        target: 't',
        signal: new AbortController().signal,
        maxFrameBytes: 2_048,
        onChunk: (c) => chunks.push(c),
      }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toMatchObject({ code: 'stream_error', details: { chunks: 1, maxFrameBytes: 2_048, transient: false } });
      expect((e as AgentRxError).message).toMatch(/^an SSE frame exceeded maxFrameBytes \(2048 bytes\); .*providers\.local\.maxFrameBytes$/);
      expect(texts(chunks)).toEqual(['t0']);
    });
  });
});

describe('parseChatCompletion', () => {
  describe('when the completion is nested 5,000 levels deep outside the tool-call arguments', () => {
    it('should throw provider_error naming the depth instead of overflowing the stack later', () => {
      const body = `{"choices":[{"index":0,"message":{"role":"assistant","content":"x","extra":${'['.repeat(5_000)}${']'.repeat(5_000)}},"finish_reason":"stop"}]}`;
      expect(() => parseChatCompletion(body, 't')).toThrow(
        expect.objectContaining({ code: 'provider_error', message: expect.stringContaining('nested deeper than 72 levels') }),
      );
    });
  });

  describe('when the completion has an empty choices list', () => {
    it('should throw provider_error with reason no_choices', () => {
      expect(() => parseChatCompletion('{"id":"x","choices":[],"usage":{"prompt_tokens":1}}', 'POST u')).toThrow(
        expect.objectContaining({ code: 'provider_error', details: expect.objectContaining({ reason: 'no_choices' }) }),
      );
    });
  });
});
