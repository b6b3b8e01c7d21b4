/**
 * `confirmTool` cannot travel to a worker; a submitted session answers the host's confirmation
 * requests with `handle.sendEvent`, which the owner worker posts to the host. Claude Managed
 * Agents (a streaming host) through its emulator on loopback, real Redis and BullMQ.
 */
import { HttpAgent } from '@ag-ui/client';
import { filter, firstValueFrom } from 'rxjs';
import { AgentRx } from '../../src/agentrx.js';
import { startAgUiServer, type AgUiServer } from '../../src/servers/agui-http/agui-http.server.js';
import { ContainerModule } from '../../src/core/util/inversify.js';
import { isAgentRxEvent } from '../../src/core/events/session-event.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { cmaProviderModule } from '../../src/plugins/providers/claude-managed-agents/cma.module.js';
import { startCmaEmulator, type CmaEmulator } from '../../src/testing/cma-emulator.js';
import { DistributedWorld } from './distributed-fixture.js';
import { describeWithRedis } from '../support/redis-server.js';

describeWithRedis('RemoteSession.sendEvent on a streaming host', () => {
  let world: DistributedWorld;
  let cma: CmaEmulator | undefined;
  afterEach(async () => {
    await world?.close();
    await cma?.close();
  });

  /** Redis, a CMA emulator whose agent asks to confirm web_search, and a worker on it. */
  async function startWorld(): Promise<void> {
    world = await DistributedWorld.start([]);
    cma = await startCmaEmulator({ script: [{ serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }] }, { text: 'Done.' }], heartbeatMs: 0 });
    const store = world.store();
    const rx = await AgentRx.create({
      modules: [cmaProviderModule, new ContainerModule((o) => void o.bind(SessionStore).toConstantValue(store))],
      config: {
        provider: 'claude-managed-agents',
        logLevel: 'silent',
        consumers: { terminal: false },
        limits: { reconnectBaseMs: 1 },
        providers: { 'claude-managed-agents': { apiKey: 'sk-ant-test-0123456789-secret', baseUrl: cma.baseUrl, retryBaseMs: 1 } },
      },
    });
    world.instances.push(rx);
    await world.worker([], {}, rx);
  }

  describe('when the host asks to confirm a tool of its own', () => {
    it('should see confirmation_required on events$, post the decision through the worker, and get the result', async () => {
      await startWorld();
      const handle = await (await world.queue()).submit({ prompt: 'Search.' });

      const asked = await firstValueFrom(handle.events$.pipe(filter((e) => isAgentRxEvent(e, 'agentrx.confirmation_required'))));
      expect(asked.raw).toMatchObject({ toolUses: [expect.objectContaining({ id: 'sevt_ws' })] });
      await handle.sendEvent({ type: 'user.tool_confirmation', tool_use_id: 'sevt_ws', result: 'allow' });

      await expect(handle.result).resolves.toMatchObject({ terminal: 'end_turn', text: 'Done.' });
      const session = cma!.sessions.get(await handle.opened)!;
      expect(session.received.filter((e) => e['type'] === 'user.tool_confirmation')).toEqual([
        expect.objectContaining({ type: 'user.tool_confirmation', tool_use_id: 'sevt_ws', result: 'allow' }),
      ]);
      await handle.close();
      await handle.closed;
    }, 30_000);
  });

  describe('when an AG-UI client of a distributed endpoint is asked to confirm', () => {
    let server: AgUiServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('should end the run with the interrupt outcome, and the resume run should reach the worker and finish', async () => {
      await startWorld();
      const nodeRx = await AgentRx.create({
        config: {
          logLevel: 'silent',
          consumers: { terminal: false },
          store: { type: 'redis', url: world.redis.url, leaseMs: 1_000 },
          runtime: { mode: 'distributed', queueName: world.queueName },
        },
      });
      world.instances.push(nodeRx);
      server = await startAgUiServer({ rx: nodeRx, port: 0 });

      const agent = new HttpAgent({ url: `${server.url}agent`, threadId: 'dist-confirm', initialMessages: [{ id: 'u1', role: 'user', content: 'Search.' }] });
      let outcome: string | undefined;
      const failures: unknown[] = [];
      await agent.runAgent({ runId: 'r1' }, { onRunFinishedEvent: (e) => void (outcome = e.outcome), onRunFailed: ({ error }) => void failures.push(error) });
      expect(failures).toEqual([]);
      expect(outcome).toBe('interrupt');

      const texts: string[] = [];
      await agent.runAgent(
        { runId: 'r2', resume: [{ interruptId: 'sevt_ws', status: 'resolved', payload: { allow: true } }] },
        {
          onTextMessageContentEvent: ({ event }) => void texts.push(event.delta),
          onRunFinishedEvent: (e) => void (outcome = e.outcome),
          onRunFailed: ({ error }) => void failures.push(error),
        },
      );
      expect(failures).toEqual([]);
      expect(outcome).toBe('success');
      expect(texts.join('')).toBe('Done.');
      const [session] = [...cma!.sessions.values()];
      expect(session!.received.filter((e) => e['type'] === 'user.tool_confirmation')).toEqual([
        expect.objectContaining({ tool_use_id: 'sevt_ws', result: 'allow' }),
      ]);
    }, 30_000);
  });
});
