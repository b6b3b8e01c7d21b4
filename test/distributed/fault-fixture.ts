/**
 * Shared world of the distributed fault specs (issue 13, "Faults"): a real redis-server, the
 * OpenAI emulator's demo model (an arithmetic prompt makes it call `calculate`, then answer with
 * the result), worker child processes of the built package (`test/proof/fixtures/fault-worker-child.mjs`,
 * what `agentrx worker` runs) whose tool counts its own executions in a shared file, and, in this
 * process, the submitting client and a third store instance that reads every session's log.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { SessionEvent } from '../../src/core/events/session-event.js';
import { RedisSessionStore } from '../../src/distributed/redis-store/redis-session-store.js';
import { DistributedKeys } from '../../src/distributed/distributed-keys.js';
import { decodeEntry, type OutputMessage } from '../../src/distributed/distributed-messages.js';
import { openRedis } from '../../src/distributed/redis-link.js';
import { SessionQueue } from '../../src/distributed/session-queue.js';
import type { RemoteSession } from '../../src/distributed/remote-session.js';
import { startOpenAiEmulator, type EmulatorFault, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { forkChild, type ProofChild } from '../proof/child-process.js';
import { startRedisServer, type RedisServer, type RedisServerOptions } from '../support/redis-server.js';
import { tempDirSync } from '../support/temp-dir.js';
import { withDeadline } from '../support/deadline.js';
import { until } from './distributed-fixture.js';

const ROOT = resolve(process.cwd());
const CHILD = join(ROOT, 'test/proof/fixtures/fault-worker-child.mjs');

/** A prompt the demo model answers with one `calculate` call, then a final text quoting its result. */
export const PROMPT = 'what is (17 + 25) * 3';

/** Options of one worker child (see the fixture's header). */
export interface FaultWorkerOptions {
  readonly leaseMs?: number;
  readonly lockDurationMs?: number;
  readonly stalledIntervalMs?: number;
  readonly concurrency?: number;
  /** Tool executions wait until the world's gate is opened. */
  readonly gated?: boolean;
  /** The worker's Redis (all its connections), e.g. a proxy in front of the world's; default the world's. */
  readonly redisUrl?: string;
}

/** One line of the execution file: which process ran which tool use of which session. */
export interface Execution {
  readonly pid: number;
  readonly sessionId: string;
  readonly toolUseId: string;
}

/**
 * Registers the hooks of a fault spec (dist/ built once: the children import it; a fresh folder
 * and world per test; children killed and everything closed after it) and returns the world.
 */
export function useFaultWorld(): { world(): FaultWorld } {
  let current: FaultWorld | undefined;
  beforeAll(async () => {
    // The build bundles dist/ (scripts/bundle.mjs); what the children import must be current.
    await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });
    for (const f of ['distributed/session-worker', 'distributed/redis-store/redis-session-store']) {
      expect(statSync(join(ROOT, `dist/${f}.js`)).mtimeMs).toBeGreaterThanOrEqual(statSync(join(ROOT, `src/${f}.ts`)).mtimeMs);
    }
  }, 240_000);
  afterEach(async () => {
    await current?.close();
    current = undefined;
  }, 60_000);
  return {
    world: () => {
      current ??= new FaultWorld();
      return current;
    },
  };
}

/** See {@link useFaultWorld}. Call `start` first. */
export class FaultWorld {
  /** The execution log and the gate file; removed after the test (a `tempDirSync`). */
  readonly dir = tempDirSync('agentrx-faults-');
  readonly children: ChildProcess[] = [];
  readonly queueName = `faults-${Math.random().toString(36).slice(2, 8)}`;
  /** The emulator's fault plan, read at each completion request: a test edits it while it runs. */
  readonly faults: Record<number, EmulatorFault> = {};
  redis!: RedisServer;
  emu!: OpenAiEmulator;
  queue!: SessionQueue;
  /** The third reader: a store instance of its own, neither a worker's nor the client's. */
  reader!: RedisSessionStore;
  private readonly stores: RedisSessionStore[] = [];
  /** Every worker child, for the diagnosis of a session that does not complete. */
  private readonly workers: ProofChild[] = [];

  async start(redis: RedisServerOptions = {}): Promise<void> {
    this.redis = await startRedisServer(redis);
    this.emu = await startOpenAiEmulator({ model: 'demo', faults: this.faults });
    const clientStore = this.store();
    this.reader = this.store();
    this.queue = await SessionQueue.connect({ redis: { url: this.redis.url }, store: clientStore, queueName: this.queueName });
  }

  get logFile(): string {
    return join(this.dir, 'executions.log');
  }

  get gateFile(): string {
    return join(this.dir, 'gate');
  }

  /** Lets gated tool executions answer. */
  openGate(): void {
    // An empty file: its existence is the signal.
    writeFileSync(this.gateFile, '');
  }

  store(): RedisSessionStore {
    const s = new RedisSessionStore({ url: this.redis.url, leaseMs: 1_000, tailPollMs: 500 });
    this.stores.push(s);
    return s;
  }

