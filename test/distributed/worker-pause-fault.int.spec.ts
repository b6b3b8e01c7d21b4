/**
 * A worker paused with SIGSTOP past its lease, then resumed with SIGCONT (issue 13, "Faults"): a
 * second worker process takes the session over with a higher fencing epoch and ends it; the
 * paused worker's late writes (its tool's result, its log entries) are refused, so nothing is
 * duplicated: the tool ran once, the log read by a third store instance is gap-free and unchanged
 * by the late writer, and the ledger keeps the new owner's answer.
 */
import { describeWithRedis } from '../support/redis-server.js';
import { FaultWorld, useFaultWorld } from './fault-fixture.js';

describeWithRedis('a worker paused past its lease, then resumed (child processes, real Redis and BullMQ)', () => {
  const { world } = useFaultWorld();

  it('should refuse the late writes of the resumed worker and duplicate nothing', async () => {
    const w = world();
    await w.start();
    const paused = await w.worker({ gated: true });
    const [handle] = await w.submit(1);
    const started = (await w.within(paused.next('tool_started'), 'the gated tool to start')) as unknown as { toolUseId: string; sessionId: string };
    expect(await w.within(handle!.opened, 'the session id on the handle')).toBe(started.sessionId);
    paused.proc.kill('SIGSTOP');

    // The second worker takes the job once the lock and the lease expire; the tool started and
    // recorded nothing and is not idempotent, so the model reads "outcome unknown".
    const second = await w.worker();
    const result = await w.within(handle!.result, 'the result on the handle (after the takeover)');
    expect(result.text).toContain('calculate failed');
    await handle!.close();
    await w.within(handle!.closed, 'the handle to close');
    expect(FaultWorld.logLines(second).some((l) => l.includes(`job ${handle!.id} started (taken over`))).toBe(true);
    const logBefore = await w.reader.read(started.sessionId, 0, 10_000);
    const ledgerBefore = (await w.reader.load(started.sessionId))!.ledger;
    expect(ledgerBefore.find((e) => e.toolUseId === started.toolUseId)).toMatchObject({ state: 'posted' });

    // Resumed: its tool answers now, and it tries to record and go on. Its late writes go to the
    // store (refused: "lost the lease of session") and to the submission's output stream (refused:
    // "another worker claimed submission"); which refusal decides the reason it logs depends on
    // the order its timers and Redis replies run in after SIGCONT, which the load of the machine
    // changes. Either way it then gives the job up, and only after that (its session closed, its
    // writes settled) are the log and the ledger compared.
    w.openGate();
    paused.proc.kill('SIGCONT');
    const gaveUp = [`job ${handle!.id} handed back`, `job ${handle!.id} left to the worker that took it over`];
    await w.waitFor(() => FaultWorld.logLines(paused).some((l) => gaveUp.some((g) => l.includes(g))), 'the resumed worker to give the job up', 30_000);
    const reasons = [`lost the lease of session ${started.sessionId}`, `another worker claimed submission ${handle!.id}`];
    expect(FaultWorld.logLines(paused).filter((l) => reasons.some((r) => l.includes(r)))).not.toEqual([]);
    expect(FaultWorld.logLines(paused).some((l) => l.includes(`job ${handle!.id} ended`))).toBe(false);

    expect(w.executions()).toEqual([{ pid: paused.proc.pid, sessionId: started.sessionId, toolUseId: started.toolUseId }]);
    const logAfter = await w.reader.read(started.sessionId, 0, 10_000);
    expect(logAfter).toEqual(logBefore);
    expect(logAfter.map((e) => e.seq)).toEqual(logAfter.map((_, i) => i + 1));
    const ledgerAfter = (await w.reader.load(started.sessionId))!.ledger;
    expect(ledgerAfter).toEqual(ledgerBefore);
    const entry = ledgerAfter.find((e) => e.toolUseId === started.toolUseId) as { result?: { content?: unknown } } | undefined;
    expect(JSON.stringify(entry?.result)).toMatch(/outcome unknown/);
    // The paused worker published no second end: the handle's output holds one `closed`.
    const outputs = await w.outputsOf(handle!.id);
    expect(outputs.filter((m) => m.kind === 'closed')).toHaveLength(1);
    expect(outputs.filter((m) => m.kind === 'result')).toHaveLength(1);
    expect(paused.proc.exitCode).toBeNull();
  }, 180_000);
});
