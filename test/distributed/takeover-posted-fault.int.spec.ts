/**
 * A worker SIGKILLed after its tool's result was posted to the model (the ledger says `posted`)
 * and before the request's end reached the log (found by the distributed bench: 3 of 50 taken-over
 * handles never got a result). With the Local provider the conversation is held by the client:
 * the record's transcript is the one checkpointed before the tool ran, so the new owner's model
 * has never seen the tool's result, and the request must go on by posting it again (replayed from
 * the ledger, the tool is not run again) instead of waiting for a turn that never comes.
 *
 * Deterministic: the worker's Redis connections run through a proxy that stops all its traffic
 * right after the ledger's `posted` transition was sent (see `wire-trap.ts`), then it is killed.
 */
import { from, lastValueFrom, toArray } from 'rxjs';
import { toAgUi } from '../../src/core/events/operators/to-ag-ui.js';
import { describeWithRedis } from '../support/redis-server.js';
import { FaultWorld, useFaultWorld } from './fault-fixture.js';
import { startWireTrap, type WireTrap } from './wire-trap.js';

describeWithRedis('a worker killed between posting a tool result and ending its request (child processes, real Redis and BullMQ)', () => {
  const { world } = useFaultWorld();
  let trap: WireTrap | undefined;
  afterEach(async () => {
    await trap?.close();
    trap = undefined;
  });

  it('should finish the request on the new owner with the recorded result, running the tool once', async () => {
    const w = world();
    await w.start();
    trap = await startWireTrap(w.redis.port);
    const first = await w.worker({ redisUrl: trap.url });
    const posted = trap.armOn('"state":"posted"');
    const [handle] = await w.submit(1);
    await w.within(posted, 'the worker to post the tool result (held on the wire)');
    const sessionId = await w.within(handle!.opened, 'the session id on the handle');
    await w.waitFor(
      async () => (await w.reader.load(sessionId))?.ledger.some((e) => e.state === 'posted') === true,
      'the posted ledger entry in Redis',
      10_000,
    );
    first.proc.kill('SIGKILL');
    expect(await w.within(first.exited, 'the killed worker to exit')).toEqual({ code: null, signal: 'SIGKILL' });
    // Killed mid-request: the tool ran, the request's end is not in the log (its last envelopes,
    // the tool's result among them, may still have been waiting for their batched append).
    const before = await w.reader.read(sessionId, 0, 10_000);
    const types = before.flatMap((e) => (e.source === 'agentrx' ? [e.raw.type] : []));
    expect(types).toContain('agentrx.tool_started');
    expect(types).not.toContain('agentrx.run_finished');
    expect((await w.reader.load(sessionId))!.status).toBe('running');

    const second = await w.worker();
    const result = await w.within(handle!.result, 'the result on the handle (after the takeover)');
    expect(result).toMatchObject({ terminal: 'end_turn', sessionId, text: expect.stringContaining('calculate returned: "(17 + 25) * 3 = 126"') });
    expect(FaultWorld.logLines(second).some((l) => l.includes(`job ${handle!.id} started (taken over`))).toBe(true);
    const logs = await w.checkCompleted([handle!]);
    // The new owner replayed the recorded result; the tool ran once, in the killed worker.
    const replays = logs.get(sessionId)!.filter((e) => e.source === 'agentrx' && e.raw.type === 'agentrx.tool_result' && e.raw.replayed);
    expect(replays).toHaveLength(1);
    // On AG-UI, a reader of the whole log gets one TOOL_CALL_RESULT per call, the replay included.
    const agui = await lastValueFrom(from(logs.get(sessionId)!).pipe(toAgUi(), toArray()));
    const calls = agui.flatMap((e) => (e.type === 'TOOL_CALL_END' ? [e.toolCallId] : []));
    const results = agui.flatMap((e) => (e.type === 'TOOL_CALL_RESULT' ? [e.toolCallId] : []));
    expect(calls.length).toBeGreaterThan(0);
    expect(results).toEqual(calls);
    expect(w.executions()).toEqual([{ pid: first.proc.pid, sessionId, toolUseId: expect.any(String) }]);
    expect((await w.outputsOf(handle!.id)).filter((m) => m.kind === 'result')).toHaveLength(1);
  }, 180_000);
});
