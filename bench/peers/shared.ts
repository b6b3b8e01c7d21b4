/**
 * Shared pieces of the process-level benchmarks: the scripted 5-turn streaming tool conversation,
 * a per-turn router in front of the OpenAI emulator (so concurrent sessions each get their turns
 * in order), child-process spawning and the CPU / event-loop / memory probes.
 */
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest, Agent, type ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startOpenAiEmulator, type EmulatorTurn, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { add, echo, type SessionOutcome } from './runners/types.js';

export const SYSTEM_PROMPT = 'You are a terse assistant. Use the tools when asked.';
export const USER_PROMPT = 'Echo a few words and add some numbers, then summarise.';

/**
 * The 5-turn conversation: four tool turns (one with two parallel calls) and a final answer,
 * every turn with streamed text. Tool ids are fixed per turn, so they are unique within a session.
 */
export const CONVERSATION: readonly EmulatorTurn[] = [
  {
    text: 'Let me echo the first phrase for you right away, one moment please.',
    toolCalls: [{ id: 'call_t0_0', name: 'echo', arguments: { text: 'hello world' } }],
  },
  { text: 'Now I will add the first pair of numbers you gave me.', toolCalls: [{ id: 'call_t1_0', name: 'add', arguments: { a: 17, b: 25 } }] },
  {
    text: 'Next I run two tools in parallel to save a little time here.',
    toolCalls: [
      { id: 'call_t2_0', name: 'echo', arguments: { text: 'parallel one' } },
      { id: 'call_t2_1', name: 'add', arguments: { a: 3, b: 4 } },
    ],
  },
  { text: 'One more echo to be sure everything came back as expected.', toolCalls: [{ id: 'call_t3_0', name: 'echo', arguments: { text: 'last call' } }] },
  {
    text:
      'Here is the summary of what happened: the echo tool returned HELLO WORLD, the sums were 42 and 7, ' +
      'the parallel echo returned PARALLEL ONE and the last echo returned LAST CALL. That is everything you asked for, done in five turns.',
  },
];
/** Tool calls per session (for checking that a runner really ran the whole conversation). */
export const TOOL_CALLS_PER_SESSION = 5;
export const FINAL_TEXT = CONVERSATION[4]!.text!;

/** What each tool call of the conversation must return, by call id, in `canonicalOutput` form. */
export const EXPECTED_TOOL_RESULTS: ReadonlyMap<string, string> = new Map(
  CONVERSATION.flatMap((turn) =>
    (turn.toolCalls ?? []).map((c) => {
      const a = c.arguments as { text?: string; a?: number; b?: number };
      return [c.id!, canonicalOutput(c.name === 'echo' ? echo(a.text!) : add(a.a!, a.b!))] as const;
    }),
  ),
);

/** A tool output as one string: a string as it is unless it is JSON (then re-serialized), anything else as JSON. */
export function canonicalOutput(x: unknown): string {
  if (typeof x !== 'string') return JSON.stringify(x);
  try {
    const parsed = JSON.parse(x) as unknown;
    return typeof parsed === 'object' && parsed !== null ? JSON.stringify(parsed) : x;
  } catch {
    return x;
  }
}

/**
 * Throws unless a session did the whole conversation: the final answer's text, as concatenated
 * from the deltas the runner delivered, is the scripted one, and every tool call has exactly one
 * result with the right output.
 */
export function checkOutcome(runner: string, o: SessionOutcome): void {
  const problems: string[] = [];
  if (o.text.trim() !== FINAL_TEXT) problems.push(`final text ${JSON.stringify(o.text).slice(0, 120)}`);
  if (o.toolResults.length !== TOOL_CALLS_PER_SESSION) problems.push(`${o.toolResults.length} tool results (want ${TOOL_CALLS_PER_SESSION})`);
  const seen = new Set<string>();
  for (const r of o.toolResults) {
    const want = EXPECTED_TOOL_RESULTS.get(r.id);
    const got = canonicalOutput(r.output);
    if (want === undefined) problems.push(`unexpected tool result id ${r.id}`);
    else if (got !== want) problems.push(`tool ${r.id} returned ${got.slice(0, 60)} (want ${want})`);
    if (seen.has(r.id)) problems.push(`tool ${r.id} answered twice`);
    seen.add(r.id);
  }
  if (problems.length > 0) throw new Error(`${runner}: wrong outcome: ${problems.join('; ')}`);
}

export interface Router {
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** How the router sends the emulator's answer on. */
export interface RouterOptions {
  /**
   * Paced mode: each SSE event (up to its blank line) goes out in its own socket write, `paceMs`
   * after the previous one, as a real model's tokens arrive; the first one as soon as it is read.
   * Unset or 0: the bytes are piped through as the emulator wrote them (usually one write per
   * response).
   */
  readonly paceMs?: number;
}

/** `BENCH_PEERS_PACED=1` (pace 1 ms) or `BENCH_PEERS_PACED=<ms>`: the router options of the process benches. */
export function routerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): RouterOptions {
  const v = env['BENCH_PEERS_PACED'];
  if (v === undefined || v === '' || v === '0') return {};
  const ms = Number(v);
  if (!Number.isFinite(ms) || ms < 0)
    throw new Error(`BENCH_PEERS_PACED must be a number of milliseconds between SSE events (1 when set to 1); got ${JSON.stringify(v)}`);
  return { paceMs: ms };
}

