/**
 * `node transport-child.js <baseUrl> <perRound> <rounds> <warmup>`: the candidates of the streamed
 * model call's transport, measured in one process (see `transport.bench.ts`). Prints one JSON line.
 */
import 'reflect-metadata';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { fileURLToPath } from 'node:url';
import axios from 'axios';
import { Agent as UndiciAgent, request as undiciRequest } from 'undici';
import { HttpClientFactoryImpl } from '../../src/core/http/http-client-factory.js';
import { ChunkAccumulator, readChatStream, type WireMap } from '../../src/plugins/providers/local/chat-stream.js';
import { cpuMs, memAfterGc, SYSTEM_PROMPT, USER_PROMPT } from './shared.js';

/** The candidates, in the order of the first round. */
export const CANDIDATES = ['axios-node', 'axios-fetch', 'undici-request', 'node-http', 'factory-stream'] as const;
type Candidate = (typeof CANDIDATES)[number];

export interface TransportChildResult {
  readonly cpuMsPerCall: Record<string, number[]>;
  readonly wallMsPerCall: Record<string, number[]>;
  readonly heapAfter: number;
}

const BODY = {
  model: 'scripted',
  messages: [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: USER_PROMPT },
  ],
  stream: true,
  stream_options: { include_usage: true },
};
const HEADERS = { Authorization: 'Bearer sk-bench', Accept: 'text/event-stream' };

async function main(): Promise<void> {
  const [baseUrl, perArg, roundsArg, warmArg] = process.argv.slice(2);
  const perRound = Number(perArg);
  const rounds = Number(roundsArg);
  const warmup = Number(warmArg);
  const url = `${baseUrl!}/chat/completions`;
  const factory = new HttpClientFactoryImpl();
  const viaFactory = factory.create({ baseURL: baseUrl!, headers: { Authorization: 'Bearer sk-bench' }, timeoutMs: 60_000 });
  const viaFetch = axios.create({ baseURL: baseUrl!, adapter: 'fetch', headers: { Authorization: 'Bearer sk-bench' }, timeout: 60_000 });
  const nodeAgent = new HttpAgent({ keepAlive: true, keepAliveMsecs: 60_000, scheduling: 'lifo', timeout: 5_000 });
  const undiciAgent = new UndiciAgent({ keepAliveTimeout: 5_000 });

  /** Opens the stream with each candidate; every one answers a Node Readable of the SSE body. */
  const open: Record<Candidate, (signal: AbortSignal) => Promise<Readable>> = {
    'axios-node': async (signal) =>
      (await viaFactory.post<Readable>('chat/completions', BODY, { responseType: 'stream', headers: { Accept: 'text/event-stream' }, signal })).data,
    'axios-fetch': async (signal) => {
      const res = await viaFetch.post<WebReadableStream>('chat/completions', BODY, {
        responseType: 'stream',
        headers: { Accept: 'text/event-stream' },
        signal,
      });
      return Readable.fromWeb(res.data);
    },
    'undici-request': async (signal) => {
      const res = await undiciRequest(url, {
        method: 'POST',
        headers: { ...HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify(BODY),
        dispatcher: undiciAgent,
        signal,
      });
      return res.body as unknown as Readable;
    },
    'node-http': (signal) =>
      new Promise<Readable>((resolve, reject) => {
        const data = JSON.stringify(BODY);
        const req = httpRequest(
          url,
          { method: 'POST', agent: nodeAgent, signal, headers: { ...HEADERS, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
          resolve,
        );
        req.on('error', reject);
        req.end(data);
      }),
    'factory-stream': async (signal) =>
      (await factory.stream(viaFactory, { method: 'POST', url: 'chat/completions', data: BODY, headers: { Accept: 'text/event-stream' }, signal })).data,
  };

  const once = async (name: Candidate): Promise<void> => {
    const signal = new AbortController().signal;
    const body = await open[name](signal);
    body.setEncoding('utf8');
    const acc = new ChunkAccumulator();
    await readChatStream(body, { idleTimeoutMs: 30_000, target: url, signal, onChunk: (c: WireMap) => acc.add(c) });
    const msg = acc.result(() => 'x').message;
    if (!Array.isArray(msg['tool_calls']) || msg['tool_calls'].length !== 2 || typeof msg['content'] !== 'string')
      throw new Error(`${name}: incomplete answer ${JSON.stringify(msg)}`);
  };

  for (const name of CANDIDATES) for (let i = 0; i < warmup; i++) await once(name);
  const cpuMsPerCall: Record<string, number[]> = {};
  const wallMsPerCall: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < CANDIDATES.length; k++) {
      const name = CANDIDATES[(k + r) % CANDIDATES.length]!;
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      for (let i = 0; i < perRound; i++) await once(name);
      (cpuMsPerCall[name] ??= []).push(cpuMs(c0) / perRound);
      (wallMsPerCall[name] ??= []).push((performance.now() - t0) / perRound);
    }
  }
  nodeAgent.destroy();
  await undiciAgent.close();
  const result: TransportChildResult = { cpuMsPerCall, wallMsPerCall, heapAfter: memAfterGc().heapUsed };
  process.stdout.write(JSON.stringify(result) + '\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
