import { jest } from '@jest/globals';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpAgent } from '@ag-ui/client';
import { Subject } from 'rxjs';
import { createAgUiHandler, type AgUiHttpHandler, type AgUiSessionHost } from '../../../src/consumers/agui-http/agui-http.handler.js';
import { startAgUiServer, type AgUiServer } from '../../../src/consumers/agui-http/agui-http.server.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import type { SessionEvent } from '../../../src/core/events/session-event.js';
import { AgentRxError } from '../../../src/core/errors.js';
import type { Session } from '../../../src/core/session/session.js';
import { postJson, runInput, sseEvents } from './agui-http.fixtures.js';

type Script = (session: FakeSession, text: string, request: number) => void;

/**
 * A stand-in for a live Session: the test decides what its AG-UI stream carries. Like the real
 * one it emits nothing synchronously inside start()/message() (the script runs in a microtask).
 */
class FakeSession {
  readonly agui = new Subject<AgUiEvent>();
  readonly events = new Subject<SessionEvent>();
  readonly agui$ = this.agui.asObservable();
  readonly events$ = this.events.asObservable();
  readonly texts: string[] = [];
  readonly closed: Promise<void>;
  cancels = 0;
  closes = 0;
  /** When set, message() throws like a session that has just closed. */
  refuse = false;
  private markClosed!: () => void;

  constructor(private readonly script: Script, prompt: string) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.receive(prompt);
  }
  message(text: string): void {
    if (this.refuse) throw new AgentRxError('session_closed', 'the session is closed');
    this.receive(text);
  }
  cancel(): void {
    this.cancels++;
    this.end();
  }
  close(): void {
    this.closes++;
    this.end();
  }
  emit(...events: AgUiEvent[]): void {
    for (const e of events) this.agui.next(e);
  }
  /** A synthesized `agentrx.run_error` envelope, as the real session publishes on events$. */
  runError(code: string, message: string): void {
    this.events.next({ seq: 1, sessionId: 's', turn: 0, provider: 'fake', source: 'agentrx', raw: { type: 'agentrx.run_error', runId: '', threadId: '', code, message }, at: 0 });
  }
  end(): void {
    this.events.complete();
    this.agui.complete();
    this.markClosed();
  }
  private receive(text: string): void {
    this.texts.push(text);
    const n = this.texts.length;
    queueMicrotask(() => this.script(this, text, n));
  }
}

class FakeHost implements AgUiSessionHost {
  readonly sessions: FakeSession[] = [];
  constructor(private readonly script: Script) {}
  start(opts: { prompt?: string }): Session {
    const s = new FakeSession(this.script, opts.prompt ?? '');
    this.sessions.push(s);
    return s as unknown as Session;
  }
}

/** A whole run: RUN_STARTED, one text message with a fixed id, RUN_FINISHED (session-side ids). */
const answer = (s: FakeSession, messageId: string, text: string, n: number): void =>
  s.emit(
    { type: 'RUN_STARTED', threadId: 'session-thread', runId: `session-thread:run-${n}` },
    { type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text },
    { type: 'TEXT_MESSAGE_END', messageId },
    { type: 'RUN_FINISHED', threadId: 'session-thread', runId: `session-thread:run-${n}` },
  );

