/**
 * The worker pool under load (issue 13, "Done when"): one redis-server, one OpenAI emulator (its
 * demo model: an arithmetic prompt makes it call `calculate`, then answer with the result) in this
 * parent process, worker child processes (what `agentrx worker` runs: `startWorker` on an AgentRx
 * with the Local provider and the Redis store), and a submitting child process that submits the
 * sessions through `SessionQueue` and times each one from `submit` to its result. With 3 workers,
 * one is SIGKILLed once half of the sessions ran their tool; with 1 worker, none is.
 *
 * Checked after each run (as a reader of its own, in this process): every session completed; each
 * tool-use id executed once (every execution appends a line to one file, across processes); every
 * session's log is `1..n` without a gap or a repeated seq or event id. Redis commands per session
 * come from `INFO commandstats` before and after the run.
 *
 * This file is also the children's entry point: forked with `--distributed-child <json>`.
 * A session that misses its deadline is a failure of the run, and what Redis holds for it (its
 * BullMQ job, the submission's state and streams, the store's lease, epoch, record, ledger and log
 * tail) is captured while the workers still run and printed in the report.
 * Env: `BENCH_DIST_SESSIONS` (default 1000), `BENCH_DIST_CONCURRENCY` (sessions per worker at
 * once, default 50), `BENCH_DIST_WINDOW` (sessions the submitter keeps in flight, default 200),
 * `BENCH_DIST_DEADLINE_MS` (a session's deadline, default 120000), `BENCH_DIST_ONLY=3` (only the
 * run with 3 workers and a kill).
 */
