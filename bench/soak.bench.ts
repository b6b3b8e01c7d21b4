/**
 * Soak (issue 14): BENCH_SOAK_RUNS (default 10,000) AG-UI runs against the real `agentrx serve
 * --demo` CLI in a child process (`node --expose-gc --inspect=127.0.0.1:0`, a free loopback port,
 * its own state directory), driven over HTTP with `@ag-ui/client`'s HttpAgent (every stream goes
 * through the client's verify stage). The mix, from a seeded generator so every soak runs the same
 * sequence: new threads and follow-up runs on live ones (the client sends the whole history; a
 * thread is retired after MAX_RUNS_PER_THREAD runs), prompts that call each demo tool (one of them
 * failing), prompts that call none, and runs the client aborts mid-stream (the thread goes on
 * afterwards from its stored session). BENCH_SOAK_CONCURRENCY runs are in flight at once (within
 * the endpoint's default `maxRunsPerClient` of 8, so none is refused with 429).
 *
 * The server's heap is read through its inspector (nothing in `serve` changes for it): a full GC
 * (`HeapProfiler.collectGarbage`, twice), then `process.memoryUsage()` evaluated in the server.
 * The load pauses at each sample (in-flight runs finish first). Samples: after the warm-up
 * (BENCH_SOAK_WARMUP runs, default 1,000), then every BENCH_SOAK_EVERY runs (default 1,000).
 * Pass: every sample after the warm-up within ±10% of the warm-up sample, every run ended as
 * the mix expects (RUN_FINISHED, or the client's abort).
 *
 * By design the default endpoint keeps up to `maxThreads` (1,000) idle threads for `threadIdleMs`
 * (30 min) and the file store up to 1,000 session journals; with this mix both are full after
 * about 3,300 runs, so the heap grows until then. The report also gives the drift from the sample
 * at BENCH_SOAK_STEADY_AT runs (default 4,000, both full) to the last one: growth after that is
 * not bounded by a cache.
 *
 * Other knobs: BENCH_SOAK_CLI (the CLI entry, default the bench build's own compile of
 * `src/cli/main.ts`, so it is the current source; `dist/cli/main.js` after `npm run build`),
 * BENCH_SOAK_CONFIG (a JSON config file passed as `serve --config`), BENCH_SOAK_SNAPSHOTS (a
 * directory: heap snapshots of the server after the warm-up and at the end, for a diff in Chrome
 * DevTools' Comparison view), BENCH_SOAK_SEED.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import { WebSocket } from 'undici';
import { percentile, report, type BenchResult } from './harness.js';

/** Runs a thread gets before the client retires it (its history stays bounded). */
export const MAX_RUNS_PER_THREAD = 6;
/** Allowed drift of the heap after GC from the warm-up sample. */
export const HEAP_TOLERANCE = 0.1;

/** The repository root (the child's working directory: `read_file` reads below it). */
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

/** What one sample of the server's heap says (bytes). */
export interface HeapSample {
  /** Runs done when it was taken. */
  readonly runs: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly rss: number;
  readonly external: number;
}

/**
 * A Chrome DevTools Protocol client on a Node inspector's WebSocket (undici's WebSocket: Node 20
 * has no global one). Enough for a full GC, an evaluation and a heap snapshot.
 */
