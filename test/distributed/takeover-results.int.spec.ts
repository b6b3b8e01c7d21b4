/**
 * A worker that dies after its session's request finished in the log but before it published the
 * result on the submission's output stream (found by the distributed bench: 20 of 1,000 handles
 * waited forever). The worker's queue connection runs through a TCP proxy that is frozen while its
 * request finishes (the log is written over the store's own connection, the result's publication
 * is stuck), then its store stops renewing the lease: a second worker takes the job over and must
 * publish the result from the log, once.
 */
import { IsString } from 'class-validator';
import { injectable } from '../../src/core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../src/core/plugin/tool-handler.js';
import { describeWithRedis, startTcpProxy, type TcpProxy } from '../support/redis-server.js';
import { DistributedWorld, until } from './distributed-fixture.js';
import { withDeadline } from '../support/deadline.js';

class GateInput {
  @IsString()
  text!: string;
}

/** Counts its executions; each waits until `open()`. */
@injectable()
class GatedToolHandler implements ToolHandler<GateInput> {
  static executions: string[] = [];
  static open: () => void = () => undefined;
  static gate: Promise<void> = Promise.resolve();
  readonly name = 'note';
  readonly description = 'Notes a text.';
  readonly inputType = GateInput;
  async handle(input: GateInput, ctx: ToolContext): Promise<string> {
    GatedToolHandler.executions.push(ctx.toolUseId);
    await GatedToolHandler.gate;
    return `noted ${input.text}`;
  }
}

describeWithRedis('a takeover after the owner died between two writes of its session', () => {
  let world: DistributedWorld | undefined;
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    proxy?.thaw();
    await world?.close();
    await proxy?.close();
    world = undefined;
    proxy = undefined;
  }, 60_000);

  it('should publish the result from the log on the new owner, once', async () => {
    GatedToolHandler.executions = [];
    GatedToolHandler.gate = new Promise<void>((resolve) => (GatedToolHandler.open = resolve));
    world = await DistributedWorld.start([{ toolCalls: [{ id: 'call_note', name: 'note', arguments: { text: 'Ada' } }] }, { text: 'Noted: Ada.' }]);
    proxy = await startTcpProxy(world.redis.port);
    const rxA = await world.rx([GatedToolHandler]);
    const storeA = world.stores[world.stores.length - 1]!;
    await world.worker([], { redis: { url: proxy.url } }, rxA);
    const queue = await world.queue();
    const handle = await queue.submit({ prompt: 'Note Ada.' });
    const sessionId = await handle.opened;
    await until(() => GatedToolHandler.executions.length === 1, 20_000, 'the tool to start');

    // The first worker's queue connection freezes; its request finishes in the log.
    proxy.freeze();
    GatedToolHandler.open();
    const reader = world.store();
    await until(
      async () => (await reader.read(sessionId, 0, 1_000)).some((e) => e.source === 'agentrx' && e.raw.type === 'agentrx.run_finished'),
      20_000,
      'the run to finish in the log',
    );
    // It dies: its store stops renewing the lease (its job lock already stopped with the proxy).
    await storeA.close();

    await world.worker([GatedToolHandler]);
    const result = await withDeadline(handle.result, 30_000, 'the result on the handle');
    expect(result).toMatchObject({
      terminal: 'end_turn',
      text: 'Noted: Ada.',
      texts: ['', 'Noted: Ada.'],
      turns: 2,
      sessionId,
      customToolUses: [{ id: 'call_note', name: 'note' }],
    });
    await handle.close();
    await handle.closed;
    expect(GatedToolHandler.executions).toEqual(['call_note']);
    expect(world.logs.some((l) => l.includes(`session ${sessionId}: publishing 1 result(s)`))).toBe(true);
    const results = (await readOutputs(world, handle.id)).filter((k) => k === 'result');
    expect(results).toHaveLength(1);
  }, 120_000);

  it('should apply again a close the dead owner had applied but not finished, and end the session once', async () => {
    GatedToolHandler.executions = [];
    GatedToolHandler.gate = new Promise<void>((resolve) => (GatedToolHandler.open = resolve));
    world = await DistributedWorld.start([
      { toolCalls: [{ id: 'call_note', name: 'note', arguments: { text: 'Ada' } }] },
      { text: 'I could not confirm the note.' },
    ]);
    proxy = await startTcpProxy(world.redis.port);
    const rxA = await world.rx([GatedToolHandler]);
    const storeA = world.stores[world.stores.length - 1]!;
    await world.worker([], { redis: { url: proxy.url } }, rxA);
    const queue = await world.queue();
    const handle = await queue.submit({ prompt: 'Note Ada.' });
    await handle.opened;
    await until(() => GatedToolHandler.executions.length === 1, 20_000, 'the tool to start');
    // The client closes the session: the first worker applies the close (the running request
    // finishes first, and its tool never answers there), then dies.
    await handle.close();
    await until(async () => (await readOutputs(world!, handle.id)).includes('ack'), 20_000, 'the close to be applied');
    proxy.freeze();
    await storeA.close();

    await world.worker([GatedToolHandler]);
    // The new owner answers the tool as outcome unknown, finishes the request, and closes the session.
    await expect(withDeadline(handle.result, 30_000, 'the result')).resolves.toMatchObject({ text: 'I could not confirm the note.' });
    await withDeadline(handle.closed, 30_000, 'the end of the session');
    expect(GatedToolHandler.executions).toEqual(['call_note']);
    expect((await readOutputs(world, handle.id)).filter((k) => k === 'closed')).toHaveLength(1);
  }, 120_000);
});

/** The kinds of the messages on the submission's output stream, in order. */
async function readOutputs(world: DistributedWorld, submissionId: string): Promise<string[]> {
  const { openRedis } = await import('../../src/distributed/redis-link.js');
  const { DistributedKeys } = await import('../../src/distributed/distributed-keys.js');
  const { decodeEntry } = await import('../../src/distributed/distributed-messages.js');
  const client = await openRedis(world.redis.url, 'takeover-results-test');
  try {
    const entries = await client.xrange(new DistributedKeys().of(submissionId).outputs, '-', '+');
    return entries.map(([, fields]) => decodeEntry<{ kind: string }>(fields)?.kind ?? '?');
  } finally {
    client.disconnect();
  }
}