  /** Starts a worker child and waits until it takes jobs. */
  async worker(opts: FaultWorkerOptions = {}): Promise<ProofChild> {
    const args = {
      redisUrl: opts.redisUrl ?? this.redis.url,
      queueName: this.queueName,
      baseUrl: this.emu.baseUrl,
      logFile: this.logFile,
      ...(opts.gated ? { gateFile: this.gateFile } : {}),
      leaseMs: opts.leaseMs,
      lockDurationMs: opts.lockDurationMs,
      stalledIntervalMs: opts.stalledIntervalMs,
      concurrency: opts.concurrency,
    };
    const child = forkChild(CHILD, [JSON.stringify(args)], this.children);
    this.workers.push(child);
    await until(
      () => child.messages.some((m) => (m as { type: string }).type === 'ready') || child.proc.exitCode !== null,
      30_000,
      'the worker child to be ready',
    );
    expect(child.proc.exitCode).toBeNull();
    return child;
  }

  /** Every tool execution of every process, in order. */
  executions(): Execution[] {
    if (!existsSync(this.logFile)) return [];
    return readFileSync(this.logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [pid, sessionId, toolUseId] = l.split(' ');
        return { pid: Number(pid), sessionId: sessionId!, toolUseId: toolUseId! };
      });
  }

  /** Submits `n` sessions of {@link PROMPT}. */
  async submit(n: number): Promise<RemoteSession[]> {
    const handles: RemoteSession[] = [];
    for (let i = 0; i < n; i++) handles.push(await this.queue.submit({ prompt: PROMPT }));
    return handles;
  }

  /**
   * The checks every fault ends with, for each session: it completed with the model's answer to
   * the tool's result; its log, read by the third store instance, is `1..n` without a gap or a
   * repeat (and no event id twice); each of its tool-use ids was executed exactly once, and it
   * executed exactly one. Returns the logs.
   */
  async checkCompleted(handles: readonly RemoteSession[]): Promise<Map<string, SessionEvent[]>> {
    // Bounded, naming what is missing: under load a session that never completes shows which one and what the workers said.
    const settled = new Set<string>();
    for (const h of handles)
      void h.result.then(
        () => settled.add(h.id),
        () => settled.add(h.id),
      );
    await until(() => settled.size === handles.length, 100_000, 'every session to complete').catch((e: unknown) => {
      const pending = handles.filter((h) => !settled.has(h.id)).map((h) => h.id);
      throw this.diagnosed(new Error(`${(e as Error).message}; pending: ${pending.join(', ')}`));
    });
    const results = await Promise.all(handles.map((h) => h.result));
    for (const r of results) expect(r).toMatchObject({ terminal: 'end_turn', text: expect.stringContaining('calculate returned: "(17 + 25) * 3 = 126"') });
    await Promise.all(
      handles.map(async (h) => {
        await h.close();
        await h.closed;
      }),
    );
    const executions = this.executions();
    const ids = executions.map((e) => e.toolUseId);
    expect(new Set(ids).size).toBe(ids.length);
    const logs = new Map<string, SessionEvent[]>();
    for (const h of handles) {
      const sessionId = h.sessionId!;
      expect(executions.filter((e) => e.sessionId === sessionId)).toHaveLength(1);
      const log = await this.reader.read(sessionId, 0, 100_000);
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
      const eventIds = log.flatMap((e) => (e.source === 'provider' && e.id !== undefined ? [e.id] : []));
      expect(new Set(eventIds).size).toBe(eventIds.length);
      logs.set(sessionId, log);
    }
    expect(executions).toHaveLength(handles.length);
    return logs;
  }

  /**
   * `p` within `ms`; past it, a rejection naming `what` with the workers' last log lines and the
   * model requests so far (a jest timeout names neither the step that hung nor why).
   */
  async within<T>(p: Promise<T>, what: string, ms = 60_000): Promise<T> {
    return withDeadline(p, ms, what).catch((e: unknown) => {
      throw this.diagnosed(e as Error);
    });
  }

  /** Resolves once `cond()` holds, polling; past `ms`, fails like {@link within}. */
  async waitFor(cond: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
    await until(cond, ms, what).catch((e: unknown) => {
      throw this.diagnosed(e as Error);
    });
  }

  private diagnosed(e: Error): Error {
    const logs = this.workers.map(
      (w, i) => `worker ${i} (pid ${w.proc.pid}, exit ${w.proc.exitCode ?? w.proc.signalCode ?? 'none'}):\n  ${FaultWorld.logLines(w).slice(-40).join('\n  ')}`,
    );
    const requests = this.emu?.requests.map((r) => `#${r.completion} chunks ${r.chunksSent}`).join(', ') ?? 'none';
    return new Error(`${e.message}\nmodel requests: ${requests}\n${logs.join('\n')}`);
  }

  /** What the owner workers published on submission `submissionId`'s output stream, in order. */
  async outputsOf(submissionId: string): Promise<OutputMessage[]> {
    const client = await openRedis(this.redis.url, 'fault-test-reader');
    try {
      const entries = await client.xrange(new DistributedKeys().of(submissionId).outputs, '-', '+');
      return entries.flatMap(([, fields]) => decodeEntry<OutputMessage>(fields) ?? []);
    } finally {
      client.disconnect();
    }
  }

  /** A child's worker log lines. */
  static logLines(child: ProofChild): string[] {
    return child.messages.flatMap((m) => ((m as { type: string }).type === 'log' ? [(m as unknown as { line: string }).line] : []));
  }

  async close(): Promise<void> {
    // SIGKILL ends a stopped (SIGSTOP) child too.
    for (const c of this.children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await this.queue?.close().catch(() => undefined);
    for (const s of this.stores.splice(0)) await s.close().catch(() => undefined);
    await this.emu?.close();
    await this.redis?.stop();
  }
}