/**
 * Writes an SSE body on to `res` one event per write, `paceMs` apart (Nagle off, so each write
 * is its own segment on loopback). Ends `res` after the last event.
 */
function pipePaced(body: Readable, res: ServerResponse, paceMs: number): void {
  res.socket?.setNoDelay(true);
  const queue: string[] = [];
  let buf = '';
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  const pump = (): void => {
    timer = undefined;
    if (res.destroyed) return;
    const next = queue.shift();
    if (next !== undefined) {
      res.write(next);
      // The gap after a write holds even when the next event has not been read yet.
      timer = setTimeout(pump, paceMs);
    } else if (ended) {
      res.end();
    }
  };
  body.setEncoding('utf8');
  body.on('data', (chunk: string) => {
    buf += chunk;
    let cut: number;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      queue.push(buf.slice(0, cut + 2));
      buf = buf.slice(cut + 2);
    }
    if (timer === undefined && queue.length > 0) pump();
  });
  body.on('end', () => {
    ended = true;
    if (buf.length > 0) queue.push(buf);
    buf = '';
    if (timer === undefined) pump();
  });
  body.on('error', () => res.destroy());
  res.on('close', () => {
    if (timer !== undefined) clearTimeout(timer);
  });
}

/**
 * Five emulators, emulator k scripted with `copies` identical copies of turn k, behind a router
 * that sends each chat-completions request to emulator k = number of assistant messages in it.
 * The router pipes the emulator's SSE bytes through untouched, or paced (`options.paceMs`). It
 * runs in the parent process.
 */
export async function startConversationRouter(copies: number, turns: readonly EmulatorTurn[] = CONVERSATION, options: RouterOptions = {}): Promise<Router> {
  const emulators: OpenAiEmulator[] = [];
  for (const turn of turns) emulators.push(await startOpenAiEmulator({ script: new Array<EmulatorTurn>(copies).fill(turn) }));
  // Idle pooled sockets to the emulators are closed after 4 s, before the emulators' own 5 s
  // keep-alive timeout: reusing a socket the emulator is closing reset the request, which the
  // router could only answer by destroying the client's response.
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, timeout: 4_000 });
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      let k = 0;
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { messages?: { role?: string }[] };
        k = (parsed.messages ?? []).filter((m) => m.role === 'assistant').length;
      } catch {
        k = 0;
      }
      const target = new URL(emulators[Math.min(k, emulators.length - 1)]!.baseUrl);
      const headers = { ...req.headers, host: target.host, 'content-length': String(body.length) };
      delete headers['transfer-encoding'];
      const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (upRes) => {
        // An upstream failure after the headers would otherwise leave the client waiting forever.
        upRes.on('error', () => res.destroy());
        upRes.on('aborted', () => res.destroy());
        const paced = options.paceMs !== undefined && options.paceMs > 0 && String(upRes.headers['content-type'] ?? '').startsWith('text/event-stream');
        if (paced) {
          // The body is re-chunked: its length (if the emulator sent one) would still hold, but
          // the writes must not be coalesced into one chunked frame either way.
          const headers = { ...upRes.headers };
          delete headers['content-length'];
          res.writeHead(upRes.statusCode ?? 502, headers);
          pipePaced(upRes, res, options.paceMs!);
        } else {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        }
      });
      up.on('error', () => res.destroy());
      res.on('close', () => {
        if (!res.writableEnded) up.destroy();
      });
      up.end(body);
    });
  });
  // Requests without a JSON body (e.g. GET /v1/models) count zero assistant messages and go to emulator 0.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      agent.destroy();
      await Promise.all(emulators.map((e) => e.close()));
    },
  };
}

/** Runs `node --expose-gc <script> args…` and parses the last stdout line as JSON. */
export function runChild<T>(script: string, args: readonly string[], extraNodeArgs: readonly string[] = []): Promise<T> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  return new Promise<T>((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', ...extraNodeArgs, path, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0) return reject(new Error(`${script} ${args.join(' ')} exited with ${code}: ${err.slice(-2000)}`));
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${script}: no JSON result on stdout: ${out.slice(-500)} ${err.slice(-1000)}`));
      }
    });
  });
}

/** CPU ms (user + system) since `start`. */
export function cpuMs(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

/**
 * Heap and RSS after a full GC, taken on a fresh macrotask: objects that a WeakRef created in the
 * current job points at are kept alive until the job ends (inversify's plan cache uses WeakRefs),
 * so a GC right after an `await` would count them. Needs --expose-gc.
 */
export async function settledMemAfterGc(): Promise<{ rss: number; heapUsed: number }> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  return memAfterGc();
}

/** Heap and RSS in bytes after a full GC (needs --expose-gc). */
export function memAfterGc(): { rss: number; heapUsed: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run node with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed };
}

/** Starts an event-loop delay histogram; `stop()` returns its p99 and max in ms. */
export function loopDelay(): { stop(): { p99: number; max: number } } {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  return {
    stop: () => {
      h.disable();
      return { p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
    },
  };
}
