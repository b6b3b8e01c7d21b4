/**
 * Redis restarted (appendonly yes, SIGKILL then a start on the same port and data) while sessions
 * run on two worker processes (issue 13, "Faults"): the workers, the client's handles and their
 * log readers reconnect and go on; every session completes, each tool ran once, and every log is
 * gap-free without repeats, as read by a third store instance and as the handles streamed it.
 */
import { lastValueFrom, toArray } from 'rxjs';
import type { SessionEvent } from '../../src/core/events/session-event.js';
import { describeWithRedis } from '../support/redis-server.js';
import { useFaultWorld } from './fault-fixture.js';

const SESSIONS = 4;

describeWithRedis('Redis restarted during runs (child processes, real Redis and BullMQ)', () => {
  const { world } = useFaultWorld();

  it('should let workers and readers reconnect and complete every session with a gap-free log', async () => {
    const w = world();
    await w.start({ appendonly: true });
    // Leases and locks outlast the restart: the sessions go on where they run.
    const opts = { gated: true, leaseMs: 10_000, lockDurationMs: 10_000, concurrency: 2 };
    const workers = [await w.worker(opts), await w.worker(opts)];
    const handles = await w.submit(SESSIONS);
    const streamed = handles.map((h) => lastValueFrom(h.events$.pipe(toArray())));
    // Every session is in its tool (on either worker), its log partly written.
    await w.waitFor(() => w.executions().length === SESSIONS, 'every session to run its tool', 30_000);
    await w.within(Promise.all(handles.map((h) => h.opened)), 'every session id on its handle');

    await w.redis.kill();
    await w.redis.restart();
    w.openGate();

    const logs = await w.checkCompleted(handles);
    for (const [i, h] of handles.entries()) {
      const seen = (await streamed[i]!).map((e: SessionEvent) => e.seq);
      expect(seen).toEqual(logs.get(h.sessionId!)!.map((e) => e.seq));
    }
    // Both workers ran sessions, and neither died.
    expect(new Set(w.executions().map((e) => e.pid))).toEqual(new Set(workers.map((c) => c.proc.pid)));
    for (const c of workers) expect(c.proc.exitCode).toBeNull();
  }, 180_000);
});
