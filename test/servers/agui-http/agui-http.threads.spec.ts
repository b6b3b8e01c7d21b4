import { jest } from '@jest/globals';
import { HttpAgent } from '@ag-ui/client';
import { startAgUiServer, type AgUiServer } from '../../../src/servers/agui-http/agui-http.server.js';
import type { AgUiSessionHost } from '../../../src/servers/agui-http/agui-http.handler.js';
import type { LiveSession } from '../../../src/core/plugin/live-session.js';
import { InProcessPlacement } from '../../../src/core/session/in-process-placement.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { postJson, runInput, sseEvents } from './agui-http.fixtures.js';
import { map, share, tap } from 'rxjs';
import { toAgUi } from '../../../src/core/events/operators/index.js';
import { answer, FakeHost, FakeSession } from './agui-http.fake-session.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAgUiHandler } from '../../../src/servers/agui-http/agui-http.handler.js';

describe('AgUiThreads', () => {
  let server: AgUiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  describe('when a provider reuses message ids in every run of a thread', () => {
    it('should rename a repeated id so the client keeps the runs apart', async () => {
      const rx = new FakeHost((s, text, n) => answer(s, 'msg-1', `answer ${n} to ${text}`, n));
      server = await startAgUiServer({ rx, port: 0 });
      const agent = new HttpAgent({ url: `${server.url}agent`, threadId: 'thread-ids' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'one' });
      await agent.runAgent({ runId: 'r1' });
      agent.addMessage({ id: 'u2', role: 'user', content: 'two' });
      await agent.runAgent({ runId: 'r2' });

      expect(rx.sessions).toHaveLength(1);
      expect(rx.sessions[0]!.texts).toEqual(['one', 'two']);
      expect(agent.messages.map((m) => [m.id, m.content])).toEqual([
        ['u1', 'one'],
        ['msg-1', 'answer 1 to one'],
        ['u2', 'two'],
        ['msg-1@r2', 'answer 2 to two'],
      ]);
    });
  });

  describe('when the session translates its events to AG-UI', () => {
    it("should stream the session's own translation (agui$), not one of its own", async () => {
      const rx = new FakeHost((s, text, n) => answer(s, 'm', `answer to ${text}`, n));
      let translated = 0;
      rx.start = (opts) => {
        const s = new (class extends FakeSession {
          // What the endpoint streams must be this translation: it marks every text delta.
          override readonly agui$ = this.events$.pipe(
            toAgUi(),
            map((ev) => (ev.type === 'TEXT_MESSAGE_CONTENT' ? { ...ev, delta: `«${ev.delta}»` } : ev)),
            tap(() => translated++),
            share(),
          );
        })((s, text, n) => answer(s, 'm', `answer to ${text}`, n), opts.prompt ?? '', 'fake-session-1');
        rx.sessions.push(s);
        return s;
      };
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput({}, 'one'));
      const events = sseEvents(r.text);
      expect(events.find((e) => e.type === 'TEXT_MESSAGE_CONTENT')).toMatchObject({ delta: '«answer to one»' });
      // Each AG-UI event was translated once: the stream's events minus the endpoint's own MESSAGES_SNAPSHOT.
      expect(translated).toBe(events.length - 1);
    });
  });

  describe("when the thread's session has closed by the time its next request arrives", () => {
    it('should start a new session for the thread', async () => {
      const rx = new FakeHost((s, text, n) => answer(s, `m-${text}`, `answer to ${text}`, n));
      server = await startAgUiServer({ rx, port: 0 });
      await postJson(`${server.url}agent`, runInput({ runId: 'r1' }, 'one'));
      rx.sessions[0]!.refuse = true;
      const r = await postJson(`${server.url}agent`, runInput({ runId: 'r2' }, 'two'));
      expect(sseEvents(r.text).find((e) => e.type === 'TEXT_MESSAGE_CONTENT')).toMatchObject({ delta: 'answer to two' });
      expect(rx.sessions.map((s) => s.texts)).toEqual([['one'], ['two']]);
      expect(server.handler.threadCount).toBe(1);
    });
  });

  describe('when the session stream ends without a terminal event', () => {
    it('should send exactly one RUN_ERROR with the session error', async () => {
      const rx = new FakeHost((s) => {
        s.emit({ type: 'RUN_STARTED', threadId: 'x', runId: 'x:run-1' }, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'half' });
        s.runError('stream_error', 'the host went away');
        s.end();
      });
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput());
      expect(sseEvents(r.text)).toEqual([
        { type: 'RUN_STARTED', threadId: 'thread-1', runId: 'run-1', timestamp: expect.any(Number) },
        { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant', timestamp: expect.any(Number) },
        { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'half', timestamp: expect.any(Number) },
        { type: 'TEXT_MESSAGE_END', messageId: 'm', timestamp: expect.any(Number) },
        { type: 'RUN_ERROR', message: "the agent's event stream broke off", code: 'stream_error', timestamp: expect.any(Number) },
      ]);
      expect(server.handler.threadCount).toBe(0);
    });
  });

  describe('when the session dies before its run started', () => {
    it('should send a lone RUN_ERROR (no RUN_STARTED) and drop what came before it', async () => {
      const rx = new FakeHost((s) => {
        // A text delta outside a run translates to nothing.
        s.publish({ type: 'agentrx.text_delta', text: 'early', messageId: 'm' });
        s.end();
      });
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput());
      expect(r.status).toBe(200);
      expect(sseEvents(r.text)).toEqual([
        { type: 'RUN_ERROR', message: 'the session ended before the run finished', code: 'session_closed', timestamp: expect.any(Number) },
      ]);
    });
  });

  describe('when the session sends a second terminal or a nested RUN_STARTED', () => {
    it('should end the stream at the first terminal and ignore the rest', async () => {
      const rx = new FakeHost((s) => {
        s.emit(
          { type: 'RUN_STARTED', threadId: 'x', runId: 'a' },
          { type: 'RUN_STARTED', threadId: 'x', runId: 'b' },
          { type: 'RUN_FINISHED', threadId: 'x', runId: 'a' },
          { type: 'RUN_ERROR', message: 'late' },
        );
      });
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput());
      expect(sseEvents(r.text).map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    });
  });

  describe('when the thread has been idle for threadIdleMs, or maxThreads is reached', () => {
    it('should close the least recently used idle session for a new thread', async () => {
      const rx = new FakeHost((s, text, n) => answer(s, `m-${text}`, 'ok', n));
      server = await startAgUiServer({ rx, port: 0, maxThreads: 2 });
      for (const threadId of ['t1', 't2', 't3']) await postJson(`${server.url}agent`, runInput({ threadId }));
      expect(rx.sessions.map((s) => s.closes)).toEqual([1, 0, 0]);
      expect(server.handler.threadCount).toBe(2);
    });

    it('should close the least recently used idle sessions beyond maxIdleThreads at once', async () => {
      const rx = new FakeHost((s, text, n) => answer(s, `m-${text}`, 'ok', n));
      server = await startAgUiServer({ rx, port: 0, maxIdleThreads: 1 });
      for (const threadId of ['t1', 't2', 't3']) await postJson(`${server.url}agent`, runInput({ threadId }));
      expect(rx.sessions.map((s) => s.closes)).toEqual([1, 1, 0]);
      expect(server.handler.threadCount).toBe(1);
    });

    it('should start the next run of a thread whose session is closing only once it has closed', async () => {
      const rx = new FakeHost((s, text, n) => answer(s, `m-${text}`, 'ok', n));
      let closing: FakeSession | undefined;
      const startedWhileClosing: boolean[] = [];
      const start = rx.start.bind(rx);
      rx.start = (opts) => {
        startedWhileClosing.push(closing !== undefined);
        const s = start(opts);
        s.holdClose = true; // like a store still releasing the session
        return s;
      };
      const handler = createAgUiHandler({ rx, maxIdleThreads: 0 });
      const http = createServer((req, res) => {
        // Once the handler has the whole body, and every microtask after it has run, the close completes.
        const s = closing;
        if (s) req.on('end', () => setImmediate(() => ((closing = undefined), s.finishClose())));
        handler(req, res);
      });
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/agent`;
      try {
        await postJson(url, runInput({ runId: 'r1' }));
        closing = rx.sessions[0];
        expect(closing!.closes).toBe(1);
        const r = await postJson(url, runInput({ runId: 'r2' }));
        expect(sseEvents(r.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'r2' });
        expect(startedWhileClosing).toEqual([false, false]);
      } finally {
        await handler.close();
        http.closeAllConnections();
        await new Promise((resolve) => http.close(resolve));
      }
    });

    it('should close a session that stayed idle', async () => {
      jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick', 'setImmediate'] });
      try {
        const rx = new FakeHost((s, text, n) => answer(s, 'm', 'ok', n));
        server = await startAgUiServer({ rx, port: 0, threadIdleMs: 60_000 });
        await postJson(`${server.url}agent`, runInput());
        jest.advanceTimersByTime(59_999);
        expect(rx.sessions[0]!.closes).toBe(0);
        jest.advanceTimersByTime(1);
        expect(rx.sessions[0]!.closes).toBe(1);
        expect(server.handler.threadCount).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe('when a client aborts a run and sends the next one at once', () => {
    it('should wait for the aborted run to end instead of answering 409', async () => {
      const rx = new FakeHost((s, text, n) =>
        text === 'hang'
          ? s.emit({ type: 'RUN_STARTED', threadId: 'x', runId: 'x:run-1' }, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'working' })
          : answer(s, `m-${text}`, 'ok', n),
      );
      const handler = createAgUiHandler({ rx });
      const first = new AbortController();
      let abortOnNextBody = false;
      const http = createServer((req, res) => {
        // The abort reaches the server only after the next request's body: the order a fast client can produce.
        if (abortOnNextBody) req.on('end', () => setImmediate(() => first.abort()));
        handler(req, res);
      });
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/agent`;
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(runInput({ runId: 'r1' }, 'hang')),
          signal: first.signal,
        });
        const reader = res.body!.getReader();
        let seen = '';
        while (!seen.includes('TEXT_MESSAGE_CONTENT')) {
          const { done, value } = await reader.read();
          // An ended stream reads done at once, again and again: fail rather than spin.
          if (done) throw new Error(`the stream ended before a TEXT_MESSAGE_CONTENT: ${seen}`);
          seen += new TextDecoder().decode(value);
        }
        abortOnNextBody = true;
        const r = await postJson(url, runInput({ runId: 'r2' }, 'again'));
        expect(r.status).toBe(200);
        expect(sseEvents(r.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'r2' });
        expect(rx.sessions.map((s) => s.cancels)).toEqual([1, 0]);
      } finally {
        await handler.close();
        http.closeAllConnections();
        await new Promise((resolve) => http.close(resolve));
      }
    });
  });

  describe('when starting the session throws', () => {
    it('should answer 503 naming the cause', async () => {
      const factory = {
        start: (): LiveSession => {
          throw Object.assign(new Error('this AgentRx instance is stopped'), { code: 'session_closed' });
        },
      };
      const rx: AgUiSessionHost = { placement: new InProcessPlacement(factory, new MemorySessionStore()) };
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput());
      expect(r.status).toBe(503);
      expect(r.json.error).toBe('unavailable');
      expect(r.json.message).toContain('this AgentRx instance is stopped');
      expect(server.handler.activeRuns).toBe(0);
    });
  });

  describe('when onSession throws', () => {
    it('should still stream the run', async () => {
      const rx = new FakeHost((s, text, n) => answer(s, 'm', 'fine', n));
      server = await startAgUiServer({
        rx,
        port: 0,
        onSession: () => {
          throw new Error('observer bug');
        },
      });
      const r = await postJson(`${server.url}agent`, runInput());
      expect(
        sseEvents(r.text)
          .map((e) => e.type)
          .at(-1),
      ).toBe('RUN_FINISHED');
    });
  });

  describe('when the host asks to confirm tools of its own and no confirmTool is set', () => {
    const confirming = (toolUses: readonly { id: string; name: string; input: Record<string, unknown> }[]) =>
      new FakeHost((s) => {
        s.emit({ type: 'RUN_STARTED', threadId: 'x', runId: 'x:run-1' });
        s.publish({ type: 'agentrx.confirmation_required', toolUses: [...toolUses] });
      });

    it('should end the run with an interrupt per tool and keep the session waiting for the answers', async () => {
      const rx = confirming([
        { id: 'sevt_1', name: 'web_search', input: { query: 'q' } },
        { id: 'sevt_2', name: 'web_fetch', input: { url: 'https://example.com' } },
      ]);
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput());
      const events = sseEvents(r.text);
      expect(events.map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
      expect(events[2]!.outcome).toMatchObject({
        type: 'interrupt',
        interrupts: [
          { id: 'sevt_1', toolCallId: 'sevt_1' },
          { id: 'sevt_2', toolCallId: 'sevt_2' },
        ],
      });
      expect(rx.sessions[0]!.cancels).toBe(0);
      expect(server.handler.threadCount).toBe(1);
      expect(server.handler.activeRuns).toBe(0);
    });

    it('should end the run with one RUN_ERROR when it names no tool, cancel the session and forget the thread', async () => {
      const rx = confirming([]);
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput());
      const events = sseEvents(r.text);
      expect(events.map((e) => e.type)).toEqual(['RUN_STARTED', 'RUN_ERROR']);
      expect(events[1]).toMatchObject({ code: 'unresolved_requires_action', message: expect.stringContaining('confirm a tool before running it') });
      expect(rx.sessions[0]!.cancels).toBe(1);
      expect(server.handler.threadCount).toBe(0);
      expect(server.handler.activeRuns).toBe(0);
    });
  });
});