export class InspectorClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Map<string, (params: unknown) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(String(ev.data)) as { id?: number; method?: string; params?: unknown; result?: unknown; error?: { message: string } };
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`inspector: ${msg.error.message}`));
        else p?.resolve(msg.result);
      } else if (msg.method) this.listeners.get(msg.method)?.(msg.params);
    });
    ws.addEventListener('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('inspector: the connection closed'));
      this.pending.clear();
    });
  }

  /** Connects to `url` (`ws://127.0.0.1:<port>/<uuid>`, printed by `node --inspect`). */
  static connect(url: string): Promise<InspectorClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.addEventListener('open', () => resolve(new InspectorClient(ws)), { once: true });
      ws.addEventListener('error', () => reject(new Error(`cannot connect to the inspector at ${url}`)), { once: true });
    });
  }

  /** Sends one protocol command; resolves with its result. */
  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      // The protocol's result of `method` is the caller's to name (T).
      this.pending.set(id, { resolve: (v) => resolve(v as T), reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Full GC (twice: the first may leave garbage that finalizers freed), then `process.memoryUsage()` of the inspected process. */
  async heapAfterGc(): Promise<NodeJS.MemoryUsage> {
    await this.send('HeapProfiler.collectGarbage');
    await this.send('HeapProfiler.collectGarbage');
    const r = await this.send<{ result: { value: string } }>('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
    return JSON.parse(r.result.value) as NodeJS.MemoryUsage;
  }

  /** Writes a heap snapshot of the inspected process to `file` (`.heapsnapshot`, for DevTools). */
  async heapSnapshot(file: string): Promise<void> {
    const chunks: string[] = [];
    this.listeners.set('HeapProfiler.addHeapSnapshotChunk', (p) => chunks.push((p as { chunk: string }).chunk));
    try {
      await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    } finally {
      this.listeners.delete('HeapProfiler.addHeapSnapshotChunk');
    }
    await writeFile(file, chunks.join(''));
  }

  close(): void {
    this.ws.close();
  }
}

/** Tally of the server's request log (`agentrx serve: {"msg":"agui request",…}` on stderr). */
export interface ServeLog {
  /** `outcome/status` → count, e.g. `completed/200`, `client_closed/200`, `refused/429`. */
  readonly requests: Map<string, number>;
  /** The last lines that were not request log lines (warnings, errors). */
  readonly other: string[];
}

/** A running `agentrx serve --demo` child. */
export interface ServeChild {
  /** The page URL it printed (`http://127.0.0.1:<port>/`). */
  readonly url: string;
  readonly inspector: InspectorClient;
  readonly log: ServeLog;
  readonly proc: ChildProcess;
  /** SIGTERM, then (after 10 s) SIGKILL; resolves with the exit code; removes its state directory. */
  stop(): Promise<number | null>;
}

/**
 * Starts `node --expose-gc --inspect=127.0.0.1:0 <cli> serve --demo --port 0 [--config <file>]`
 * in the repository root, with a fresh AGENTRX_STATE_DIR (the default file session store goes
 * there), and connects to its inspector.
 */
export async function startServeChild(cli: string, config?: string): Promise<ServeChild> {
  const stateDir = await mkdtemp(join(tmpdir(), 'agentrx-soak-state-'));
  const args = ['--expose-gc', '--inspect=127.0.0.1:0', cli, 'serve', '--demo', '--port', '0', ...(config !== undefined ? ['--config', config] : [])];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, AGENTRX_STATE_DIR: stateDir, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: ServeLog = { requests: new Map(), other: [] };
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
  const ready = new Promise<{ url: string; ws: string }>((res, rej) => {
    let url: string | undefined;
    let ws: string | undefined;
    let out = '';
    let err = '';
    const check = (): void => {
      if (url !== undefined && ws !== undefined) res({ url, ws });
    };
    proc.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      url ??= /^(http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(out)?.[1];
      check();
    });
    proc.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const lines = err.split('\n');
      err = lines.pop() ?? '';
      for (const line of lines) tallyLine(log, line, (found) => (ws ??= found));
      check();
    });
    void exited.then((code) => rej(new Error(`agentrx serve exited with ${code} before it was ready: ${log.other.join(' | ')}`)));
  });
  let inspector: InspectorClient;
  let url: string;
  try {
    const r = await ready;
    url = r.url;
    inspector = await InspectorClient.connect(r.ws);
  } catch (e) {
    proc.kill('SIGKILL');
    await rm(stateDir, { recursive: true, force: true });
    throw e;
  }
  return {
    url,
    inspector,
    log,
    proc,
    stop: async () => {
      inspector.close();
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(killer);
      await rm(stateDir, { recursive: true, force: true });
      return code;
    },
  };
}

function tallyLine(log: ServeLog, line: string, onInspector: (url: string) => void): void {
  const inspector = /Debugger listening on (ws:\/\/\S+)/.exec(line);
  if (inspector) return onInspector(inspector[1]!);
  const m = /^agentrx serve: (\{.*\})$/.exec(line);
  if (m) {
    try {
      const entry = JSON.parse(m[1]!) as { msg?: string; outcome?: string; status?: number };
      if (entry.msg === 'agui request') {
        const key = `${entry.outcome}/${entry.status}`;
        log.requests.set(key, (log.requests.get(key) ?? 0) + 1);
        return;
      }
    } catch {
      // not a log entry: kept below
    }
  }
  if (
    line.trim() === '' ||
    /^(For help, see|Debugger attached|Debugger ending|Waiting for the debugger|agentrx serve: chat page|agentrx serve: stopping)/.test(line)
  )
    return;
  log.other.push(line.slice(0, 500));
  if (log.other.length > 20) log.other.shift();
}