import 'reflect-metadata';
import { spawn, fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IsString } from 'class-validator';
import { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { AgentRx } from '../src/agentrx.js';
import { ContainerModule } from '../src/core/util/inversify.js';
import { ToolHandler, type ToolContext } from '../src/core/plugin/tool-handler.js';
import { RedisSessionStore } from '../src/distributed/redis-store/redis-session-store.js';
import { SessionStore } from '../src/core/store/session-store.js';
import { RedisKeys } from '../src/distributed/redis-store/redis-scripts.js';
import { DistributedKeys } from '../src/distributed/distributed-keys.js';
import { decodeEntry, type InputMessage, type OutputMessage } from '../src/distributed/distributed-messages.js';
import { openRedis } from '../src/distributed/redis-link.js';
import type { RemoteSession } from '../src/distributed/remote-session.js';
import { SessionQueue } from '../src/distributed/session-queue.js';
import { startWorker } from '../src/distributed/session-worker.js';
import { startOpenAiEmulator } from '../src/testing/openai-emulator.js';
import { percentile, report, type BenchResult } from './harness.js';

const SESSIONS = Number(process.env['BENCH_DIST_SESSIONS'] ?? 1_000);
const CONCURRENCY = Number(process.env['BENCH_DIST_CONCURRENCY'] ?? 50);
const WINDOW = Number(process.env['BENCH_DIST_WINDOW'] ?? 200);
const PROMPT = 'what is (17 + 25) * 3';
/** Lease, job lock and stalled-job check of the workers: a takeover within about 5–10 s of a kill. */
const LEASE_MS = 5_000;
const LOCK_MS = 5_000;
const STALLED_MS = 5_000;
/** A session without its result after this long is counted as a failure. */
const RESULT_DEADLINE_MS = Number(process.env['BENCH_DIST_DEADLINE_MS'] ?? 120_000);
/** `BENCH_DIST_ONLY=3`: only the run with 3 workers and a kill (iterating on a takeover defect). */
const ONLY = process.env['BENCH_DIST_ONLY'];

interface WorkerArgs {
  readonly role: 'worker';
  readonly redisUrl: string;
  readonly queueName: string;
  readonly baseUrl: string;
  readonly logFile: string;
  readonly concurrency: number;
}
interface SubmitterArgs {
  readonly role: 'submitter';
  readonly redisUrl: string;
  readonly queueName: string;
  readonly sessions: number;
  readonly window: number;
}
interface SubmitterResult {
  readonly latenciesMs: number[];
  readonly sessionIds: string[];
  readonly failures: string[];
  /** Submission ids of the sessions that missed their deadline (their state is captured by the parent). */
  readonly stuck: string[];
  /** How the final answers read: the tool's result quoted, the tool failed (outcome unknown), no tool called. */
  readonly answers: { toolResult: number; toolFailed: number; noTool: number };
  readonly elapsedMs: number;
}
interface RunResult {
  readonly workers: number;
  readonly elapsedMs: number;
  readonly latenciesMs: number[];
  readonly completed: number;
  readonly failures: string[];
  readonly answers: SubmitterResult['answers'];
  readonly executions: number;
  readonly duplicateExecutions: number;
  readonly sessionsNotOneExecution: number;
  readonly gaps: number;
  readonly duplicateEvents: number;
  readonly commandsPerSession: number;
  readonly killedAt?: number;
  readonly takenOver: number;
  /** Sessions whose log shows a recorded tool result posted again (replayed from the ledger) by a new owner. */
  readonly replayed: number;
  /** Worker log lines of a worker that found another had claimed its submission (its late writes refused). */
  readonly superseded: number;
  /** What Redis holds for each session that missed its deadline (see {@link captureStuck}). */
  readonly stuck: StuckSession[];
}

/** The bench: 3 workers with one killed midway, then 1 worker. */
export async function distributedBench(): Promise<BenchResult> {
  const three = await runOnce(3, true);
  const one = ONLY === '3' ? undefined : await runOnce(1, false);
  const rows: [string, string][] = [
    [
      'method',
      `${SESSIONS} sessions (Local provider, demo model: one \`calculate\` tool call, then the answer), submitted by one child process keeping ${WINDOW} in flight; workers are child processes with concurrency ${CONCURRENCY}, lease ${LEASE_MS} ms, job lock ${LOCK_MS} ms, stalled check every ${STALLED_MS} ms; one redis-server (no persistence); the emulator in the parent`,
    ],
  ];
  for (const r of one ? [three, one] : [three]) {
    const label = r.workers === 3 ? '3 workers, one SIGKILLed' : '1 worker';
    rows.push(
      [`${label}: completed / submitted`, `${r.completed} / ${SESSIONS}${r.failures.length ? ` (failures: ${r.failures.slice(0, 3).join('; ')})` : ''}`],
      [
        `${label}: final answers quoting the tool's result / "outcome unknown" / no tool call`,
        `${r.answers.toolResult} / ${r.answers.toolFailed} / ${r.answers.noTool}`,
      ],
      [`${label}: wall time, sessions per second`, `${(r.elapsedMs / 1000).toFixed(1)} s, ${(r.completed / (r.elapsedMs / 1000)).toFixed(1)} sessions/s`],
      [
        `${label}: session latency submit → result, p50 / p99 / max`,
        `${percentile(r.latenciesMs, 50).toFixed(0)} / ${percentile(r.latenciesMs, 99).toFixed(0)} / ${Math.max(...r.latenciesMs).toFixed(0)} ms`,
      ],
      [`${label}: Redis commands per session (INFO commandstats)`, r.commandsPerSession.toFixed(1)],
      [
        `${label}: tool executions, duplicate executions of a tool-use id, sessions with ≠ 1 execution`,
        `${r.executions}, ${r.duplicateExecutions}, ${r.sessionsNotOneExecution}`,
      ],
      [`${label}: log gaps, duplicate events (seq or event id)`, `${r.gaps}, ${r.duplicateEvents}`],
    );
    if (r.killedAt !== undefined) {
      rows.push(
        [`${label}: killed after / sessions taken over`, `${r.killedAt} tool executions / ${r.takenOver}`],
        [`${label}: sessions whose new owner posted a recorded tool result again (replayed) / late writers refused`, `${r.replayed} / ${r.superseded}`],
      );
    }
    for (const s of r.stuck) rows.push([`${label}: missed its deadline: ${s.submissionId}`, describeStuck(s)]);
  }
  return report('distributed: sessions on a pool of worker processes (Redis + BullMQ)', rows);
}

async function runOnce(workerCount: number, kill: boolean): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'agentrx-bench-dist-'));
  const logFile = join(dir, 'executions.log');
  const redis = await startRedis(dir);
  const emu = await startOpenAiEmulator({ model: 'demo', recordLimit: 100 });
  const queueName = `bench-${workerCount}`;
  const children: ChildProcess[] = [];
  const takeovers: string[] = [];
  let superseded = 0;
  let admin: Redis | undefined;
  try {
    admin = await openRedis(redis.url, 'bench-admin');
    const workers = [];
    for (let i = 0; i < workerCount; i++) {
      const args: WorkerArgs = { role: 'worker', redisUrl: redis.url, queueName, baseUrl: emu.baseUrl, logFile, concurrency: CONCURRENCY };
      const child = forkSelf(args, children, (m) => {
        const line = (m as { line?: string }).line;
        if (line?.includes('taken over')) takeovers.push(line);
        if (line?.includes('another worker claimed submission')) superseded++;
      });
      workers.push(child);
    }
    await Promise.all(workers.map((w) => w.ready));
    const before = await commandCalls(admin);
    const started = Date.now();
    const submitter = forkSelf({ role: 'submitter', redisUrl: redis.url, queueName, sessions: SESSIONS, window: WINDOW } satisfies SubmitterArgs, children);
    await submitter.ready;
    let killedAt: number | undefined;
    if (kill) {
      // Once half of the sessions ran their tool: the first worker dies with whatever it runs.
      while (executionLines(logFile).length < SESSIONS / 2) await delay(20);
      killedAt = executionLines(logFile).length;
      workers[0]!.proc.kill('SIGKILL');
    }
    const out = (await submitter.result) as SubmitterResult;
    const elapsedMs = Date.now() - started;
    const after = await commandCalls(admin);
    // Captured while the workers still run: what holds each session that missed its deadline.
    const stuck: StuckSession[] = [];
    for (const submissionId of out.stuck) stuck.push(await captureStuck(admin, queueName, submissionId));
    for (const s of stuck) process.stderr.write(`bench distributed: ${s.submissionId} missed its deadline:\n${JSON.stringify(s, null, 2)}\n`);
    for (const w of workers) w.proc.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));

    // Checks, as a reader of its own.
    const reader = new RedisSessionStore({ url: redis.url });
    let gaps = 0;
    let duplicateEvents = 0;
    let replayed = 0;
    for (const sessionId of out.sessionIds) {
      const log = await reader.read(sessionId, 0, 100_000);
      const seqs = log.map((e) => e.seq);
      if (new Set(seqs).size !== seqs.length) duplicateEvents++;
      const ids = log.flatMap((e) => (e.source === 'provider' && e.id !== undefined ? [e.id] : []));
      if (new Set(ids).size !== ids.length) duplicateEvents++;
      if (seqs.some((s, i) => s !== i + 1)) gaps++;
      if (log.some((e) => e.source === 'agentrx' && e.raw.type === 'agentrx.tool_result' && e.raw.replayed)) replayed++;
    }
    await reader.close();
    const lines = executionLines(logFile).map((l) => l.split(' '));
    const perSession = new Map<string, number>();
    for (const [, sessionId] of lines) perSession.set(sessionId!, (perSession.get(sessionId!) ?? 0) + 1);
    return {
      workers: workerCount,
      elapsedMs,
      latenciesMs: out.latenciesMs,
      completed: out.latenciesMs.length,
      failures: out.failures,
      answers: out.answers,
      executions: lines.length,
      duplicateExecutions: lines.length - new Set(lines.map((l) => l[2])).size,
      sessionsNotOneExecution: out.sessionIds.filter((id) => perSession.get(id) !== 1).length,
      gaps,
      duplicateEvents,
      commandsPerSession: (after - before) / SESSIONS,
      takenOver: takeovers.length,
      replayed,
      superseded,
      stuck,
      ...(killedAt !== undefined ? { killedAt } : {}),
    };
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    admin?.disconnect();
    await emu.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What Redis holds for a session that missed its deadline: the job, the submission, the store's session. */