describe('createAgUiHandler', () => {
  let server: AgUiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  describe('when called with invalid options', () => {
    it('should throw invalid_config listing every problem, without the token', () => {
      const rx = new FakeHost(() => undefined);
      expect(() => createAgUiHandler({ rx, maxConcurrentRuns: 0, cors: ['https://ok.example', 'ftp://x', 'https://a.example/path'], token: '', basePath: 'agui/' })).toThrow(
        expect.objectContaining({
          code: 'invalid_config',
          details: {
            problems: [
              'token: token must be a non-empty secret string',
              'cors: each value in cors must be "*" or an origin such as https://app.example (scheme://host[:port], no path)',
              'maxConcurrentRuns: maxConcurrentRuns must not be less than 1',
              'basePath: basePath must be empty or start with "/" and not end with "/"',
            ],
          },
        }),
      );
      expect(() => createAgUiHandler({} as never)).toThrow(/options.rx must be an AgentRx instance/);
    });
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

  describe('when the thread\'s session has closed by the time its next request arrives', () => {
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
        s.emit({ type: 'RUN_STARTED', threadId: 'x', runId: 'x:run-1' }, { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' });
        s.runError('stream_error', 'the host went away');
        s.end();
      });
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput());
      expect(sseEvents(r.text)).toEqual([
        { type: 'RUN_STARTED', threadId: 'thread-1', runId: 'run-1' },
        { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' },
        { type: 'RUN_ERROR', message: 'the host went away', code: 'stream_error', timestamp: expect.any(Number) },
      ]);
      expect(server.handler.threadCount).toBe(0);
    });
  });

  describe('when the session dies before its run started', () => {
    it('should send a lone RUN_ERROR (no RUN_STARTED) and drop what came before it', async () => {
      const rx = new FakeHost((s) => {
        s.emit({ type: 'STATE_SNAPSHOT', snapshot: { early: true } });
        s.end();
      });
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput());
      expect(r.status).toBe(200);
      expect(sseEvents(r.text)).toEqual([{ type: 'RUN_ERROR', message: 'the session ended before the run finished', code: 'session_closed', timestamp: expect.any(Number) }]);
    });
  });

  describe('when the session sends a second terminal or a nested RUN_STARTED', () => {
    it('should end the stream at the first terminal and ignore the rest', async () => {
      const rx = new FakeHost((s) => {
        s.emit({ type: 'RUN_STARTED', threadId: 'x', runId: 'a' }, { type: 'RUN_STARTED', threadId: 'x', runId: 'b' }, { type: 'RUN_FINISHED', threadId: 'x', runId: 'a' }, { type: 'RUN_ERROR', message: 'late' });
      });
      server = await startAgUiServer({ rx, port: 0 });
      const r = await postJson(`${server.url}agent`, runInput());
      expect(sseEvents(r.text).map((e) => e.type)).toEqual(['RUN_STARTED', 'RUN_FINISHED']);
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

  describe('when starting the session throws', () => {
    it('should answer 503 naming the cause', async () => {
      const rx: AgUiSessionHost = {
        start: () => {
          throw Object.assign(new Error('this AgentRx instance is stopped'), { code: 'session_closed' });
        },
      };
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
      server = await startAgUiServer({ rx, port: 0, onSession: () => { throw new Error('observer bug'); } });
      const r = await postJson(`${server.url}agent`, runInput());
      expect(sseEvents(r.text).map((e) => e.type).at(-1)).toBe('RUN_FINISHED');
    });
  });

  describe('when mounted express-style with a prefix and a pre-parsed body', () => {
    let handler: AgUiHttpHandler;
    let url: string;
    let nextCalls: string[];
    let close: () => Promise<void>;
    beforeEach(async () => {
      const rx = new FakeHost((s, text, n) => answer(s, 'm', `echo ${text}`, n));
      handler = createAgUiHandler({ rx, basePath: '/agui' });
      nextCalls = [];
      // A tiny host: parses JSON bodies itself (like express.json()), then hands over with a next().
      const host = createServer((req: IncomingMessage, res: ServerResponse) => {
        const parts: Buffer[] = [];
        req.on('data', (c: Buffer) => parts.push(c));
        req.on('end', () => {
          if (parts.length > 0) (req as IncomingMessage & { body?: unknown }).body = JSON.parse(Buffer.concat(parts).toString());
          handler(req, res, () => {
            nextCalls.push(req.url ?? '');
            res.writeHead(418).end();
          });
        });
      });
      await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
      close = async () => {
        await handler.close();
        host.closeAllConnections();
        await new Promise<void>((r) => host.close(() => r()));
      };
    });
    afterEach(() => close());

    it('should route below basePath, use the parsed body, and call next() for other paths', async () => {
      const r = await postJson(`${url}/agui/agent`, runInput({}, 'parsed already'));
      expect(sseEvents(r.text).find((e) => e.type === 'TEXT_MESSAGE_CONTENT')).toMatchObject({ delta: 'echo parsed already' });
      expect((await fetch(`${url}/agui`)).status).toBe(200);
      expect((await fetch(`${url}/elsewhere`)).status).toBe(418);
      expect((await fetch(`${url}/agui/unknown`)).status).toBe(418);
      expect(nextCalls).toEqual(['/elsewhere', '/agui/unknown']);
    });
  });
});