/** A small seeded generator (mulberry32): the same seed gives the same mix. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What one kind of prompt is, and what the demo model does with it. */
interface PromptKind {
  readonly name: string;
  readonly weight: number;
  prompt(i: number): string;
}

/** The prompt mix (weights sum to 1). */
export const PROMPTS: readonly PromptKind[] = [
  { name: 'no tool', weight: 0.25, prompt: (i) => `hello, this is message ${i}` },
  { name: 'calculate', weight: 0.25, prompt: (i) => `what is (${i % 997} + 25) * 3` },
  { name: 'get_time', weight: 0.15, prompt: () => 'what time is it?' },
  { name: 'read_file', weight: 0.15, prompt: () => 'what does tsconfig.json say?' },
  { name: 'failing tool', weight: 0.1, prompt: (i) => (i % 2 === 0 ? `what is ${i % 89} / 0` : 'what does missing-file.md say?') },
  { name: 'three tools', weight: 0.1, prompt: () => 'What time is it, what is (17 + 25) * 3, and what does README.md say?' },
];

/** Share of runs that start a new thread (else a follow-up on a live one, when one is idle). */
const NEW_THREAD_SHARE = 0.3;
/** Share of runs the client aborts at their first streamed text or tool call. */
const ABORT_SHARE = 0.05;
/** A run with no terminal event this long after it was sent is aborted and counted as failed. */
const RUN_DEADLINE_MS = 30_000;
/**
 * A follow-up sent right after the client aborted the thread's previous run may reach the server
 * before it has seen that disconnect (409 `thread_busy`); the client sends it again, at most this
 * many times, each after a short pause.
 */
const BUSY_RETRIES = 20;
const BUSY_PAUSE_MS = 25;

/** How the runs ended, as the client saw them. */
export interface RunTally {
  finished: number;
  aborted: number;
  newThreads: number;
  followUps: number;
  /** Runs that ended any other way (RUN_ERROR, a refused request, a verify failure): the first messages. */
  failed: number;
  readonly failures: string[];
  readonly byPrompt: Map<string, number>;
  /** Runs with at least one TOOL_CALL_RESULT. */
  withTools: number;
  /** Requests answered 409 `thread_busy` (a follow-up right after an abort) and sent again. */
  busyRetries: number;
  /** Runs still without a terminal event after RUN_DEADLINE_MS (also counted in `failed`). */
  timedOut: number;
}

/** How one run ended for the client. */
interface RunOutcome {
  /** `busy`: refused with 409 `thread_busy` (sent again). */
  readonly kind: 'finished' | 'aborted' | 'busy' | 'failed';
  readonly error?: string;
  readonly tools?: boolean;
  readonly timedOut?: boolean;
}

/** One run through HttpAgent (its verify stage checks the stream); the agent keeps the messages. */
async function agentRun(agent: HttpAgent, runId: string, abortController: AbortController): Promise<RunOutcome> {
  let terminal: string | undefined;
  let error: string | undefined;
  let tools = false;
  let busy = false;
  const subscriber: AgentSubscriber = {
    onToolCallResultEvent: () => void (tools = true),
    onRunFinishedEvent: () => void (terminal ??= 'RUN_FINISHED'),
    onRunErrorEvent: ({ event }) => {
      terminal ??= 'RUN_ERROR';
      error ??= `RUN_ERROR ${event.code ?? ''}: ${event.message}`;
    },
    onRunFailed: ({ error: e }) => {
      if ((e as { status?: number }).status === 409) busy = true;
      else error ??= `failed: ${e.message}`;
    },
  };
  try {
    await agent.runAgent({ runId, abortController }, subscriber);
  } catch (e) {
    if ((e as { status?: number }).status === 409) busy = true;
    else error ??= `threw: ${(e as Error).message}`;
  }
  if (busy) return { kind: 'busy' };
  if (terminal === 'RUN_FINISHED' && error === undefined) return { kind: 'finished', tools };
  return { kind: 'failed', error: error ?? `ended with ${terminal ?? 'no terminal event'}`, tools };
}