interface StuckSession {
  readonly submissionId: string;
  /** The BullMQ job: state, attempts, failure, and the lock's holder (token and TTL) if any. */
  readonly job: Record<string, unknown>;
  /** The submission's state hash (`sessionId`, `cursor`, `closed`, `worker`). */
  readonly state: Record<string, string>;
  /** Kinds of the output stream's messages, in order (`ack:<input id>`). */
  readonly outputs: string[];
  /** The input stream: `<entry id> <kind>`. */
  readonly inputs: string[];
  /** The store's session, once known: lease, fencing epoch, record status, ledger, last log entries. */
  readonly session?: Record<string, unknown>;
}

/** Reads everything Redis holds for submission `submissionId` (see {@link StuckSession}). */
async function captureStuck(admin: Redis, queueName: string, submissionId: string): Promise<StuckSession> {
  const dist = new DistributedKeys();
  const sub = dist.of(submissionId);
  const queue = new Queue(queueName, { connection: admin, prefix: dist.bullPrefix });
  queue.on('error', () => undefined);
  let job: Record<string, unknown>;
  try {
    const j = await Job.fromId(queue, submissionId);
    const lockKey = `${dist.bullPrefix}:${queueName}:${submissionId}:lock`;
    job = j
      ? {
          state: await j.getState(),
          attemptsMade: j.attemptsMade,
          attemptsStarted: j.attemptsStarted,
          stalledCounter: j.stalledCounter,
          processedBy: j.processedBy,
          failedReason: j.failedReason,
          stacktrace: j.stacktrace,
          lock: await admin.get(lockKey),
          lockTtlMs: await admin.pttl(lockKey),
        }
      : { state: 'missing (removed?)' };
  } finally {
    await queue.close().catch(() => undefined);
  }
  const state = await admin.hgetall(sub.state);
  const outputs = (await admin.xrange(sub.outputs, '-', '+')).map(([, f]) => {
    const m = decodeEntry<OutputMessage>(f);
    return m?.kind === 'ack' ? `ack:${m.input}` : m?.kind === 'closed' ? `closed(${m.error?.code ?? 'ok'})` : (m?.kind ?? '?');
  });
  const inputs = (await admin.xrange(sub.inputs, '-', '+')).map(([id, f]) => `${id} ${decodeEntry<InputMessage>(f)?.kind ?? '?'}`);
  const sessionId = state['sessionId'];
  let session: Record<string, unknown> | undefined;
  if (sessionId !== undefined) {
    const k = new RedisKeys('agentrx:').of(sessionId);
    const record = await admin.hgetall(k.record);
    const data = record['data'] ? (JSON.parse(record['data']) as { transcript?: { role?: string; tool_calls?: unknown }[] }) : undefined;
    const ledger = await admin.hgetall(k.ledger);
    const log = await admin.xrevrange(k.log, '+', '-', 'COUNT', 12);
    session = {
      sessionId,
      lease: await admin.get(k.lease),
      leaseTtlMs: await admin.pttl(k.lease),
      holder: await admin.hgetall(k.holder),
      epoch: await admin.get(k.epoch),
      recordStatus: record['status'],
      transcript: data?.transcript?.map((m) => `${m.role ?? '?'}${m.tool_calls ? '+tool_calls' : ''}`),
      ledger: Object.values(ledger).map((json) => {
        const e = JSON.parse(json) as { toolUseId: string; state: string; result?: { isError?: boolean } };
        return `${e.toolUseId} ${e.state}${e.result?.isError ? ' (error result)' : ''}`;
      }),
      lastLog: log.reverse().map(([id, f]) => {
        const env = JSON.parse(f[f.indexOf('e') + 1]!) as { raw?: { type?: string } };
        return `${id.split('-')[0]} ${env.raw?.type ?? '?'}`;
      }),
    };
  }
  return { submissionId, job, state, outputs, inputs, ...(session ? { session } : {}) };
}

