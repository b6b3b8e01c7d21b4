/**
 * The submission's output stream (what a handle reads) is fenced like the session's store writes
 * (issue 13, "Faults": a worker paused past its lease must not write after another took over). A
 * worker finishes its request in the log, and its publication of the result is held on the wire
 * (see `wire-trap.ts`) while the worker is paused with SIGSTOP; a second worker process takes the
 * submission over and publishes the result from the log. The paused worker, resumed with its
 * held publication let through, must not show the handle that result a second time.
 */
import type { RemoteResult } from '../../src/distributed/distributed-messages.js';
import { describeWithRedis } from '../support/redis-server.js';
import { FaultWorld, useFaultWorld } from './fault-fixture.js';
import { startWireTrap, type WireTrap } from './wire-trap.js';

describeWithRedis('a worker paused while it publishes a result, then resumed (child processes, real Redis and BullMQ)', () => {
  const { world } = useFaultWorld();
  let trap: WireTrap | undefined;
  afterEach(async () => {
    await trap?.close();
    trap = undefined;
  });

  it('should refuse its late publication: the handle sees the result once and the session ends once', async () => {
    const w = world();
    await w.start();
    trap = await startWireTrap(w.redis.port);
    const paused = await w.worker({ redisUrl: trap.url });
    const held = trap.armOn('"kind":"result"', 'before');
    const [handle] = await w.submit(1);
    const seen: RemoteResult[] = [];
    handle!.results$.subscribe((r) => seen.push(r));
    await w.within(held, 'the worker to publish its result (held on the wire)');
    paused.proc.kill('SIGSTOP');
    const sessionId = await w.within(handle!.opened, 'the session id on the handle');
    // Its request finished in the log; only the publication is missing.
    const log = await w.reader.read(sessionId, 0, 10_000);
    expect(log.some((e) => e.source === 'agentrx' && e.raw.type === 'agentrx.run_finished')).toBe(true);

    const second = await w.worker();
    const result = await w.within(handle!.result, 'the result on the handle (after the takeover)');
    expect(result.text).toContain('calculate returned: "(17 + 25) * 3 = 126"');
    expect(FaultWorld.logLines(second).some((l) => l.includes(`job ${handle!.id} started (taken over`))).toBe(true);

    // Resumed, its held publication goes through to Redis.
    paused.proc.kill('SIGCONT');
    trap.release();
    await w.waitFor(
      () =>
        FaultWorld.logLines(paused).some(
          (l) => l.includes(`job ${handle!.id} left to the worker that took it over`) || l.includes(`lost the lease of session ${sessionId}`),
        ),
      'the resumed worker to leave the submission',
      30_000,
    );
    expect((await w.outputsOf(handle!.id)).filter((m) => m.kind === 'result')).toHaveLength(1);
    expect(FaultWorld.logLines(paused).some((l) => l.includes(`another worker claimed submission ${handle!.id}`))).toBe(true);

    await handle!.close();
    await w.within(handle!.closed, 'the handle to close');
    expect(seen).toHaveLength(1);
    const outputs = await w.outputsOf(handle!.id);
    expect(outputs.filter((m) => m.kind === 'result')).toHaveLength(1);
    expect(outputs.filter((m) => m.kind === 'closed')).toHaveLength(1);
    expect(w.executions()).toEqual([{ pid: paused.proc.pid, sessionId, toolUseId: expect.any(String) }]);
    expect(paused.proc.exitCode).toBeNull();
  }, 180_000);
});