/**
 * One run the client aborts at its first streamed text or tool call: the agent's RunAgentInput
 * POSTed with fetch and the SSE read by hand. (Not `HttpAgent.abortRun()`: when the rest of the
 * stream was already buffered, @ag-ui/client 1.0.0's `runAgent` promise never settled after it.)
 * The partial answer is not added to the conversation, as a client that drops it would do.
 */
async function abortedRun(endpoint: string, agent: HttpAgent, runId: string, deadline: AbortSignal): Promise<RunOutcome> {
  const ctrl = new AbortController();
  const onDeadline = (): void => ctrl.abort();
  deadline.addEventListener('abort', onDeadline, { once: true });
  try {
    const body = { threadId: agent.threadId, runId, messages: agent.messages, tools: [], context: [], state: agent.state ?? {}, forwardedProps: {} };
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: ctrl.signal,
    });
    if (res.status === 409) {
      await res.text();
      return { kind: 'busy' };
    }
    if (!res.ok || !res.body) return { kind: 'failed', error: `HTTP ${res.status}: ${(await res.text()).slice(0, 300)}` };
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { kind: 'failed', error: 'the stream ended before any text, tool call or terminal event' };
      buf += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const data = frame
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (data === '') continue;
        const ev = JSON.parse(data) as { type: string; code?: string; message?: string };
        if (ev.type === 'TEXT_MESSAGE_CONTENT' || ev.type === 'TOOL_CALL_START') {
          ctrl.abort();
          return { kind: 'aborted' };
        }
        if (ev.type === 'RUN_FINISHED') return { kind: 'finished' };
        if (ev.type === 'RUN_ERROR') return { kind: 'failed', error: `RUN_ERROR ${ev.code ?? ''}: ${ev.message}` };
      }
    }
  } catch (e) {
    return { kind: 'failed', error: `aborted run: ${(e as Error).message}` };
  } finally {
    deadline.removeEventListener('abort', onDeadline);
  }
}

/** A conversation of the client: an HttpAgent keeps its messages (the history each run sends). */
interface Conversation {
  readonly agent: HttpAgent;
  runs: number;
}

/**
 * Drives runs against `endpoint` (`…/agent`) in blocks: `blocks[k]` runs with `concurrency` in
 * flight, then `afterBlock(k, runsDone, blockLatenciesMs)` while nothing is in flight (a sample).
 */
export async function driveSoak(opts: {
  readonly endpoint: string;
  readonly blocks: readonly number[];
  readonly concurrency: number;
  readonly seed: number;
  readonly afterBlock: (k: number, runsDone: number, latenciesMs: number[]) => Promise<void>;
  readonly onRun?: (runsDone: number) => void;
}): Promise<RunTally> {
  const rng = seeded(opts.seed);
  const tally: RunTally = {
    finished: 0,
    aborted: 0,
    newThreads: 0,
    followUps: 0,
    failed: 0,
    failures: [],
    byPrompt: new Map(),
    withTools: 0,
    busyRetries: 0,
    timedOut: 0,
  };
  const idle: Conversation[] = [];
  let threadNo = 0;
  let done = 0;

  const one = async (i: number, latencies: number[]): Promise<void> => {
    let conv: Conversation;
    if (idle.length > 0 && rng() >= NEW_THREAD_SHARE) {
      conv = idle.splice(Math.floor(rng() * idle.length), 1)[0]!;
      tally.followUps++;
    } else {
      conv = { agent: new HttpAgent({ url: opts.endpoint, threadId: `soak-thread-${opts.seed}-${threadNo++}` }), runs: 0 };
      tally.newThreads++;
    }
    let pick = rng();
    const kind = PROMPTS.find((p) => (pick -= p.weight) < 0) ?? PROMPTS[0]!;
    tally.byPrompt.set(kind.name, (tally.byPrompt.get(kind.name) ?? 0) + 1);
    const abort = rng() < ABORT_SHARE;
    conv.agent.addMessage({ id: `u-${i}`, role: 'user', content: kind.prompt(i) });

    const t0 = performance.now();
    const ctrl = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<RunOutcome>((res) => {
      timer = setTimeout(() => {
        ctrl.abort();
        res({ kind: 'failed', error: `no terminal event within ${RUN_DEADLINE_MS / 1000} s`, timedOut: true });
      }, RUN_DEADLINE_MS);
    });
    const attempts = async (): Promise<RunOutcome> => {
      for (let attempt = 0; ; attempt++) {
        const runId = `soak-run-${i}${attempt > 0 ? `-retry${attempt}` : ''}`;
        const outcome = abort ? await abortedRun(opts.endpoint, conv.agent, runId, ctrl.signal) : await agentRun(conv.agent, runId, ctrl);
        if (outcome.kind !== 'busy' || ctrl.signal.aborted) return outcome;
        if (attempt >= BUSY_RETRIES) return { kind: 'failed', error: `409 thread_busy ${BUSY_RETRIES + 1} times` };
        tally.busyRetries++;
        await new Promise((r) => setTimeout(r, BUSY_PAUSE_MS));
      }
    };
    // A race, not only the abort: a run that never settles must not stall the soak.
    const outcome = await Promise.race([attempts(), deadline]);
    clearTimeout(timer);
    latencies.push(performance.now() - t0);

    if (outcome.tools) tally.withTools++;
    if (outcome.kind === 'finished') tally.finished++;
    else if (outcome.kind === 'aborted') tally.aborted++;
    else {
      tally.failed++;
      if (outcome.timedOut) tally.timedOut++;
      if (tally.failures.length < 10)
        tally.failures.push(`run ${i} (${kind.name}${abort ? ', aborted' : ''}, thread run ${conv.runs + 1}): ${outcome.error}`.slice(0, 400));
    }
    conv.runs++;
    // Retired threads are dropped by the client; the server closes them when idle or evicts them.
    if (conv.runs < MAX_RUNS_PER_THREAD && !outcome.timedOut) idle.push(conv);
  };

  let next = 0;
  for (const [k, size] of opts.blocks.entries()) {
    const end = next + size;
    const latencies: number[] = [];
    const worker = async (): Promise<void> => {
      while (next < end) {
        const i = next++;
        await one(i, latencies);
        opts.onRun?.(++done);
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, worker));
    await opts.afterBlock(k, done, latencies);
  }
  return tally;
}

