/**
 * Graceful stop of a worker (SIGTERM in the CLI): it takes no more jobs, lets a running request
 * finish within the grace period, and hands its live sessions back to the queue (store lease
 * released, job back in `wait`); another worker resumes them and answers later messages.
 */
import { lastValueFrom, take, toArray } from 'rxjs';
import { injectable } from '../../src/core/util/inversify.js';
import type { ToolHandler } from '../../src/core/plugin/tool-handler.js';
import { NoInput } from '../fakes/fake-tools.js';
import { DistributedWorld, until } from './distributed-fixture.js';
import { describeWithRedis } from '../support/redis-server.js';

type Message = { role: string; content?: string | null };
const messagesOf = (world: DistributedWorld, i: number): Message[] => (world.emu.requests[i]!.body as { messages: Message[] }).messages;

/** A tool the test releases; counts its runs. */
@injectable()
class SlowToolHandler implements ToolHandler<NoInput> {
  static runs = 0;
  static release: (() => void) | undefined;
  readonly name = 'slow';
  readonly description = 'Waits for the test.';
  readonly inputType = NoInput;
  readonly timeoutMs = 60_000;
  handle(): Promise<string> {
    SlowToolHandler.runs++;
    return new Promise((resolve) => (SlowToolHandler.release = () => resolve('slow done')));
  }
}

describeWithRedis('SessionWorker.stop', () => {
  let world: DistributedWorld;
  beforeEach(() => {
    SlowToolHandler.runs = 0;
    SlowToolHandler.release = undefined;
  });
  afterEach(async () => {
    await world?.close();
  });

  describe('when the worker holds an idle live session', () => {
    it('should hand it back at once; another worker resumes it and answers a later message with the whole history', async () => {
      world = await DistributedWorld.start([{ text: 'Hello Ada.' }, { text: 'Your name is Ada.' }]);
      const first = await world.worker();
      const handle = await (await world.queue()).submit({ prompt: 'My name is Ada.' });
      const results = lastValueFrom(handle.results$.pipe(take(2), toArray()));
      await handle.result;
      let closed = false;
      void handle.closed.then(() => (closed = true));

      await first.stop({ graceMs: 10_000 });
      expect(world.logs.some((l) => l.includes(`job ${handle.id} handed back`))).toBe(true);
      // Sent while no worker owns the session: it waits on the input stream.
      await handle.message('What is my name?');
      await world.worker();

      expect((await results).map((r) => r.text)).toEqual(['Hello Ada.', 'Your name is Ada.']);
      expect(closed).toBe(false);
      expect(messagesOf(world, 1).map((m) => [m.role, m.content])).toEqual([
        ['user', 'My name is Ada.'],
        ['assistant', 'Hello Ada.'],
        ['user', 'What is my name?'],
      ]);
      expect(world.logs.filter((l) => l.includes(`job ${handle.id} started`))).toHaveLength(2);
      await handle.close();
      await handle.closed;
      const events = await lastValueFrom(world.queues[0]!.open(handle.id).events$.pipe(toArray()));
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    }, 30_000);
  });

  describe('when a request is running', () => {
    it('should let it finish within the grace period, deliver its result, then hand the session back', async () => {
      world = await DistributedWorld.start([
        { toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }] },
        { text: 'Slow is done.' },
        { text: 'Still here.' },
      ]);
      const first = await world.worker([SlowToolHandler]);
      const handle = await (await world.queue()).submit({ prompt: 'Run slow.' });
      await until(() => SlowToolHandler.runs === 1, 10_000, 'the tool to start');

      const stopping = first.stop({ graceMs: 20_000 });
      SlowToolHandler.release!();
      await expect(handle.result).resolves.toMatchObject({ text: 'Slow is done.' });
      await stopping;
      expect(world.logs.some((l) => l.includes(`job ${handle.id} handed back`))).toBe(true);

      await world.worker([SlowToolHandler]);
      await handle.message('Are you there?');
      expect((await lastValueFrom(handle.results$.pipe(take(2), toArray()))).map((r) => r.text)).toEqual(['Slow is done.', 'Still here.']);
      expect(SlowToolHandler.runs).toBe(1);
    }, 30_000);
  });

  describe('when a request is still running at the end of the grace period', () => {
    it('should cancel it here and hand the session back; the next worker finishes the request without running the tool again', async () => {
      world = await DistributedWorld.start([{ toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }] }, { text: 'Recovered.' }]);
      const first = await world.worker([SlowToolHandler]);
      const handle = await (await world.queue()).submit({ prompt: 'Run slow.' });
      await until(() => SlowToolHandler.runs === 1, 10_000, 'the tool to start');

      await first.stop({ graceMs: 50 });
      expect(world.logs.some((l) => l.includes(`job ${handle.id} handed back`))).toBe(true);
      await world.worker([SlowToolHandler]);

      await expect(handle.result).resolves.toMatchObject({ text: 'Recovered.' });
      expect(SlowToolHandler.runs).toBe(1);
      const tool = (world.emu.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === 'tool');
      // The run cancelled here recorded the tool's end as an error result; the next worker posts it.
      expect(tool).toMatchObject({ tool_call_id: 'call_slow', content: expect.stringMatching(/'slow' was cancelled/) });
    }, 30_000);
  });
});
