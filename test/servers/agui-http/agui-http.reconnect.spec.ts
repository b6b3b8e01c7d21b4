import { startAgUiServer, type AgUiServer } from '../../../src/servers/agui-http/agui-http.server.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { SESSION_LOG_VERSION } from '../../../src/core/store/session-store.js';
import { answer, FakeHost, type FakeSession } from './agui-http.fake-session.js';
import { openStream, postJson, readReply, runInput, sseFrames, type JsonBody } from './agui-http.fixtures.js';

/** Runs one whole answer: envelopes 1 run_started, 2 text_delta, 3 run_finished. */
const script = (s: FakeSession, text: string, n: number): void => answer(s, 'm', `answer to ${text}`, n);

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; json: JsonBody; text: string }> {
  return readReply(await fetch(url, { headers: { accept: 'text/event-stream', ...headers } }));
}

describe('AgUiReconnects', () => {
  let servers: AgUiServer[] = [];
  let store: MemorySessionStore;
  let host: FakeHost;
  let server: AgUiServer;
  beforeEach(async () => {
    store = new MemorySessionStore();
    host = new FakeHost(script, store);
    server = await startAgUiServer({ rx: host, port: 0 });
    servers = [server];
  });
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  describe('POST /agent', () => {
    describe('when a run streams as SSE', () => {
      it('should put id: <seq> on the last frame of each envelope only', async () => {
        const r = await postJson(`${server.url}agent`, runInput({ runId: 'client-run' }));
        expect(sseFrames(r.text).map((f) => [f.event.type, f.id])).toEqual([
          ['RUN_STARTED', '1'],
          ['TEXT_MESSAGE_START', undefined],
          ['TEXT_MESSAGE_CONTENT', '2'],
          ['TEXT_MESSAGE_END', undefined],
          ['MESSAGES_SNAPSHOT', undefined],
          ['RUN_FINISHED', '3'],
        ]);
        expect(host.sessions[0]!.log.map((e) => e.seq)).toEqual([1, 2, 3]);
      });
    });

    describe('when it carries Last-Event-ID', () => {
      it('should replay every frame after that envelope with the client ids, and send no message', async () => {
        await postJson(`${server.url}agent`, runInput({ runId: 'client-run' }));
        const r = await postJson(`${server.url}agent`, runInput({ runId: 'client-run' }), { 'last-event-id': '1' });
        expect(r.status).toBe(200);
        expect(sseFrames(r.text).map((f) => [f.event.type, f.id])).toEqual([
          ['TEXT_MESSAGE_START', undefined],
          ['TEXT_MESSAGE_CONTENT', '2'],
          ['TEXT_MESSAGE_END', undefined],
          // The run's conversation before its end, as the live stream sends it.
          ['MESSAGES_SNAPSHOT', undefined],
          ['RUN_FINISHED', '3'],
        ]);
        expect(sseFrames(r.text).at(-1)!.event).toMatchObject({ threadId: 'thread-1', runId: 'client-run' });
        expect(host.sessions[0]!.texts).toEqual(['hello']);
      });

      it('should answer 400 for an id that is not a decimal number', async () => {
        await postJson(`${server.url}agent`, runInput());
        const r = await postJson(`${server.url}agent`, runInput(), { 'last-event-id': 'abc' });
        expect(r.status).toBe(400);
        expect(r.json).toMatchObject({ error: 'invalid_last_event_id', message: expect.stringContaining('"abc"') });
      });

      it("should answer 400 for an id beyond the end of the thread's log", async () => {
        await postJson(`${server.url}agent`, runInput());
        const r = await postJson(`${server.url}agent`, runInput(), { 'last-event-id': '4' });
        expect(r.status).toBe(400);
        expect(r.json).toMatchObject({ error: 'invalid_last_event_id', message: expect.stringContaining('its last event id is 3') });
      });

      it('should answer 400 for a thread with no session log', async () => {
        await postJson(`${server.url}agent`, runInput());
        const r = await postJson(`${server.url}agent`, runInput({ threadId: 'other-thread' }), { 'last-event-id': '1' });
        expect(r.status).toBe(400);
        expect(r.json).toMatchObject({ error: 'unknown_thread', message: expect.stringContaining('other-thread') });
        expect(host.sessions).toHaveLength(1);
      });
    });
  });

  describe('when a client disconnects mid-run', () => {
    it('should keep the run going for reconnectGraceMs, then cancel it', async () => {
      const open = new FakeHost((s) => s.emit({ type: 'RUN_STARTED', threadId: 'x', runId: 'x:run-1' }), store);
      const graced = await startAgUiServer({ rx: open, port: 0, reconnectGraceMs: 200 });
      servers.push(graced);
      const stream = await openStream(`${graced.url}agent`, runInput(), (e) => e.type === 'RUN_STARTED');
      const left = Date.now();
      stream.abort();
      await open.sessions[0]!.closed;
      expect(Date.now() - left).toBeGreaterThanOrEqual(190);
      expect(open.sessions[0]!.cancels).toBe(1);
      expect(graced.handler.activeRuns).toBe(0);
    });

    it('should not cancel a run a reconnected client follows', async () => {
      const open = new FakeHost((s) => s.emit({ type: 'RUN_STARTED', threadId: 'x', runId: 'x:run-1' }), store);
      const graced = await startAgUiServer({ rx: open, port: 0, reconnectGraceMs: 200 });
      servers.push(graced);
      const stream = await openStream(`${graced.url}agent`, runInput({ runId: 'r1' }), (e) => e.type === 'RUN_STARTED');
      const follower = await fetch(`${graced.url}threads/thread-1/events?after=1`);
      const reading = follower.text();
      stream.abort();
      // A check that nothing happens: twice the grace passes without a cancel.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(open.sessions[0]!.cancels).toBe(0);
      open.sessions[0]!.emit({ type: 'RUN_FINISHED', threadId: 'x', runId: 'x:run-1' });
      expect(sseFrames(await reading).map((f) => [f.event.type, f.id])).toEqual([
        ['MESSAGES_SNAPSHOT', undefined],
        ['RUN_FINISHED', '2'],
      ]);
      expect(open.sessions[0]!.cancels).toBe(0);
      expect(graced.handler.activeRuns).toBe(0);
    });
  });

  describe('GET /threads/:threadId/events', () => {
    describe('when called with ?after=<id> or Last-Event-ID', () => {
      it('should replay the frames after that id', async () => {
        await postJson(`${server.url}agent`, runInput({ runId: 'client-run' }));
        const byQuery = await get(`${server.url}threads/thread-1/events?after=2`);
        const byHeader = await get(`${server.url}threads/thread-1/events`, { 'last-event-id': '2' });
        expect(byQuery.status).toBe(200);
        expect(sseFrames(byQuery.text).map((f) => [f.event.type, f.id])).toEqual([
          ['TEXT_MESSAGE_END', undefined],
          ['MESSAGES_SNAPSHOT', undefined],
          ['RUN_FINISHED', '3'],
        ]);
        expect(byHeader.text).toBe(byQuery.text);
      });
    });

    describe('when called without an id', () => {
      it("should send the thread's last run from its RUN_STARTED, with the client ids", async () => {
        await postJson(`${server.url}agent`, runInput({ runId: 'r1' }, 'one'));
        await postJson(`${server.url}agent`, runInput({ runId: 'r2' }, 'two'));
        const r = await get(`${server.url}threads/thread-1/events`);
        expect(r.status).toBe(200);
        expect(sseFrames(r.text).map((f) => [f.event.type, f.id])).toEqual([
          ['RUN_STARTED', '4'],
          // A reader from the run's start (a reloaded page) gets the conversation the run started with.
          ['MESSAGES_SNAPSHOT', undefined],
          ['TEXT_MESSAGE_START', undefined],
          ['TEXT_MESSAGE_CONTENT', '5'],
          ['TEXT_MESSAGE_END', undefined],
          ['MESSAGES_SNAPSHOT', undefined],
          ['RUN_FINISHED', '6'],
        ]);
        const frames = sseFrames(r.text);
        expect(frames[0]!.event).toMatchObject({ runId: 'r2' });
        expect(frames[1]!.event).toMatchObject({ messages: [expect.objectContaining({ role: 'user', content: 'two' })] });
        // The same message id as in run r1: renamed as on the live stream.
        expect(frames[3]!.event).toMatchObject({ messageId: 'm@r2', delta: 'answer to two' });
        expect(frames[5]!.event).toMatchObject({
          messages: [
            expect.objectContaining({ role: 'user', content: 'two' }),
            expect.objectContaining({ id: 'm@r2', role: 'assistant', content: 'answer to two' }),
          ],
        });
      });
    });

    describe('when another server shares the store', () => {
      it('should serve a thread the first server streamed, from the log', async () => {
        await postJson(`${server.url}agent`, runInput({ runId: 'client-run' }));
        // The record names the client's thread (what the Session writes when told the thread id).
        const now = Date.now();
        await store.save({
          version: SESSION_LOG_VERSION,
          sessionId: 'fake-session-1',
          provider: 'fake',
          threadId: 'thread-1',
          status: 'idle',
          createdAt: now,
          updatedAt: now,
          ledger: [],
        });
        const other = await startAgUiServer({ rx: new FakeHost(script, store), store, port: 0 });
        servers.push(other);
        const r = await get(`${other.url}threads/thread-1/events?after=1&runId=client-run`);
        expect(sseFrames(r.text).map((f) => [f.event.type, f.id])).toEqual([
          ['TEXT_MESSAGE_START', undefined],
          ['TEXT_MESSAGE_CONTENT', '2'],
          ['TEXT_MESSAGE_END', undefined],
          ['RUN_FINISHED', '3'],
        ]);
        expect(sseFrames(r.text).at(-1)!.event).toMatchObject({ threadId: 'thread-1', runId: 'client-run' });
      });
    });

    describe("when the endpoint closes while a reconnected client follows another server's run", () => {
      it('should end that stream with one RUN_ERROR cancelled', async () => {
        const open = new FakeHost((s) => s.emit({ type: 'RUN_STARTED', threadId: 'x', runId: 'x:run-1' }), store);
        const first = await startAgUiServer({ rx: open, port: 0 });
        servers.push(first);
        const stream = await openStream(`${first.url}agent`, runInput(), (e) => e.type === 'RUN_STARTED');
        const now = Date.now();
        await store.save({
          version: SESSION_LOG_VERSION,
          sessionId: 'fake-session-1',
          provider: 'fake',
          threadId: 'thread-1',
          status: 'running',
          createdAt: now,
          updatedAt: now,
          ledger: [],
        });
        const other = await startAgUiServer({ rx: new FakeHost(script, store), store, port: 0 });
        servers.push(other);
        const res = await fetch(`${other.url}threads/thread-1/events?after=0`);
        const reading = res.text();
        await other.handler.close();
        expect(sseFrames(await reading).map((f) => [f.event.type, f.event.code])).toEqual([
          ['RUN_STARTED', undefined],
          ['RUN_ERROR', 'cancelled'],
        ]);
        expect(other.handler.activeReconnects).toBe(0);
        stream.abort();
      });
    });

    describe("when the thread's session closes before its run's terminal", () => {
      it('should end the reconnected stream with one RUN_ERROR session_closed', async () => {
        const open = new FakeHost(
          (s) => s.emit({ type: 'RUN_STARTED', threadId: 'x', runId: 'x:run-1' }, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'half' }),
          store,
        );
        const local = await startAgUiServer({ rx: open, port: 0 });
        servers.push(local);
        const first = await openStream(`${local.url}agent`, runInput(), (e) => e.type === 'TEXT_MESSAGE_CONTENT');
        const res = await fetch(`${local.url}threads/thread-1/events?after=1`);
        expect(res.status).toBe(200);
        const reading = res.text();
        open.sessions[0]!.end();
        const frames = sseFrames(await reading);
        expect(frames.map((f) => [f.event.type, f.id])).toEqual([
          ['TEXT_MESSAGE_START', undefined],
          ['TEXT_MESSAGE_CONTENT', '2'],
          ['RUN_ERROR', undefined],
        ]);
        expect(frames.at(-1)!.event).toMatchObject({ code: 'session_closed' });
        expect((await first.readToEnd()).map((e) => e.type).at(-1)).toBe('RUN_ERROR');
        expect(local.handler.activeReconnects).toBe(0);
      });
    });

    describe('when the request is bad', () => {
      it('should answer 400 with the reason', async () => {
        await postJson(`${server.url}agent`, runInput());
        expect((await get(`${server.url}threads/thread-1/events?after=-1`)).json).toMatchObject({ error: 'invalid_last_event_id' });
        expect((await get(`${server.url}threads/thread-1/events`, { 'last-event-id': '1.5' })).status).toBe(400);
        expect((await get(`${server.url}threads/thread-1/events?after=99`)).json).toMatchObject({ error: 'invalid_last_event_id' });
        expect((await get(`${server.url}threads/nobody/events?after=1`)).json).toMatchObject({ error: 'unknown_thread' });
        const post = await fetch(`${server.url}threads/thread-1/events`, { method: 'POST' });
        expect(post.status).toBe(405);
      });
    });
  });
});
