import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { jest } from '@jest/globals';
import fc from 'fast-check';
import type { Subscription } from 'rxjs';
import { AgentRxError } from '../../../../src/core/errors.js';
import { HttpClientFactoryImpl, LazyHttpClient } from '../../../../src/core/http/http-client-factory.js';
import type { StreamItem } from '../../../../src/core/plugin/agent-provider.js';
import { CmaSseDecoder, cmaEventStream, type CmaSseItem } from '../../../../src/plugins/providers/claude-managed-agents/cma-sse.js';

function decode(...chunks: string[]): CmaSseItem[] {
  const items: CmaSseItem[] = [];
  const d = new CmaSseDecoder((i) => items.push(i));
  for (const c of chunks) d.feed(c);
  return items;
}

const ev = (type: string, extra: Record<string, unknown> = {}) => ({ type, id: `id-${type}`, ...extra });

describe('CmaSseDecoder', () => {
  describe('.feed', () => {
    it('should decode LF, CRLF and CR framing alike and take the type from the JSON, not the event line', () => {
      const lf = `event: message\ndata: ${JSON.stringify(ev('agent.message'))}\n\n`;
      const crlf = lf.replace(/\n/g, '\r\n');
      const cr = lf.replace(/\n/g, '\r');
      for (const text of [lf, crlf]) expect(decode(text)).toEqual([{ kind: 'event', event: ev('agent.message') }]);
      // A trailing lone CR may still be the first half of a CRLF: the frame completes with the next byte.
      expect(decode(cr, ': next\r')).toEqual([{ kind: 'event', event: ev('agent.message') }]);
      expect(decode(`event: something_else\ndata: {"type":"session.status_idle","id":"i"}\n\n`)).toEqual([
        { kind: 'event', event: { type: 'session.status_idle', id: 'i' } },
      ]);
    });

    it('should join multi-line data with newlines', () => {
      expect(decode('event: message\ndata: {"type":"agent.message",\ndata:  "id":"m"}\n\n')).toEqual([
        { kind: 'event', event: { type: 'agent.message', id: 'm' } },
      ]);
    });

    it('should report comments and ping frames as heartbeats', () => {
      expect(decode(': heartbeat\n\n', 'event: ping\ndata: {}\n\n')).toEqual([{ kind: 'heartbeat' }, { kind: 'heartbeat' }]);
    });

    it('should report bad frames as diagnostics and skip them', () => {
      const items = decode('data: {not json\n\n', 'data: [1,2]\n\n', 'data: {"id":"x"}\n\n', 'data: \n\n', `data: ${JSON.stringify(ev('agent.message'))}\n\n`);
      expect(items.map((i) => i.kind)).toEqual(['diagnostic', 'diagnostic', 'diagnostic', 'event']);
      expect((items[0] as { message: string }).message).toContain('not JSON');
      expect((items[2] as { message: string }).message).toContain('"type"');
    });

    it('should report an error frame with its message and type', () => {
      expect(decode('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n')).toEqual([
        { kind: 'error', message: 'Overloaded', errorType: 'overloaded_error' },
      ]);
    });

    it('should report a frame that grows past maxFrameBytes once and ignore everything after it', () => {
      const items: CmaSseItem[] = [];
      const d = new CmaSseDecoder((i) => items.push(i), 1024);
      const small = `data: ${JSON.stringify(ev('agent.message', { pad: 'p'.repeat(700) }))}\n\n`;
      // Frames under the cap pass, however many: the cap is per frame, not per stream.
      for (let i = 0; i < 5; i++) d.feed(small);
      expect(items.map((i) => i.kind)).toEqual(['event', 'event', 'event', 'event', 'event']);
      d.feed('data: {"type":"agent.message","content":"');
      for (let i = 0; i < 4; i++) d.feed('x'.repeat(300));
      d.feed(`"}\n\n${small}`);
      expect(items.slice(5)).toEqual([{ kind: 'oversized', maxFrameBytes: 1024 }]);
    });

    it('should give the same items for any split of the byte stream (partial frames)', () => {
      const frames = [
        `event: message\r\ndata: ${JSON.stringify(ev('agent.message', { content: [{ type: 'text', text: 'héllo ✓' }] }))}\r\n\r\n`,
        ': keepalive\n\n',
        `event: message\ndata: {"type":"span.model_request_end",\ndata: "id":"s"}\n\n`,
        'data: {broken\n\n',
        `event: message\ndata: ${JSON.stringify(ev('session.status_idle'))}\n\n`,
      ].join('');
      const whole = decode(frames);
      expect(whole.map((i) => i.kind)).toEqual(['event', 'heartbeat', 'event', 'diagnostic', 'event']);
      fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 1, max: frames.length - 1 }), { maxLength: 12 }), (cuts) => {
          const sorted = [...cuts].sort((a, b) => a - b);
          const chunks: string[] = [];
          let at = 0;
          for (const c of sorted) {
            chunks.push(frames.slice(at, c));
            at = c;
          }
          chunks.push(frames.slice(at));
          expect(decode(...chunks)).toEqual(whole);
        }),
      );
    });
  });
});

