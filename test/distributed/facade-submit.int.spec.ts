/**
 * `rx.submit()` and `rx.remote()` on an AgentRx configured for `runtime.mode: 'distributed'`
 * (store and queue on Redis, from config), with a worker in the same process.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { AgentRx } from '../../src/agentrx.js';
import { EchoToolHandler, resetFakeTools } from '../fakes/fake-tools.js';
import { DistributedWorld } from './distributed-fixture.js';
import { describeWithRedis } from '../support/redis-server.js';

describeWithRedis('AgentRx.submit (runtime.mode distributed)', () => {
  let world: DistributedWorld | undefined;
  let client: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await client?.stop();
    client = undefined;
    await world?.close();
    world = undefined;
  });

  describe('when a client configured from plain config submits a session', () => {
    it('should run it on a worker and give the handle its result and events; remote(id) reads the same log', async () => {
      world = await DistributedWorld.start([{ toolCalls: [{ id: 'call_1', name: 'echo', arguments: { text: 'ada' } }] }, { text: 'Echoed ADA.' }]);
      await world.worker([EchoToolHandler]);
      client = await AgentRx.create({
        config: {
          logLevel: 'silent',
          consumers: { terminal: false },
          store: { type: 'redis', url: world.redis.url },
          runtime: { mode: 'distributed', queueName: world.queueName },
        },
      });
      const handle = await client.submit({ prompt: 'Echo ada.' });
      const events = lastValueFrom(handle.events$.pipe(toArray()));
      await expect(handle.result).resolves.toMatchObject({ text: 'Echoed ADA.', turns: 2 });
      await handle.close();
      await handle.closed;
      const seqs = (await events).map((e) => e.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      expect(EchoToolHandler.calls).toHaveLength(1);

      const again = await client.remote(handle.id, { afterSeq: 2 });
      const replayed = await lastValueFrom(again.events$.pipe(toArray()));
      expect(replayed.map((e) => e.seq)).toEqual(seqs.slice(2));
      await again.detach();
    }, 30_000);
  });

  describe('when the instance stops while a handle still reads the log of a live session', () => {
    it('should complete the handle’s events$ and agui$ (not fail them because the store closed), the session going on', async () => {
      world = await DistributedWorld.start([{ text: 'first' }, { text: 'second' }]);
      await world.worker([]);
      const config = {
        logLevel: 'silent' as const,
        consumers: { terminal: false },
        store: { type: 'redis', url: world.redis.url },
        runtime: { mode: 'distributed' as const, queueName: world.queueName },
      };
      client = await AgentRx.create({ config });
      const handle = await client.submit({ prompt: 'hi' });
      const ends: string[] = [];
      // The README's sample subscribes with next only: an error here would crash its process.
      handle.agui$.subscribe({ complete: () => ends.push('agui$ complete'), error: (e: unknown) => ends.push(`agui$ error: ${String(e)}`) });
      handle.events$.subscribe({ complete: () => ends.push('events$ complete'), error: (e: unknown) => ends.push(`events$ error: ${String(e)}`) });
      expect((await handle.result).text).toBe('first');

      await client.stop();
      client = undefined;
      expect(ends.sort()).toEqual(['agui$ complete', 'events$ complete']);

      // The session lives on in its worker: another instance's handle reads on and talks to it.
      client = await AgentRx.create({ config });
      const again = await client.remote(handle.id);
      const second = new Promise<string>((resolve) => again.results$.subscribe((r) => r.text === 'second' && resolve(r.text)));
      await again.message('more');
      expect(await second).toBe('second');
      await again.close();
      await again.closed;
    }, 30_000);
  });

  describe('when the instance is embedded', () => {
    it('should refuse submit with invalid_config saying what to set', async () => {
      client = await AgentRx.create({ config: { logLevel: 'silent', consumers: { terminal: false } } });
      await expect(client.submit({ prompt: 'x' })).rejects.toMatchObject({
        code: 'invalid_config',
        message: expect.stringContaining("runtime: { mode: 'distributed' }"),
      });
    });
  });
});
