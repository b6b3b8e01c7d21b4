/**
 * The AG-UI endpoint on AgentRx clients in `runtime.mode: 'distributed'`: two endpoints (nodes A
 * and B) share one Redis with a worker in the same process. Each thread's session is submitted to
 * the pool and streamed from Redis; any node serves any stream (Last-Event-ID on B for a run
 * started on A), a follow-up run on B continues the same session, an aborted client cancels it,
 * and `GET /healthz` reports Redis.
 */
import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { AgentRx } from '../../src/agentrx.js';
import { startAgUiServer, type AgUiServer } from '../../src/servers/agui-http/agui-http.server.js';
import { openStream, runInput, sseFrames } from '../servers/agui-http/agui-http.fixtures.js';
import { DistributedKeys } from '../../src/distributed/distributed-keys.js';
import { openRedis } from '../../src/distributed/redis-link.js';
import { describeWithRedis } from '../support/redis-server.js';
import { DistributedWorld, until } from './distributed-fixture.js';
import { droppingFetch } from '../servers/agui-http/agui-http.dropping-fetch.js';
import { GateToolHandler } from '../fakes/gate-tool.js';

const PASSWORD = 'n0de-Pa55word';
const THREAD = 'thread-nodes';
const SCRIPT = [
  { text: 'Waiting at the gate.', toolCalls: [{ id: 'call_gate', name: 'gate', arguments: { text: 'one' } }] },
  { text: 'Through the gate, all done.' },
  { text: 'Second run, served by node B.' },
];

const strip = (e: object): object => {
  const { timestamp: _t, rawEvent: _r, ...rest } = e as Record<string, unknown>;
  return rest;
};

