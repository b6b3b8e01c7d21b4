/**
 * Inputs of a submitted session (`message`, `sendEvent`, `cancel`, `close`) travel on the
 * submission's input stream to the worker that owns it; results and the end come back on the
 * output stream. Real redis-server, real BullMQ, the OpenAI emulator on loopback.
 */
import { lastValueFrom, take, toArray } from 'rxjs';
import { injectable } from '../../src/core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../src/core/plugin/tool-handler.js';
import { NoInput } from '../fakes/fake-tools.js';
import { DistributedWorld, until } from './distributed-fixture.js';
import { describeWithRedis } from '../support/redis-server.js';

/** A tool that waits until the test releases it (or its signal aborts); counts its starts. */
@injectable()
class GateToolHandler implements ToolHandler<NoInput> {
  static started = 0;
  static aborted = 0;
  static release: (() => void) | undefined;
  readonly name = 'gate';
  readonly description = 'Waits for the test.';
  readonly inputType = NoInput;
  readonly timeoutMs = 60_000;
  handle(_input: NoInput, ctx: ToolContext): Promise<string> {
    GateToolHandler.started++;
    return new Promise((resolve) => {
      GateToolHandler.release = () => resolve('opened');
      ctx.signal.addEventListener('abort', () => {
        GateToolHandler.aborted++;
        resolve('aborted');
      });
    });
  }
}

describeWithRedis('RemoteSession inputs through the input stream', () => {
  let world: DistributedWorld;
  beforeEach(() => {
    GateToolHandler.started = 0;
    GateToolHandler.aborted = 0;
    GateToolHandler.release = undefined;
  });
  afterEach(async () => {
    await world?.close();
  });

  describe('.message', () => {
    it('should run each message as a new request of the same session, then close on close()', async () => {
      world = await DistributedWorld.start([{ text: 'First answer.' }, { text: 'Second answer.' }]);
      await world.worker();
      const handle = await (await world.queue()).submit({ prompt: 'One.' });
      const results = lastValueFrom(handle.results$.pipe(toArray()));
      await handle.result;
      await handle.message('Two.');
      await until(() => world.emu.requests.length >= 2, 10_000, 'the second model call');
      await handle.close();
      await handle.closed;

      expect((await results).map((r) => r.text)).toEqual(['First answer.', 'Second answer.']);
      const second = world.emu.requests[1]!.body as { messages: { role: string; content: string }[] };
      expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(second.messages[2]!.content).toBe('Two.');
    }, 30_000);

    it('should keep inputs sent before any worker took the job, and apply them in order', async () => {
      world = await DistributedWorld.start([{ text: 'A.' }, { text: 'B.' }]);
      const handle = await (await world.queue()).submit({ prompt: 'first' });
      await handle.message('second');
      await world.worker();

      expect(await lastValueFrom(handle.results$.pipe(take(2), toArray()))).toMatchObject([{ text: 'A.' }, { text: 'B.' }]);
      await handle.close();
      await expect(handle.closed).resolves.toBeUndefined();
      const second = world.emu.requests[1]!.body as { messages: { role: string; content: string }[] };
      expect(second.messages.map((m) => m.content)).toEqual(['first', 'A.', 'second']);
    }, 30_000);
  });

  describe('.cancel', () => {
    it('should abort the running tool and end the session with cancelled on results$ and a RUN_ERROR', async () => {
      world = await DistributedWorld.start([{ toolCalls: [{ id: 'call_gate', name: 'gate', arguments: {} }] }, { text: 'never' }]);
      await world.worker([GateToolHandler]);
      const handle = await (await world.queue()).submit({ prompt: 'Wait at the gate.' });
      const agui = lastValueFrom(handle.agui$.pipe(toArray()));
      await until(() => GateToolHandler.started === 1, 10_000, 'the tool to start');
      await handle.cancel();

      await expect(handle.result).rejects.toMatchObject({ code: 'cancelled' });
      await handle.closed;
      expect(GateToolHandler.aborted).toBe(1);
      expect((await agui).at(-1)).toMatchObject({ type: 'RUN_ERROR' });
      expect(world.emu.requests).toHaveLength(1);
    }, 30_000);
  });

  describe('.sendEvent', () => {
    it('should reject with the worker-side error (a Local session takes no raw events) and leave the session running', async () => {
      world = await DistributedWorld.start([{ text: 'Ready.' }, { text: 'Still here.' }]);
      await world.worker();
      const handle = await (await world.queue()).submit({ prompt: 'Hi.' });
      await handle.result;

      await expect(handle.sendEvent({ type: 'user.tool_confirmation', tool_use_id: 'x', result: 'allow' })).rejects.toMatchObject({
        code: 'unsupported',
        message: expect.stringMatching(/does not accept raw events/),
      });
      await handle.message('Still there?');
      await handle.close();
      expect((await lastValueFrom(handle.results$.pipe(toArray()))).map((r) => r.text)).toEqual(['Ready.', 'Still here.']);
    }, 30_000);
  });

  describe('idle sessions', () => {
    it('should close a live session that had no request and no input for idleMs, and free the worker slot', async () => {
      world = await DistributedWorld.start([{ text: 'Done.' }]);
      const worker = await world.worker([], { idleMs: 300 });
      const handle = await (await world.queue()).submit({ prompt: 'Hi.' });
      await handle.result;

      await handle.closed;
      await until(() => worker.active === 0, 5_000, 'the job to end');
      expect(world.logs.some((l) => /idle for 300 ms: closing it/.test(l))).toBe(true);
      await expect(handle.message('late')).rejects.toMatchObject({ code: 'session_closed' });
    }, 30_000);
  });

  describe('a job whose options the worker refuses', () => {
    it('should fail once with the validation error on the handle, and not be retried', async () => {
      world = await DistributedWorld.start([{ text: 'never' }]);
      await world.worker();
      const handle = await (await world.queue()).submit({ prompt: 'x', requireTerminalTool: true, terminalTool: 'no_such_tool' });

      await expect(handle.result).rejects.toMatchObject({ code: 'invalid_options', message: expect.stringMatching(/no_such_tool/) });
      await handle.closed;
      expect(world.logs.filter((l) => l.includes(`job ${handle.id} started`))).toHaveLength(1);
      expect(world.emu.requests).toHaveLength(0);
    }, 30_000);
  });
});
