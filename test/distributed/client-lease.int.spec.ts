/**
 * A session handle holds its worker slot only while someone holds the handle: the handle renews
 * a lease in Redis while it is referenced (weakly: the renewal timer and the output reader do not
 * keep it alive), and the worker closes an idle session once no lease is current, instead of
 * after its whole idle time (10 minutes by default). Real redis-server, BullMQ, a real GC.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { SessionQueue } from '../../src/distributed/session-queue.js';
import { DistributedWorld, until } from './distributed-fixture.js';
import { describeWithRedis } from '../support/redis-server.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const LEASE_MS = 300;
const closing = (id: string) => (line: string) => line.includes('no handle holds it any more') && line.includes(id);

/** Submits, waits for the first result, and returns only the submission id: the handle is dropped here. */
async function submitAndDrop(queue: SessionQueue, prompt: string): Promise<{ id: string; text: string }> {
  const handle = await queue.submit({ prompt });
  const result = await handle.result;
  return { id: handle.id, text: result.text };
}

describeWithRedis('client leases of session handles', () => {
  let world: DistributedWorld;
  afterEach(async () => {
    await world?.close();
  });

  describe('when the only handle of a live session is dropped after its result, while another session’s handle is held', () => {
    it('should close the dropped one soon (not after idleMs), and keep the held one open for its next message', async () => {
      world = await DistributedWorld.start([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
      // A worker whose idle time alone would keep the session for ten minutes.
      await world.worker([], { idleMs: 600_000 });
      const queue = await world.queue({ clientLeaseMs: LEASE_MS });

      const held = await queue.submit({ prompt: 'keep me' });
      const firstHeld = await held.result;
      const dropped = await submitAndDrop(queue, 'drop me');
      expect([firstHeld.text, dropped.text].sort()).toEqual(['one', 'two']);

      // Collect the dropped handle; the worker sees its lease lapse and frees the slot.
      await until(
        () => {
          gc();
          return world.logs.some(closing(dropped.id));
        },
        45_000,
        'the worker to close the dropped session',
      );
      // The submission ended for good: a new handle on it reads the end.
      const again = queue.open(dropped.id);
      await again.closed;

      // The held handle's session is still open: it answers another message.
      expect(world.logs.some(closing(held.id))).toBe(false);
      const next = new Promise<string>((resolve) => {
        const seen: string[] = [];
        held.results$.subscribe((r) => {
          seen.push(r.text);
          if (seen.length === 2) resolve(r.text);
        });
      });
      await held.message('and again');
      expect(await next).toBe('three');
      await held.close();
      await held.closed;
    }, 60_000);
  });

  describe('when the handle is released after its result', () => {
    it('should drop its lease at once, so the worker closes the idle session after one lease', async () => {
      world = await DistributedWorld.start([{ text: 'done' }]);
      await world.worker([], { idleMs: 600_000 });
      const queue = await world.queue({ clientLeaseMs: LEASE_MS });
      const handle = await queue.submit({ prompt: 'hi' });
      expect((await handle.result).text).toBe('done');
      await handle.release();
      await until(() => world.logs.some(closing(handle.id)), 45_000, 'the worker to close the released session');
      await queue.open(handle.id).closed;
    }, 60_000);
  });
});