describeWithRedis('AG-UI endpoint in runtime.mode distributed', () => {
  let world: DistributedWorld;
  let servers: AgUiServer[];

  beforeEach(() => {
    GateToolHandler.reset();
    servers = [];
  });
  afterEach(async () => {
    GateToolHandler.open();
    for (const s of servers) await s.close();
    await world.close();
  });

  /** A client node: an AgentRx configured for the pool (store and queue on Redis), behind an AG-UI server. */
  async function node(opts: { reconnectGraceMs?: number } = {}): Promise<{ rx: AgentRx; server: AgUiServer }> {
    const rx = await AgentRx.create({
      config: {
        logLevel: 'silent',
        consumers: { terminal: false },
        store: { type: 'redis', url: world.redis.url, leaseMs: 1_000 },
        runtime: { mode: 'distributed', queueName: world.queueName },
      },
    });
    world.instances.push(rx);
    const server = await startAgUiServer({ rx, port: 0, ...opts });
    servers.push(server);
    return { rx, server };
  }

  describe('when a client of node A drops mid-run and reconnects to node B with Last-Event-ID, then runs again on B', () => {
    it('should get exactly the events after that id from B, and the follow-up run should continue the same session', async () => {
      world = await DistributedWorld.start(SCRIPT, { password: PASSWORD });
      await world.worker([GateToolHandler]);
      const a = await node({ reconnectGraceMs: 60_000 });
      const b = await node({ reconnectGraceMs: 60_000 });

      const drop = droppingFetch(`${b.server.url}agent`, (ev) => ev.type === 'TOOL_CALL_END');
      const agent = new HttpAgent({ url: `${a.server.url}agent`, threadId: THREAD, fetch: drop.fetch });
      agent.addMessage({ id: 'u1', role: 'user', content: 'Go through the gate' });
      const events: BaseEvent[] = [];
      const failures: unknown[] = [];
      const subscriber: AgentSubscriber = { onEvent: ({ event }) => void events.push(event), onRunFailed: ({ error }) => void failures.push(error) };
      const running = agent.runAgent({ runId: 'client-run-1' }, subscriber);
      await GateToolHandler.started;
      await drop.seen.reconnected;
      GateToolHandler.open();
      await running;

      expect(failures).toEqual([]);
      // What an uninterrupted client would have seen, read by node B from the shared log.
      const reference = sseFrames(await fetch(`${b.server.url}threads/${THREAD}/events?runId=client-run-1`).then((r) => r.text()));
      const n = Number(drop.seen.resumedFrom);
      expect(n).toBeGreaterThan(0);
      // No duplicate, no gap: the first stream (node A) up to id n, then exactly the frames after n (node B).
      expect([...drop.seen.first, ...drop.seen.second]).toEqual(reference.map((f) => ({ type: f.event.type, id: f.id })));
      expect(drop.seen.second.find((f) => f.id !== undefined)!.id).toBe(reference.map((f) => f.id).find((id) => id !== undefined && Number(id) > n));
      expect(drop.seen.first.map((f) => f.type)).toContain('TOOL_CALL_END');
      expect(drop.seen.second.map((f) => f.type)).toEqual(expect.arrayContaining(['TOOL_CALL_RESULT', 'RUN_FINISHED']));
      expect(drop.seen.second[0]!.type).not.toBe('RUN_STARTED');
      // The client's verified (@ag-ui/client) stream is the whole run, event for event.
      expect(events.map(strip)).toEqual(reference.map((f) => strip(f.event)));
      expect(GateToolHandler.runs).toBe(1);

      // The follow-up run of the thread, on node B: the same live session on the worker gets the message.
      const again = new HttpAgent({ url: `${b.server.url}agent`, threadId: THREAD, initialMessages: agent.messages });
      again.addMessage({ id: 'u2', role: 'user', content: 'And now?' });
      const failures2: unknown[] = [];
      const second: BaseEvent[] = [];
      await again.runAgent(
        { runId: 'client-run-2' },
        { onEvent: ({ event }) => void second.push(event), onRunFailed: ({ error }) => void failures2.push(error) },
      );
      expect(failures2).toEqual([]);
      expect(second[0]).toMatchObject({ type: 'RUN_STARTED', threadId: THREAD, runId: 'client-run-2' });
      expect(second.filter((e) => e.type === 'RUN_FINISHED')).toEqual([expect.objectContaining({ runId: 'client-run-2' })]);
      const texts = again.messages.flatMap((m) => (m.role === 'assistant' && typeof m.content === 'string' ? [m.content] : []));
      expect(texts).toEqual(['Waiting at the gate.', 'Through the gate, all done.', 'Second run, served by node B.']);
      // One submission, one session: the worker ran one job, and the model saw the whole conversation.
      expect(world.logs.filter((l) => / job sub-\S+ started/.test(l))).toHaveLength(1);
      const third = world.emu.requests.filter((r) => r.completion !== undefined)[2]!.body as { messages: { role: string; content: unknown }[] };
      expect(third.messages.map((m) => m.content)).toEqual(expect.arrayContaining(['Go through the gate', 'And now?']));
      const records = (await a.rx.sessionStore.list()).filter((r) => r.threadId === THREAD);
      expect(records).toHaveLength(1);
      // Nothing the clients or the logs saw carries the Redis password.
      expect(JSON.stringify([events, second, world.logs])).not.toContain(PASSWORD);
    }, 60_000);
  });

  describe('when the client of a run aborts and the endpoint has no reconnect grace', () => {
    it('should cancel the session on the worker', async () => {
      world = await DistributedWorld.start(SCRIPT);
      await world.worker([GateToolHandler]);
      const a = await node();
      const stream = await openStream(
        `${a.server.url}agent`,
        runInput({ threadId: 'thread-abort', runId: 'r1' }, 'Go through the gate'),
        (ev) => ev.type === 'TOOL_CALL_END',
      );
      await GateToolHandler.started;
      stream.abort();
      await until(
        async () => (await a.rx.sessionStore.list()).some((r) => r.threadId === 'thread-abort' && r.status === 'cancelled'),
        15_000,
        'the session to be cancelled',
      );
      await until(() => a.server.handler.activeRuns === 0 && a.server.handler.threadCount === 0, 5_000, 'the endpoint to forget the thread');
      expect(GateToolHandler.runs).toBe(1);
    }, 30_000);
  });

  describe("when the client of a run on node A leaves and a reader on node B follows the run past A's reconnect grace", () => {
    it("should not cancel the run, and B's reader should get it to its end", async () => {
      world = await DistributedWorld.start(SCRIPT);
      await world.worker([GateToolHandler]);
      const a = await node({ reconnectGraceMs: 200 });
      const b = await node();
      const stream = await openStream(
        `${a.server.url}agent`,
        runInput({ threadId: 'thread-follow', runId: 'r1' }, 'Go through the gate'),
        (ev) => ev.type === 'TOOL_CALL_END',
      );
      await GateToolHandler.started;
      const follower = await fetch(`${b.server.url}threads/thread-follow/events?runId=r1`);
      expect(follower.status).toBe(200);
      const reading = follower.text();
      // B's reader is announced in Redis before A's client leaves.
      const redis = await openRedis(world.redis.url, 'test');
      try {
        await until(
          async () => (await redis.zcount(new DistributedKeys().followers('thread-follow'), Date.now(), '+inf')) === 1,
          5_000,
          'the reader to be announced',
        );
      } finally {
        redis.disconnect();
      }
      stream.abort();
      // A check that nothing happens: the grace passes three times without a cancel.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await a.rx.sessionStore.list()).find((r) => r.threadId === 'thread-follow')?.status).not.toBe('cancelled');
      expect(a.server.handler.activeRuns).toBe(1);
      GateToolHandler.open();
      const frames = sseFrames(await reading);
      expect(frames[0]!.event).toMatchObject({ type: 'RUN_STARTED', runId: 'r1' });
      expect(frames.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', runId: 'r1' });
      await until(() => a.server.handler.activeRuns === 0, 5_000, 'node A to see the run end');
      expect(GateToolHandler.runs).toBe(1);
    }, 30_000);
  });

  describe('when the client of a run leaves, nobody follows it, and the reconnect grace passes', () => {
    it('should cancel the session on the worker', async () => {
      world = await DistributedWorld.start(SCRIPT);
      await world.worker([GateToolHandler]);
      const a = await node({ reconnectGraceMs: 200 });
      const stream = await openStream(
        `${a.server.url}agent`,
        runInput({ threadId: 'thread-gone', runId: 'r1' }, 'Go through the gate'),
        (ev) => ev.type === 'TOOL_CALL_END',
      );
      await GateToolHandler.started;
      const left = Date.now();
      stream.abort();
      await until(
        async () => (await a.rx.sessionStore.list()).some((r) => r.threadId === 'thread-gone' && r.status === 'cancelled'),
        15_000,
        'the session to be cancelled',
      );
      expect(Date.now() - left).toBeGreaterThanOrEqual(190);
    }, 30_000);
  });

  describe('when a second request of a thread arrives while its session is still being submitted', () => {
    it('should answer it 409 thread_busy and run the first', async () => {
      world = await DistributedWorld.start([{ text: 'Only once.' }]);
      await world.worker();
      const a = await node();
      const [first, second] = await Promise.all([
        fetch(`${a.server.url}agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(runInput({ threadId: 'thread-race', runId: 'r1' }, 'one')),
        }),
        fetch(`${a.server.url}agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(runInput({ threadId: 'thread-race', runId: 'r2' }, 'two')),
        }),
      ]);
      const statuses = [first.status, second.status].sort();
      expect(statuses).toEqual([200, 409]);
      const ok = first.status === 200 ? first : second;
      const busy = first.status === 200 ? second : first;
      expect(await busy.json()).toMatchObject({ error: 'thread_busy' });
      const events = sseFrames(await ok.text()).map((f) => f.event);
      expect(events[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'thread-race' });
      expect(events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e['delta'])).toEqual(['Only once.']);
      expect(events.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR')).toEqual([events[events.length - 1]]);
      expect(events[events.length - 1]!.type).toBe('RUN_FINISHED');
      // One session for the thread: the refused request submitted nothing.
      expect(world.emu.requests.filter((r) => r.completion !== undefined)).toHaveLength(1);
    }, 30_000);
  });

  describe('when Redis goes away and comes back', () => {
    it('should answer /healthz 503 degraded naming the redacted URL, then 200 again', async () => {
      world = await DistributedWorld.start([], { password: PASSWORD });
      const a = await node();
      const health = async (): Promise<{ status: number; body: Record<string, string> }> => {
        const r = await fetch(`${a.server.url}healthz`);
        return { status: r.status, body: (await r.json()) as Record<string, string> };
      };
      expect(await health()).toEqual({ status: 200, body: { status: 'ok', redis: 'ok' } });

      await world.redis.kill();
      let down: { status: number; body: Record<string, string> } | undefined;
      await until(async () => (down = await health()).status === 503, 10_000, '/healthz to report Redis down');
      expect(down!.body.status).toBe('degraded');
      expect(down!.body.redis).toContain(`redis://***@127.0.0.1:${world.redis.port}`);
      expect(JSON.stringify(down)).not.toContain(PASSWORD);

      await world.redis.restart();
      await until(async () => (await health()).status === 200, 10_000, '/healthz to report Redis back');
    }, 40_000);
  });

  describe('when the endpoint is given confirmTool', () => {
    it('should refuse it with invalid_options (a function cannot travel to the workers)', async () => {
      world = await DistributedWorld.start([]);
      const rx = await AgentRx.create({
        config: {
          logLevel: 'silent',
          consumers: { terminal: false },
          store: { type: 'redis', url: world.redis.url },
          runtime: { mode: 'distributed', queueName: world.queueName },
        },
      });
      world.instances.push(rx);
      await expect(startAgUiServer({ rx, port: 0, confirmTool: () => ({ allow: true }) })).rejects.toMatchObject({
        code: 'invalid_options',
        message: expect.stringContaining('confirmTool'),
      });
    });
  });
});