describe('cmaEventStream', () => {
  let server: Server | undefined;
  let sub: Subscription | undefined;
  let onRequest: (res: ServerResponse) => void;
  let closes = 0;
  let base = '';

  beforeEach(async () => {
    closes = 0;
    server = createServer((req, res) => {
      res.on('close', () => closes++);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      onRequest(res);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    sub?.unsubscribe();
    server?.closeAllConnections();
    await new Promise<void>((r) => server!.close(() => r()));
  });

  const http = new LazyHttpClient(new HttpClientFactoryImpl(), { baseURL: '' });
  const open = async (signal: AbortSignal): Promise<Readable> =>
    (await http.get()).get<Readable>(`${base}/stream`, { responseType: 'stream', signal }).then((r) => r.data);

  /** Subscribes and resolves when the stream errors or completes. */
  function collect(idleTimeoutMs = 5_000): { items: StreamItem[]; done: Promise<{ error?: AgentRxError }> } {
    const items: StreamItem[] = [];
    const done = new Promise<{ error?: AgentRxError }>((resolve) => {
      sub = cmaEventStream(open, { idleTimeoutMs, target: 'GET /stream' }).subscribe({
        next: (i) => items.push(i),
        error: (e: AgentRxError) => resolve({ error: e }),
        complete: () => resolve({}),
      });
    });
    return { items, done };
  }

  const write = (res: ServerResponse, text: string): Promise<void> => new Promise((r) => res.write(text, () => r()));

  describe('when frames arrive in pieces and the session terminates', () => {
    it('should emit open, each event once, and complete on the clean end after the terminal', async () => {
      onRequest = (res) =>
        void (async () => {
          const text = `event: message\r\ndata: ${JSON.stringify(ev('agent.message'))}\r\n\r\nevent: message\ndata: ${JSON.stringify(ev('session.status_terminated'))}\n\n`;
          for (let i = 0; i < text.length; i += 7) await write(res, text.slice(i, i + 7));
          res.end();
        })();
      const { items, done } = collect();
      expect(await done).toEqual({});
      expect(items).toEqual([{ kind: 'open' }, { kind: 'event', event: ev('agent.message') }, { kind: 'event', event: ev('session.status_terminated') }]);
    });
  });

  describe('when the body ends cleanly before a terminal event', () => {
    it('should error with stream_error (a clean close is a drop)', async () => {
      onRequest = (res) => res.end(`event: message\ndata: ${JSON.stringify(ev('session.status_idle'))}\n\n`);
      const { items, done } = collect();
      const { error } = await done;
      expect(error).toMatchObject({ code: 'stream_error', message: expect.stringContaining('closed before the session ended (after 1 events)') });
      expect(items.map((i) => i.kind)).toEqual(['open', 'event']);
    });
  });

  describe('when the connection breaks mid-body', () => {
    it('should error with stream_error', async () => {
      onRequest = (res) => void write(res, `event: message\ndata: ${JSON.stringify(ev('agent.message'))}\n\n`).then(() => res.destroy());
      const { items, done } = collect();
      expect((await done).error).toMatchObject({ code: 'stream_error' });
      expect(items.map((i) => i.kind)).toEqual(['open', 'event']);
    });
  });

  describe('when the service sends an error frame', () => {
    it('should error with its message', async () => {
      onRequest = (res) => void write(res, 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n');
      const { done } = collect();
      expect((await done).error).toMatchObject({ code: 'stream_error', message: expect.stringContaining('(overloaded_error): Overloaded') });
    });
  });

  describe('when the body is silent longer than the idle timeout', () => {
    it('should error with an idle stream_error and abort the request', async () => {
      onRequest = (res) => void write(res, `event: message\ndata: ${JSON.stringify(ev('agent.message'))}\n\n`);
      const { done } = collect(80);
      expect((await done).error).toMatchObject({ code: 'stream_error', details: { idle: true, idleTimeoutMs: 80, events: 1 } });
      await new Promise<void>((r) => {
        const check = (): void => (closes === 1 ? r() : void setImmediate(check));
        check();
      });
    });

    it('should not fire while heartbeat comments keep arriving', async () => {
      // Only the timers are faked (sockets and setImmediate stay real): each heartbeat is sent, the
      // test waits until the reader has taken it (it re-arms its idle timer), then moves the clock
      // 200 ms. Ten of them: 2 s in all, eight times the idle timeout, with no gap as long as it.
      jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick', 'setImmediate'] });
      const arm = jest.spyOn(globalThis, 'setTimeout');
      const armed = (): number => arm.mock.calls.filter(([, ms]) => ms === 250).length;
      // Polled once per loop turn; a bound in turns, not in time (the faked clock does not run).
      const until = (ready: () => boolean, what: string): Promise<void> =>
        new Promise((resolve, reject) => {
          let turns = 0;
          const check = (): void => {
            if (ready()) resolve();
            else if (++turns > 10_000) reject(new Error(`${what}: not after 10,000 loop turns`));
            else setImmediate(check);
          };
          check();
        });
      let res: ServerResponse | undefined;
      onRequest = (r) => (res = r);
      try {
        const { items, done } = collect(250);
        await until(() => res !== undefined && armed() > 0, 'the reader armed its idle timer');
        for (let i = 0; i < 10; i++) {
          const before = armed();
          await write(res!, ': heartbeat\n\n');
          await until(() => armed() > before, `the reader took heartbeat ${i + 1}`);
          jest.advanceTimersByTime(200);
        }
        res!.end(`event: message\ndata: ${JSON.stringify(ev('session.deleted'))}\n\n`);
        expect(await done).toEqual({});
        expect(items.map((i) => i.kind)).toEqual(['open', 'event']);
      } finally {
        arm.mockRestore();
        jest.useRealTimers();
      }
    });
  });

  describe('when unsubscribed', () => {
    it('should abort the request', async () => {
      let opened!: () => void;
      const ready = new Promise<void>((r) => (opened = r));
      onRequest = (res) => void write(res, ': hi\n\n').then(opened);
      collect();
      await ready;
      sub!.unsubscribe();
      await new Promise<void>((r) => {
        const check = (): void => (closes === 1 ? r() : void setImmediate(check));
        check();
      });
      expect(closes).toBe(1);
    });
  });
});
