/**
 * Workers SIGKILLed mid-stream and between turns (issue 13, "Faults"): worker child processes of
 * the built package, a real redis-server and BullMQ; the sessions complete on another worker
 * process, every tool-use id ran once (counted by the tool itself, across processes), and every
 * session's log, read by a third store instance, is gap-free without repeats.
 */
import type { RecordedRequest } from '../../src/testing/openai-emulator.js';
import { describeWithRedis } from '../support/redis-server.js';
import { FaultWorld, useFaultWorld } from './fault-fixture.js';

const SESSIONS = 4;

type Message = { role: string; content?: string | null; tool_call_id?: string };
const messagesOf = (r: RecordedRequest): Message[] => (r.body as { messages: Message[] }).messages;

describeWithRedis('workers SIGKILLed mid-stream and between turns (child processes, real Redis and BullMQ)', () => {
  const { world } = useFaultWorld();

  it('should complete every session on another worker when the first is killed while the model answers stream in', async () => {
    const w = world();
    await w.start();
    // Completions 2k+1 stall after two chunks: submitted one after another, session k's first
    // answer (the tool call) is completion 2k and its second, streamed after the tool ran, is 2k+1.
    for (let k = 0; k < SESSIONS; k++) w.faults[2 * k + 1] = { kind: 'stall', afterChunks: 2 };
    const first = await w.worker();
    const handles = [];
    for (let k = 0; k < SESSIONS; k++) {
      handles.push(...(await w.submit(1)));
      await w.waitFor(() => w.emu.requests.some((r) => r.completion === 2 * k + 1 && r.chunksSent >= 2), `session ${k} mid-stream`, 30_000);
    }
    const ranBeforeKill = w.executions();
    expect(ranBeforeKill).toHaveLength(SESSIONS);
    first.proc.kill('SIGKILL');
    expect(await w.within(first.exited, 'the killed worker to exit')).toEqual({ code: null, signal: 'SIGKILL' });
    for (const k of Object.keys(w.faults)) delete w.faults[Number(k)];

    const second = await w.worker();
    const logs = await w.checkCompleted(handles);

    // The tools ran on the killed worker only; the second one answered from the ledger.
    expect(w.executions()).toEqual(ranBeforeKill);
    expect(ranBeforeKill.every((e) => e.pid === first.proc.pid)).toBe(true);
    for (const h of handles) expect(FaultWorld.logLines(second).some((l) => l.includes(`job ${h.id} started (taken over`))).toBe(true);
    // Each log holds the interrupted run, then the resumed one.
    for (const log of logs.values()) {
      expect(log.flatMap((e) => (e.source === 'agentrx' && e.raw.type === 'agentrx.run_started' ? [e.raw.resumed] : []))).toEqual([false, true]);
    }
  }, 180_000);

  it('should replay recorded tool results, not run the tools again, when the worker is killed between turns', async () => {
    const w = world();
    await w.start();
    // The first SESSIONS completions are answered; every later one hangs (no byte) until the worker is killed.
    for (let i = SESSIONS; i < 3 * SESSIONS; i++) w.faults[i] = { kind: 'hang' };
    const first = await w.worker();
    const handles = await w.submit(SESSIONS);
    // Settled: every session is either done or waits on one hanging request.
    const done = new Set<string>();
    for (const h of handles)
      void h.result.then(
        () => done.add(h.id),
        () => undefined,
      );
    const hanging = (): RecordedRequest[] => w.emu.requests.filter((r) => r.completion !== undefined && r.completion >= SESSIONS && !r.closed);
    await w.waitFor(() => hanging().length + done.size === SESSIONS, 'every session to finish or wait on the model', 30_000);
    // The sessions waiting between turns: their tool ran and its result is in the next request.
    const betweenTurns = hanging().filter((r) => messagesOf(r).some((m) => m.role === 'tool'));
    expect(betweenTurns.length).toBeGreaterThanOrEqual(1);
    const ranBeforeKill = w.executions();
    expect(ranBeforeKill.length).toBe(betweenTurns.length + done.size);
    first.proc.kill('SIGKILL');
    await w.within(first.exited, 'the killed worker to exit');
    for (const k of Object.keys(w.faults)) delete w.faults[Number(k)];

    const second = await w.worker();
    await w.checkCompleted(handles);

    // The tools that ran before the kill did not run again: the second worker posted their recorded results.
    expect(w.executions().slice(0, ranBeforeKill.length)).toEqual(ranBeforeKill);
    expect(ranBeforeKill.every((e) => e.pid === first.proc.pid)).toBe(true);
    for (const r of betweenTurns) {
      const toolUseId = messagesOf(r).find((m) => m.role === 'tool')!.tool_call_id!;
      const resent = w.emu.requests.filter(
        (q) => q.completion !== undefined && q.index > r.index && messagesOf(q).some((m) => m.role === 'tool' && m.tool_call_id === toolUseId),
      );
      expect(resent).toHaveLength(1);
      expect(messagesOf(resent[0]!).find((m) => m.tool_call_id === toolUseId)!.content).toBe('(17 + 25) * 3 = 126');
    }
    expect(second.proc.exitCode).toBeNull();
  }, 180_000);
});