/** One line of a stuck session for the report table. */
function describeStuck(s: StuckSession): string {
  const j = s.job;
  const parts = [
    `job ${String(j['state'])} (attempts made ${String(j['attemptsMade'])}, started ${String(j['attemptsStarted'])}, stalled ${String(j['stalledCounter'])}, by ${String(j['processedBy'] ?? '?')}, lock ${j['lock'] ? `held, ttl ${String(j['lockTtlMs'])} ms` : 'none'}${j['failedReason'] ? `, failed: ${String(j['failedReason'])}` : ''})`,
    `state ${JSON.stringify(s.state)}`,
    `outputs [${s.outputs.join(', ')}]`,
    `inputs [${s.inputs.join(', ')}]`,
  ];
  const x = s.session;
  if (x) {
    parts.push(
      `lease ${x['lease'] ? `held (ttl ${String(x['leaseTtlMs'])} ms, ${JSON.stringify(x['holder'])})` : 'free'}, epoch ${String(x['epoch'])}`,
      `record ${String(x['recordStatus'])}, transcript [${(x['transcript'] as string[] | undefined)?.join(', ') ?? ''}]`,
      `ledger [${(x['ledger'] as string[]).join('; ')}]`,
      `log tail [${(x['lastLog'] as string[]).join(', ')}]`,
    );
  }
  return parts.join(' · ').replace(/\|/g, '/');
}

