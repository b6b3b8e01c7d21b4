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
import { withDeadline } from '../support/deadline.js';
import { describeWithRedis } from '../support/redis-server.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * The held handle's lease must outlast the longest pause of this process, or the worker rightly
 * takes a silent client for a dead one. The pauses here are the test's own: it forces full GCs
 * until the dropped handle is collected, and a full GC of a large test process with two CPU hogs
 * beside it took seconds (a fixed 300 ms, then 3 s lease lapsed that way under load). The worker
 * runs in this process too, so one stall stops both the renewals and its check, and the check
 * that wakes first sees a lease that lapsed during the stall. A lease of five GCs (4.3 s) still
 * lapsed once in a whole-suite run with two CPU hogs (longest forced GC 1 s: the process was
 * also starved of CPU). So the lease is ten times a full GC timed in this process before the
 * queue is made, and at least 8 s: renewals every third of it survive a stall of two thirds of it.
 */
function leaseForThisProcess(): { leaseMs: number; gcMs: number } {
  const t0 = performance.now();
  gc();
  const gcMs = Math.ceil(performance.now() - t0);
  return { leaseMs: Math.max(8_000, 10 * gcMs), gcMs };
}
const closing = (id: string) => (line: string) => line.includes('no handle holds it any more') && line.includes(id);

/** Calls its held value when a registered handle is collected (module-level: a collected registry calls nothing). */
const finalized = new FinalizationRegistry<() => void>((resolve) => resolve());

/**
 * Submits, waits for the first result, and returns the submission id and a promise of the
 * handle's collection: the handle itself is dropped here.
 */
async function submitAndDrop(queue: SessionQueue, prompt: string): Promise<{ id: string; text: string; collected: Promise<void> }> {
  const handle = await queue.submit({ prompt });
  const result = await withDeadline(handle.result, 30_000, 'the dropped session’s first result');
  const signal = new Promise<void>((resolve) => finalized.register(handle, resolve));
  return { id: handle.id, text: result.text, collected: signal };
}

/**
 * Waits for `collected`, running a full GC at most every half second: a full GC of a busy test
 * process takes long, and GC after GC would starve the event loop the handle's reader and lease
 * keeper need to let go of it.
 */
async function collect(collected: Promise<void>, timeoutMs: number): Promise<number> {
  let done = false;
  let longestGcMs = 0;
  void collected.then(() => (done = true));
  const deadline = Date.now() + timeoutMs;
  while (!done) {
    if (Date.now() > deadline) throw new Error(`the dropped handle was not collected within ${timeoutMs} ms: something still holds it`);
    const t0 = performance.now();
    gc();
    longestGcMs = Math.max(longestGcMs, performance.now() - t0);
    await Promise.race([collected, new Promise((r) => setTimeout(r, 500))]);
  }
  return Math.ceil(longestGcMs);
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
      const { leaseMs, gcMs } = leaseForThisProcess();
      const queue = await world.queue({ clientLeaseMs: leaseMs });

      const held = await queue.submit({ prompt: 'keep me' });
      const firstHeld = await withDeadline(held.result, 30_000, 'the held session’s first result');
      const dropped = await submitAndDrop(queue, 'drop me');
      expect([firstHeld.text, dropped.text].sort()).toEqual(['one', 'two']);

      // Collect the dropped handle; the worker sees its lease lapse and frees the slot.
      const longestGcMs = await collect(dropped.collected, 40_000);
      await until(() => world.logs.some(closing(dropped.id)), 30_000 + 2 * leaseMs, 'the worker to close the collected handle’s session');
      // The submission ended for good: a new handle on it reads the end.
      const again = queue.open(dropped.id);
      await withDeadline(again.closed, 20_000, 'a new handle on the closed submission to read its end');

      // The held handle's session is still open: it answers another message.
      // A failure names the pauses: a lapse with a GC near the lease says the lease was too short.
      const heldState = world.logs.some(closing(held.id))
        ? `closed (lease ${leaseMs} ms; full GC ${gcMs} ms before the queue, longest while collecting ${longestGcMs} ms)`
        : 'open';
      expect(heldState).toBe('open');
      const next = new Promise<string>((resolve) => {
        const seen: string[] = [];
        held.results$.subscribe((r) => {
          seen.push(r.text);
          if (seen.length === 2) resolve(r.text);
        });
      });
      await held.message('and again');
      expect(await withDeadline(next, 20_000, 'the held session’s answer to its next message')).toBe('three');
      await held.close();
      await withDeadline(held.closed, 20_000, 'the held session to close');
    }, 300_000);
  });

  describe('when the handle is released after its result', () => {
    it('should drop its lease at once, so the worker closes the idle session after one lease', async () => {
      world = await DistributedWorld.start([{ text: 'done' }]);
      await world.worker([], { idleMs: 600_000 });
      const queue = await world.queue({ clientLeaseMs: 3_000 });
      const handle = await queue.submit({ prompt: 'hi' });
      expect((await handle.result).text).toBe('done');
      await handle.release();
      await until(() => world.logs.some(closing(handle.id)), 45_000, 'the worker to close the released session');
      await queue.open(handle.id).closed;
    }, 60_000);
  });
});
