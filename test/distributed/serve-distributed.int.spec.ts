/**
 * `agentrx serve` with a config in `runtime.mode: 'distributed'`: the endpoint enqueues runs for
 * the worker pool, reports Redis in `/healthz`, registers the pool's gauges, and refuses the flags
 * that act on in-process sessions. Also: an endpoint that shuts down mid-run leaves the run to
 * another node.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpAgent } from '@ag-ui/client';
import { AgentRx } from '../../src/agentrx.js';
import { runCli } from '../../src/cli/cli.js';
import { startAgUiServer, type AgUiServer } from '../../src/servers/agui-http/agui-http.server.js';
import { openStream, runInput, sseFrames, waitForOutput } from '../servers/agui-http/agui-http.fixtures.js';
import { describeWithRedis } from '../support/redis-server.js';
import { tempDirSync } from '../support/temp-dir.js';
import { DistributedWorld } from './distributed-fixture.js';
import { GateToolHandler } from '../fakes/gate-tool.js';
import { testIo, type TestIo } from '../support/cli-io.js';

const PASSWORD = 'serv3-Pa55word';

const io = (env: Record<string, string>, signal?: AbortSignal): TestIo => testIo({ env, ...(signal ? { signal } : {}) });

const argv = (...args: string[]) => ['node', 'agentrx', ...args];

describeWithRedis('agentrx serve in runtime.mode distributed', () => {
  let world: DistributedWorld | undefined;
  let dir: string;
  beforeEach(() => {
    GateToolHandler.reset();
    dir = tempDirSync('agentrx-serve-dist-');
  });
  afterEach(async () => {
    GateToolHandler.open();
    await world?.close();
    world = undefined;
  });

  const configFile = (w: DistributedWorld): string => {
    const file = join(dir, 'serve.json');
    writeFileSync(
      file,
      JSON.stringify({
        logLevel: 'silent',
        store: { type: 'redis', url: `redis://default:\${REDIS_PASSWORD}@127.0.0.1:${w.redis.port}` },
        runtime: { mode: 'distributed', queueName: w.queueName },
      }),
    );
    return file;
  };

  describe('when started with a distributed config and a worker runs the pool', () => {
    it("should run the client's run on the worker, report Redis in /healthz, and stop on its signal without the password anywhere", async () => {
      world = await DistributedWorld.start([{ text: 'Hello from the pool.' }], { password: PASSWORD });
      await world.worker();
      const stop = new AbortController();
      const t = io({ REDIS_PASSWORD: PASSWORD }, stop.signal);
      const url = waitForOutput(t.out, /^(http:\/\/127\.0\.0\.1:\d+\/)$/m);
      const exit = runCli(argv('serve', '--port', '0', '--config', configFile(world)), t);
      const base = (await url)[1]!;

      const health = await fetch(`${base}healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', redis: 'ok' });

      const agent = new HttpAgent({ url: `${base}agent`, threadId: 'serve-thread' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'Hi' });
      const failures: unknown[] = [];
      await agent.runAgent({ runId: 'serve-run' }, { onRunFailed: ({ error }) => void failures.push(error) });
      expect(failures).toEqual([]);
      expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Hello from the pool.' });
      expect(world.logs.filter((l) => / job sub-\S+ started/.test(l))).toHaveLength(1);

      stop.abort();
      expect(await exit).toBe(0);
      expect(t.stderr()).toContain(`sessions on the worker pool (queue ${world.queueName} on redis://***@127.0.0.1:${world.redis.port}`);
      expect(t.stderr()).not.toContain(PASSWORD);
    }, 30_000);
  });

  describe('when given flags that act on sessions in this process', () => {
    it('should exit 2 listing each with what to do instead', async () => {
      world = await DistributedWorld.start([], { password: PASSWORD });
      const t = io({ REDIS_PASSWORD: PASSWORD });
      expect(await runCli(argv('serve', '--demo', '--record', join(dir, 'rec'), '--confirm', 'allow', '--config', configFile(world)), t)).toBe(2);
      expect(t.stderr()).toContain("agentrx serve with runtime.mode 'distributed' cannot take:");
      expect(t.stderr()).toContain('- --demo:');
      expect(t.stderr()).toContain('- --record:');
      expect(t.stderr()).toContain('- --confirm:');
    });
  });

  describe('when an endpoint shuts down while one of its runs is on a worker', () => {
    let servers: AgUiServer[] = [];
    afterEach(async () => {
      for (const s of servers) await s.close();
      servers = [];
    });

    it("should end the client's stream with RUN_ERROR unavailable, and the run should go on for another node's reconnect", async () => {
      world = await DistributedWorld.start([{ toolCalls: [{ id: 'call_gate', name: 'gate', arguments: { text: 'x' } }] }, { text: 'Unlatched, done.' }]);
      await world.worker([GateToolHandler]);
      const nodes: AgUiServer[] = [];
      for (let i = 0; i < 2; i++) {
        const rx = await AgentRx.create({
          config: {
            logLevel: 'silent',
            consumers: { terminal: false },
            store: { type: 'redis', url: world.redis.url },
            runtime: { mode: 'distributed', queueName: world.queueName },
          },
        });
        world.instances.push(rx);
        nodes.push(await startAgUiServer({ rx, port: 0 }));
      }
      const [a, b] = nodes as [AgUiServer, AgUiServer];
      servers = [b];
      const stream = await openStream(`${a.url}agent`, runInput({ threadId: 'thread-shutdown', runId: 'r1' }, 'Latch'), (ev) => ev.type === 'TOOL_CALL_END');
      await GateToolHandler.started;
      const [events] = await Promise.all([stream.readToEnd(), a.close()]);
      expect(events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'unavailable', message: expect.stringContaining('reconnect with Last-Event-ID') });
      expect(events.filter((e) => e.type === 'RUN_ERROR' || e.type === 'RUN_FINISHED')).toHaveLength(1);

      const lastId = sseFrames(
        await fetch(`${b.url}threads/thread-shutdown/events?after=0`).then(async (r) => {
          // Read the replay only up to the tool call: the run is still held in its tool.
          const reader = r.body!.getReader();
          let text = '';
          while (!text.includes('TOOL_CALL_END')) {
            const { value, done } = await reader.read();
            if (done) throw new Error(`the replay ended before the tool call: ${text}`);
            text += new TextDecoder().decode(value);
          }
          await reader.cancel();
          return text.slice(0, text.indexOf('\n\n', text.indexOf('TOOL_CALL_END')) + 2);
        }),
      )
        .filter((f) => f.id !== undefined)
        .at(-1)!.id!;
      const resumed = fetch(`${b.url}threads/thread-shutdown/events`, { headers: { 'last-event-id': lastId } }).then((r) => r.text());
      GateToolHandler.open();
      const after = sseFrames(await resumed);
      expect(after.every((f) => f.id === undefined || Number(f.id) > Number(lastId))).toBe(true);
      expect(after.map((f) => f.event.type)).toEqual(expect.arrayContaining(['TOOL_CALL_RESULT', 'RUN_FINISHED']));
      expect(after.find((f) => f.event.type === 'TEXT_MESSAGE_CONTENT')?.event['delta']).toBe('Unlatched, done.');
      expect(GateToolHandler.runs).toBe(1);
    }, 30_000);
  });
});