/** Total `calls` over `INFO commandstats`. */
async function commandCalls(client: Redis): Promise<number> {
  const info = await client.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/calls=(\d+)/g)) total += Number(m[1]);
  return total;
}

function executionLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Forked {
  readonly proc: ChildProcess;
  readonly ready: Promise<void>;
  readonly result: Promise<unknown>;
  readonly exited: Promise<unknown>;
}

/** Forks this file as a child (`--distributed-child <json>`): `ready` at its `ready` message, `result` at its `result`. */
function forkSelf(args: WorkerArgs | SubmitterArgs, children: ChildProcess[], onLog: (m: unknown) => void = () => undefined): Forked {
  const proc = fork(fileURLToPath(import.meta.url), ['--distributed-child', JSON.stringify(args)], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(proc);
  const exited = once(proc, 'exit');
  const message = (type: string): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const on = (m: unknown): void => {
        if ((m as { type?: string }).type === type) {
          proc.off('message', on);
          resolve((m as { value?: unknown }).value);
        }
      };
      proc.on('message', on);
      void exited.then(() => reject(new Error(`bench child (${args.role}) exited before '${type}'`)));
    });
  proc.on('message', onLog);
  const ready = message('ready').then(() => undefined);
  const result = message('result');
  ready.catch(() => undefined);
  result.catch(() => undefined);
  return { proc, ready, result, exited };
}

