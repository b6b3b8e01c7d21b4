/**
 * Placement with BullMQ (issue 13, part 3), in one process: a session submitted to the queue runs
 * on a worker whose store is the Redis engine; the handle gets the session's events, AG-UI and
 * results from Redis, and a second handle opened by id (as another process would) reads the same.
 * Real redis-server, real BullMQ, the OpenAI emulator on loopback.
 */
import { verifyEvents } from '@ag-ui/client';
import { from, lastValueFrom, toArray } from 'rxjs';
import { toWireEvent } from '../../src/servers/agui-http/agui-http.stream.js';
import type { SessionEvent } from '../../src/core/events/session-event.js';
import { EchoToolHandler, resetFakeTools } from '../fakes/fake-tools.js';
import { DistributedWorld } from './distributed-fixture.js';
import { describeWithRedis } from '../support/redis-server.js';

const seqs = (events: readonly SessionEvent[]): number[] => events.map((e) => e.seq);
const types = (events: readonly SessionEvent[]): string[] => events.flatMap((e) => (e.source === 'agentrx' ? [e.raw.type] : []));

describeWithRedis('SessionQueue.submit with a worker in the same process', () => {
  let world: DistributedWorld;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await world?.close();
  });

  describe('when a session with a tool call is submitted, then closed after its first result', () => {
    it('should deliver the result, every event gap-free, and a well-formed AG-UI stream to the handle', async () => {
      world = await DistributedWorld.start([
        { text: 'Let me echo.', toolCalls: [{ id: 'call_1', name: 'echo', arguments: { text: 'ada' } }] },
        { text: 'Echoed ADA.' },
      ]);
      await world.worker([EchoToolHandler]);
      const queue = await world.queue();

      const handle = await queue.submit({ prompt: 'Echo ada.' });
      expect(handle.id).toMatch(/^sub-/);
      const events = lastValueFrom(handle.events$.pipe(toArray()));
      const agui = lastValueFrom(handle.agui$.pipe(toArray()));
      const result = await handle.result;
      await handle.close();
      await handle.closed;

      expect(result).toMatchObject({ terminal: 'end_turn', text: 'Echoed ADA.', turns: 2 });
      expect(result).not.toHaveProperty('events');
      expect(result).not.toHaveProperty('transcript');
      expect(result.sessionId).toBe(await handle.opened);
      expect(EchoToolHandler.calls).toHaveLength(1);
      const log = await events;
      expect(seqs(log)).toEqual(log.map((_, i) => i + 1));
      expect(types(log)).toEqual(expect.arrayContaining(['agentrx.run_started', 'agentrx.tool_result', 'agentrx.run_finished']));
      const aguiEvents = await agui;
      expect(aguiEvents[0]!.type).toBe('RUN_STARTED');
      await expect(lastValueFrom(from(aguiEvents.map(toWireEvent)).pipe(verifyEvents(false), toArray()))).resolves.toHaveLength(aguiEvents.length);
      // The log in the store is exactly what the handle saw.
      expect(seqs(await world.store().read(result.sessionId!, 0, 10_000))).toEqual(seqs(log));
    }, 30_000);

    it('should give a second handle opened by id the same events from the start, or only those after a seq', async () => {
      world = await DistributedWorld.start([{ text: 'Hello there.' }]);
      await world.worker();
      const client = await world.queue();
      const handle = await client.submit({ prompt: 'Hi.' });
      const own = lastValueFrom(handle.events$.pipe(toArray()));
      await handle.result;
      await handle.close();
      await handle.closed;

      const other = await world.queue();
      const again = other.open(handle.id);
      const later = other.open(handle.id, { afterSeq: 3 });
      const [all, after, results] = await Promise.all([
        lastValueFrom(again.events$.pipe(toArray())),
        lastValueFrom(later.events$.pipe(toArray())),
        lastValueFrom(again.results$.pipe(toArray())),
      ]);

      expect(all).toEqual(await own);
      expect(seqs(after)).toEqual(seqs(all).filter((s) => s > 3));
      expect(results.map((r) => r.text)).toEqual(['Hello there.']);
      await expect(again.closed).resolves.toBeUndefined();
      await expect(again.message('more?')).rejects.toMatchObject({ code: 'session_closed' });
    }, 30_000);
  });

  describe('when the handle replaces the state between two requests', () => {
    it("should have the worker's session publish the new state at the next request's start", async () => {
      world = await DistributedWorld.start([{ text: 'First.' }, { text: 'Second.' }]);
      await world.worker();
      const queue = await world.queue();
      const handle = await queue.submit({ prompt: 'One.', state: { step: 1 } });
      const events = lastValueFrom(handle.events$.pipe(toArray()));
      const results = lastValueFrom(handle.results$.pipe(toArray()));
      await handle.result;

      await handle.setState({ step: 2 });
      await handle.message('Two.');
      await handle.close();
      await handle.closed;

      expect((await results).map((r) => r.text)).toEqual(['First.', 'Second.']);
      const snapshots = (await events).flatMap((e) => (e.source === 'agentrx' && e.raw.type === 'agentrx.state_snapshot' ? [e.raw.snapshot] : []));
      expect(snapshots).toEqual([{ step: 1 }, { step: 2 }]);
    }, 30_000);
  });

  describe('when a closed session is submitted again with its sessionId', () => {
    it('should resume it on a worker: the model gets the whole history, the log goes on without a gap', async () => {
      world = await DistributedWorld.start([{ text: 'Hello Ada.' }, { text: 'Your name is Ada.' }]);
      await world.worker();
      const queue = await world.queue();
      const first = await queue.submit({ prompt: 'My name is Ada.' });
      const sessionId = (await first.result).sessionId!;
      await first.close();
      await first.closed;

      const again = await queue.submit({ sessionId, prompt: 'What is my name?' });
      await expect(again.opened).resolves.toBe(sessionId);
      await expect(again.result).resolves.toMatchObject({ text: 'Your name is Ada.', sessionId });
      await again.close();
      await again.closed;

      const messages = (world.emu.requests[1]!.body as { messages: { role: string; content: string }[] }).messages;
      expect(messages.map((m) => m.content)).toEqual(['My name is Ada.', 'Hello Ada.', 'What is my name?']);
      const log = await world.store().read(sessionId, 0, 10_000);
      expect(seqs(log)).toEqual(log.map((_, i) => i + 1));
    }, 30_000);
  });
});
