/**
 * A worker SIGKILLed mid-tool (issue 13, part 3): the worker runs in a child process of the built
 * package (dist/); BullMQ's stalled-job check gives its job to a second worker process, which
 * takes the session's lease with a higher epoch and resumes it from the log and the ledger. The
 * tool that started and recorded nothing is not idempotent, so it is not run again: the model gets
 * an "outcome unknown" result. The handle submitted before the crash gets the result.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { lastValueFrom, take, toArray } from 'rxjs';
import type { SessionEvent } from '../../src/core/events/session-event.js';
import { RedisSessionStore } from '../../src/distributed/redis-store/redis-session-store.js';
import { SessionQueue } from '../../src/distributed/session-queue.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { forkChild, type ProofChild } from '../proof/child-process.js';
import { until } from './distributed-fixture.js';
import { describeWithRedis, startRedisServer as startRedis, type RedisServer as RedisProcess } from '../support/redis-server.js';
import { tempDirSync } from '../support/temp-dir.js';

const ROOT = resolve(process.cwd());
const CHILD = join(ROOT, 'test/proof/fixtures/worker-child.mjs');
const QUEUE = 'crash-q';

type Message = { role: string; content?: string | null; tool_call_id?: string };

/**
 * The proof workspace of this spec: builds dist/ once (the children import it), a fresh folder per
 * test for the execution log, and after each test kills leftover children and closes the host.
 * What the children import (the bundled dist/, scripts/bundle.mjs) must be at least as new as its
 * sources.
 */
function useWorkspace(closeHost: () => Promise<void>): { children: ChildProcess[]; logFile(): string; executions(): string[] } {
  let dir = '';
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });
    for (const f of ['distributed/session-worker', 'distributed/redis-store/redis-session-store']) {
      expect(existsSync(join(ROOT, `dist/${f}.js`))).toBe(true);
      expect(statSync(join(ROOT, `dist/${f}.js`)).mtimeMs).toBeGreaterThanOrEqual(statSync(join(ROOT, `src/${f}.ts`)).mtimeMs);
    }
  }, 180_000);
  beforeEach(() => {
    dir = tempDirSync('agentrx-worker-crash-');
  });
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await closeHost();
  });
  const logFile = (): string => join(dir, 'executions.log');
  return { children, logFile, executions: () => (existsSync(logFile()) ? readFileSync(logFile(), 'utf8').trim().split('\n').filter(Boolean) : []) };
}