/** A redis-server on a free loopback port, data in `dir`, no persistence. */
async function startRedis(dir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 10_000; ;) {
    try {
      const c = await openRedis(url, 'bench-probe');
      c.disconnect();
      break;
    } catch (e) {
      if (Date.now() > deadline || proc.exitCode !== null)
        throw new Error(`redis-server did not start on port ${port} (is it installed? apt-get install redis-server): ${(e as Error).message}`);
      await delay(50);
    }
  }
  return {
    url,
    stop: async () => {
      if (proc.exitCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

// ---- the children ----

class CalculateInput {
  @IsString()
  expression!: string;
}

async function workerMain(args: WorkerArgs): Promise<void> {
  const send = (m: unknown): void => void (process.connected && process.send!(m));
  const tool: ToolHandler<CalculateInput> = {
    name: 'calculate',
    description: 'Evaluates an arithmetic expression (counts each execution in a shared file).',
    inputType: CalculateInput,
    handle: (input: CalculateInput, ctx: ToolContext) => {
      appendFileSync(args.logFile, `${process.pid} ${ctx.sessionId} ${ctx.toolUseId}\n`);
      return `${input.expression} = 126`;
    },
  };
  const store = new RedisSessionStore({ url: args.redisUrl, leaseMs: LEASE_MS, owner: `bench-worker-${process.pid}` });
  const rx = await AgentRx.create({
    modules: [
      new ContainerModule((o) => {
        o.bind(ToolHandler).toConstantValue(tool);
        o.bind(SessionStore).toConstantValue(store);
      }),
    ],
    config: {
      provider: 'local',
      logLevel: 'silent',
      consumers: { terminal: false },
      providers: { local: { baseUrl: args.baseUrl, model: 'demo', retryBaseMs: 1 } },
    },
  });
  const worker = await startWorker({
    rx,
    redis: { url: args.redisUrl },
    queueName: args.queueName,
    concurrency: args.concurrency,
    lockDurationMs: LOCK_MS,
    stalledIntervalMs: STALLED_MS,
    takeoverWaitMs: 60_000,
    metrics: false,
    log: (line) => send({ type: 'log', line }),
  });
  process.once('SIGTERM', () => {
    void (async () => {
      await worker.stop({ graceMs: 1_000 });
      await rx.stop();
      await store.close();
      process.exit(0);
    })();
  });
  send({ type: 'ready' });
}

async function submitterMain(args: SubmitterArgs): Promise<void> {
  const store = new RedisSessionStore({ url: args.redisUrl });
  const queue = await SessionQueue.connect({ redis: { url: args.redisUrl }, store, queueName: args.queueName });
  process.send!({ type: 'ready' });
  const latenciesMs: number[] = [];
  const sessionIds: string[] = [];
  const failures: string[] = [];
  const stuck: string[] = [];
  const answers = { toolResult: 0, toolFailed: 0, noTool: 0 };
  const started = Date.now();
  let next = 0;
  const one = async (): Promise<void> => {
    while (next < args.sessions) {
      next++;
      const t0 = performance.now();
      let handle: RemoteSession | undefined;
      try {
        const h = await queue.submit({ prompt: PROMPT });
        handle = h;
        // A handle that never gets its result (or its end) is a failure of the run, reported, not a hung bench.
        const result = await within(h.result, `its result (${h.id})`);
        latenciesMs.push(performance.now() - t0);
        // The demo model quotes the tool's result; "failed" is the ledger's "outcome unknown" (killed mid-tool).
        answers[result.text.includes('= 126') ? 'toolResult' : result.text.includes('calculate failed') ? 'toolFailed' : 'noTool']++;
        sessionIds.push(result.sessionId ?? h.sessionId ?? '');
        handle = undefined; // listed
        await h.close();
        await within(h.closed, `its end (${h.id})`).catch((e: unknown) => {
          if (e instanceof DeadlineMissed) stuck.push(h.id);
          throw e;
        });
      } catch (e) {
        failures.push((e as Error).message);
        if (e instanceof DeadlineMissed && handle) stuck.push(handle.id);
        sessionIds.push(...(handle?.sessionId !== undefined ? [handle.sessionId] : []));
      }
    }
  };
  await Promise.all(Array.from({ length: args.window }, one));
  const out: SubmitterResult = { latenciesMs, sessionIds, failures, stuck, answers, elapsedMs: Date.now() - started };
  await queue.close();
  await store.close();
  process.send!({ type: 'result', value: out }, () => process.exit(0));
}

/** A session missed {@link RESULT_DEADLINE_MS}: its state is captured. */
class DeadlineMissed extends Error {}

/** `p`, or a rejection after {@link RESULT_DEADLINE_MS}. */
async function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new DeadlineMissed(`no ${what} within ${RESULT_DEADLINE_MS} ms`)), RESULT_DEADLINE_MS)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

if (process.argv[2] === '--distributed-child') {
  const args = JSON.parse(process.argv[3]!) as WorkerArgs | SubmitterArgs;
  await (args.role === 'worker' ? workerMain(args) : submitterMain(args));
}