const mb = (b: number): string => `${(b / 2 ** 20).toFixed(2)} MB`;

/** The blocks of a soak: the warm-up, then `every`-sized blocks up to `runs`. */
export function soakBlocks(runs: number, warmup: number, every: number): number[] {
  const blocks = [Math.min(warmup, runs)];
  for (let left = runs - blocks[0]!; left > 0; left -= every) blocks.push(Math.min(every, left));
  return blocks;
}

/** True when every sample after the first is within `tolerance` of the first (heap after GC). */
export function heapFlat(samples: readonly HeapSample[], tolerance = HEAP_TOLERANCE): boolean {
  const base = samples[0]?.heapUsed;
  return base !== undefined && samples.every((s) => Math.abs(s.heapUsed - base) <= tolerance * base);
}

export async function soakBench(): Promise<BenchResult> {
  const env = process.env;
  const runs = Number(env['BENCH_SOAK_RUNS'] ?? 10_000);
  const concurrency = Number(env['BENCH_SOAK_CONCURRENCY'] ?? 6);
  const warmup = Number(env['BENCH_SOAK_WARMUP'] ?? 1_000);
  const every = Number(env['BENCH_SOAK_EVERY'] ?? 1_000);
  const seed = Number(env['BENCH_SOAK_SEED'] ?? 14);
  const steadyAt = Number(env['BENCH_SOAK_STEADY_AT'] ?? 4_000);
  const cli = env['BENCH_SOAK_CLI'] ?? fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  const snapshots = env['BENCH_SOAK_SNAPSHOTS'];
  if (snapshots) await mkdir(snapshots, { recursive: true });

  const started = Date.now();
  const server = await startServeChild(cli, env['BENCH_SOAK_CONFIG']);
  const samples: HeapSample[] = [];
  const blockRows: string[] = [];
  let tally: RunTally;
  let exitCode: number | null;
  try {
    const before = await server.inspector.heapAfterGc();
    process.stderr.write(
      `soak: serve --demo at ${server.url} (pid ${server.proc.pid}); heap after GC before any run ${mb(before.heapUsed)}; ${runs} runs, ${concurrency} in flight\n`,
    );
    let blockStart = Date.now();
    tally = await driveSoak({
      endpoint: `${server.url}agent`,
      blocks: soakBlocks(runs, warmup, every),
      concurrency,
      seed,
      onRun: (n) => {
        if (n % 250 === 0) process.stderr.write(`soak: ${n}/${runs} runs\r`);
      },
      afterBlock: async (k, done, latencies) => {
        const m = await server.inspector.heapAfterGc();
        const sample: HeapSample = { runs: done, heapUsed: m.heapUsed, heapTotal: m.heapTotal, rss: m.rss, external: m.external };
        samples.push(sample);
        const secs = (Date.now() - blockStart) / 1000;
        const drift = ((sample.heapUsed - samples[0]!.heapUsed) / samples[0]!.heapUsed) * 100;
        const line = `${done} runs: heapUsed ${mb(sample.heapUsed)} (${drift >= 0 ? '+' : ''}${drift.toFixed(1)}%), heapTotal ${mb(sample.heapTotal)}, rss ${mb(sample.rss)}, external ${mb(sample.external)}; block ${latencies.length} runs in ${secs.toFixed(1)} s, latency p50 ${percentile(latencies, 50).toFixed(0)} ms p99 ${percentile(latencies, 99).toFixed(0)} ms`;
        blockRows.push(line);
        process.stderr.write(`soak: ${line}\n`);
        if (snapshots && (k === 0 || done === runs)) await server.inspector.heapSnapshot(join(snapshots, `serve-${done}.heapsnapshot`));
        blockStart = Date.now();
      },
    });
  } finally {
    exitCode = await server.stop();
  }
  const totalS = (Date.now() - started) / 1000;
  const flat = heapFlat(samples);
  const steady = samples.find((x) => x.runs >= steadyAt);
  const last = samples.at(-1);
  const ok = flat && tally.failed === 0 && tally.finished + tally.aborted === runs;
  const requests = [...server.log.requests.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return report(`soak: ${runs.toLocaleString('en-US')} AG-UI runs against agentrx serve --demo`, [
    [
      'server',
      `\`node --expose-gc --inspect=127.0.0.1:0 ${cli.replace(`${ROOT}/`, '')} serve --demo --port 0\`${env['BENCH_SOAK_CONFIG'] ? ` --config ${env['BENCH_SOAK_CONFIG']}` : ''}, default endpoint options, file session store in a fresh AGENTRX_STATE_DIR; exit code after SIGTERM ${exitCode}`,
    ],
    [
      'client',
      `@ag-ui/client HttpAgent (verify stage on), ${concurrency} runs in flight, seed ${seed}; ${tally.newThreads} new threads, ${tally.followUps} follow-ups with history (≤ ${MAX_RUNS_PER_THREAD} runs a thread); ${Math.round(ABORT_SHARE * 100)}% aborted by the client at their first text or tool call; ${tally.busyRetries} requests answered 409 thread_busy right after an abort and sent again`,
    ],
    ['prompts', [...tally.byPrompt.entries()].map(([k, v]) => `${k} ${v}`).join(', ') + `; ${tally.withTools} runs got tool results`],
    [
      'outcomes (client)',
      `${tally.finished} RUN_FINISHED, ${tally.aborted} aborted, ${tally.failed} other${tally.failures.length > 0 ? `: ${tally.failures.join(' | ')}` : ''}`,
    ],
    ['outcomes (server request log, outcome/status)', requests || '(none)'],
    ...(server.log.other.length > 0 ? [['server stderr, other lines (last 20)', server.log.other.join(' | ')] as [string, string]] : []),
    ['heap after GC per block', blockRows.join('<br>')],
    [
      `target: heapUsed after GC within ±${HEAP_TOLERANCE * 100}% of the warm-up sample (${samples[0] ? mb(samples[0].heapUsed) : '?'})`,
      flat ? 'met' : 'MISSED',
    ],
    [
      `drift from the sample at ${steadyAt} runs (the endpoint's and the store's caches full) to the last`,
      steady
        ? `${mb(steady.heapUsed)} → ${mb(last!.heapUsed)}: ${(((last!.heapUsed - steady.heapUsed) / steady.heapUsed) * 100).toFixed(1)}% (${heapFlat([steady, last!]) ? 'within' : 'NOT within'} ±${HEAP_TOLERANCE * 100}%)`
        : '(no such sample)',
    ],
    ['every run ended with RUN_FINISHED (or its client abort)', tally.failed === 0 && tally.finished + tally.aborted === runs ? 'yes' : 'NO'],
    ['total time', `${totalS.toFixed(0)} s (${(runs / totalS).toFixed(1)} runs/s)`],
    ['result', ok ? 'PASS' : 'FAIL'],
  ]);
}