describeWithRedis('a worker killed mid-tool (child processes, real Redis and BullMQ)', () => {
  let redis: RedisProcess | undefined;
  let emu: OpenAiEmulator | undefined;
  let queue: SessionQueue | undefined;
  const stores: RedisSessionStore[] = [];
  const { children, logFile, executions } = useWorkspace(async () => {
    await queue?.close();
    for (const s of stores.splice(0)) await s.close();
    await emu?.close();
    await redis?.stop();
  });

  const spawnWorker = async (role: 'hang' | 'ok', idempotent = false): Promise<ProofChild> => {
    const child = forkChild(CHILD, [redis!.url, QUEUE, emu!.baseUrl, logFile(), role, idempotent ? '1' : '0'], children);
    await until(() => child.messages.some((m) => (m as { type: string }).type === 'ready') || child.proc.exitCode !== null, 20_000, 'the worker to be ready');
    expect(child.proc.exitCode).toBeNull();
    return child;
  };
  const logLines = (child: ProofChild): string[] =>
    child.messages.flatMap((m) => ((m as { type: string }).type === 'log' ? [(m as unknown as { line: string }).line] : []));

  it('should resume the session on another worker: the tool ran once, the seq is gap-free, the original handle gets the result', async () => {
    redis = await startRedis();
    emu = await startOpenAiEmulator({
      script: [
        { text: 'Let me note that.', toolCalls: [{ id: 'call_note', name: 'note', arguments: { text: 'Ada' } }] },
        { text: 'I could not confirm the note.' },
      ],
    });
    const store = new RedisSessionStore({ url: redis.url, tailPollMs: 500 });
    stores.push(store);
    queue = await SessionQueue.connect({ redis: { url: redis.url }, store, queueName: QUEUE });

    const first = await spawnWorker('hang');
    const handle = await queue.submit({ prompt: 'My name is Ada. Note it.' });
    const events = lastValueFrom(handle.events$.pipe(toArray()));
    const started = await first.next('tool_started');
    expect(started.toolUseId).toBe('call_note');
    expect(await handle.opened).toBe(started.sessionId);
    first.proc.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const second = await spawnWorker('ok');
    const result = await handle.result;
    expect(result).toMatchObject({ terminal: 'end_turn', text: 'I could not confirm the note.', sessionId: started.sessionId });
    await handle.close();
    await handle.closed;

    // The tool ran once, in the killed worker; the second worker answered the call as outcome unknown.
    expect(executions()).toHaveLength(1);
    const resumed = (emu.requests.find((r) => r.completion === 1)!.body as { messages: Message[] }).messages;
    expect(resumed.map((m) => [m.role, m.tool_call_id ?? null])).toEqual([
      ['user', null],
      ['assistant', null],
      ['tool', 'call_note'],
    ]);
    expect(resumed[2]!.content).toMatch(/outcome unknown/);
    // The original handle saw every event once, gap-free, across both workers; so does the store.
    const seen = (await events).map((e: SessionEvent) => e.seq);
    expect(seen).toEqual(seen.map((_, i) => i + 1));
    const log = await store.read(started.sessionId, 0, 10_000);
    expect(log.map((e) => e.seq)).toEqual(seen);
    expect(log.flatMap((e) => (e.source === 'agentrx' && e.raw.type === 'agentrx.run_started' ? [e.raw.resumed] : []))).toEqual([false, true]);
    expect(logLines(second).some((l) => l.includes(`job ${handle.id} started (taken over`))).toBe(true);
  }, 90_000);

  it('should run an idempotent tool that started and recorded nothing once more on the new worker, and deliver its real result', async () => {
    redis = await startRedis();
    emu = await startOpenAiEmulator({ script: [{ toolCalls: [{ id: 'call_note', name: 'note', arguments: { text: 'Ada' } }] }, { text: 'Noted Ada.' }] });
    const store = new RedisSessionStore({ url: redis.url, tailPollMs: 500 });
    stores.push(store);
    queue = await SessionQueue.connect({ redis: { url: redis.url }, store, queueName: QUEUE });

    const first = await spawnWorker('hang', true);
    const handle = await queue.submit({ prompt: 'Note Ada.' });
    await first.next('tool_started');
    first.proc.kill('SIGKILL');
    await first.exited;
    await spawnWorker('ok', true);

    await expect(handle.result).resolves.toMatchObject({ text: 'Noted Ada.' });
    expect(executions().map((l) => l.split(' ').slice(1).join(' '))).toEqual(['call_note hang', 'call_note ok']);
    const tool = (emu.requests.find((r) => r.completion === 1)!.body as { messages: Message[] }).messages.find((m) => m.role === 'tool');
    expect(tool).toMatchObject({ tool_call_id: 'call_note', content: 'noted Ada' });
  }, 90_000);

  it('should take over a live session whose worker died between requests, and answer a later message with the whole history', async () => {
    redis = await startRedis();
    emu = await startOpenAiEmulator({ script: [{ text: 'Hello Ada.' }, { text: 'Your name is Ada.' }] });
    const store = new RedisSessionStore({ url: redis.url, tailPollMs: 500 });
    stores.push(store);
    queue = await SessionQueue.connect({ redis: { url: redis.url }, store, queueName: QUEUE });

    const first = await spawnWorker('ok');
    const handle = await queue.submit({ prompt: 'My name is Ada.' });
    const events = lastValueFrom(handle.events$.pipe(toArray()));
    await expect(handle.result).resolves.toMatchObject({ text: 'Hello Ada.' });
    first.proc.kill('SIGKILL');
    await first.exited;
    await handle.message('What is my name?');
    const second = await spawnWorker('ok');

    const results = await lastValueFrom(handle.results$.pipe(take(2), toArray()));
    expect(results.map((r) => r.text)).toEqual(['Hello Ada.', 'Your name is Ada.']);
    expect((emu.requests[1]!.body as { messages: Message[] }).messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'Hello Ada.'],
      ['user', 'What is my name?'],
    ]);
    await handle.close();
    await handle.closed;
    const seen = (await events).map((e: SessionEvent) => e.seq);
    expect(seen).toEqual(seen.map((_, i) => i + 1));
    // The job ends on the worker that took it over (its log line follows the end it published).
    await until(() => logLines(second).some((l) => l.includes(`job ${handle.id} ended`)), 10_000, 'the end of the job on the second worker');
  }, 90_000);
});
