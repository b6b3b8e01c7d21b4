/**
 * Time to first delta, in a fresh process: `node ttfd-child.js <baseUrl> <n> <warmup>`. Alternates
 * a raw axios stream read of a chat completion (time to the first non-empty `delta.content`) with
 * an agentrx `rx.run()` on the Local provider (time to the first TEXT_MESSAGE_CONTENT a consumer
 * sees), both timed from just before the call. Prints one JSON line, with which samples had a
 * garbage collection running inside them.
 */
import 'reflect-metadata';
import axios from 'axios';
import { PerformanceObserver } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { AgentRx } from '../../src/agentrx.js';
import type { AgUiEvent } from '../../src/core/events/agui-event.js';
import type { EventConsumer } from '../../src/core/plugin/event-consumer.js';

const [baseUrl, nArg, warmArg] = process.argv.slice(2);
const n = Number(nArg);
const warmup = Number(warmArg ?? 20);

class FirstDelta implements EventConsumer {
  readonly id = 'first-delta';
  at = 0;
  onEvent(ev: AgUiEvent): void {
    if (this.at === 0 && ev.type === 'TEXT_MESSAGE_CONTENT') this.at = performance.now();
  }
}
const probe = new FirstDelta();
const rx = await AgentRx.create({
  config: {
    provider: 'local',
    retainEvents: false,
    consumers: { terminal: false },
    agent: { systemPrompt: 'Be brief.' },
    providers: { local: { baseUrl: baseUrl!, model: 'scripted' } },
  },
  consumers: [probe],
});

async function viaAgentRx(): Promise<number> {
  probe.at = 0;
  const t0 = performance.now();
  await rx.run({ prompt: 'Say something.' });
  return probe.at - t0;
}

const http = axios.create({ baseURL: baseUrl });
async function viaAxios(): Promise<number> {
  const t0 = performance.now();
  const res = await http.post<Readable>(
    '/chat/completions',
    {
      model: 'scripted',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say something.' },
      ],
      stream: true,
    },
    { responseType: 'stream' },
  );
  return new Promise<number>((resolve, reject) => {
    let buf = '';
    let first = 0;
    res.data.setEncoding('utf8');
    res.data.on('data', (s: string) => {
      if (first !== 0) return;
      buf += s;
      let cut: number;
      while (first === 0 && (cut = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        if (!frame.startsWith('data: ') || frame === 'data: [DONE]') continue;
        const chunk = JSON.parse(frame.slice(6)) as { choices?: { delta?: { content?: string } }[] };
        if (chunk.choices?.[0]?.delta?.content) first = performance.now();
      }
    });
    res.data.on('end', () => resolve(first - t0));
    res.data.on('error', reject);
  });
}

for (let i = 0; i < warmup; i++) {
  await viaAxios();
  await viaAgentRx();
}
// Garbage collections, to tell which samples had one running inside them.
const gcs: [number, number][] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push([e.startTime, e.startTime + e.duration]);
});
gcObserver.observe({ entryTypes: ['gc'] });
const raw: number[] = [];
const arx: number[] = [];
const rawSpans: [number, number][] = [];
const arxSpans: [number, number][] = [];
const timed = async (f: () => Promise<number>, values: number[], spans: [number, number][]): Promise<void> => {
  const start = performance.now();
  values.push(await f());
  spans.push([start, performance.now()]);
};
for (let i = 0; i < n; i++) {
  // Alternate which goes first so drift and GC land on both sides alike.
  if (i % 2 === 0) {
    await timed(viaAxios, raw, rawSpans);
    await timed(viaAgentRx, arx, arxSpans);
  } else {
    await timed(viaAgentRx, arx, arxSpans);
    await timed(viaAxios, raw, rawSpans);
  }
}
await rx.stop();
// Observer callbacks are delivered asynchronously: let the last entries arrive.
await new Promise((resolve) => setTimeout(resolve, 50));
gcObserver.disconnect();
const hadGc = (spans: [number, number][]): boolean[] => spans.map(([a, b]) => gcs.some(([s, e]) => s < b && e > a));
process.stdout.write(JSON.stringify({ raw, arx, rawGc: hadGc(rawSpans), arxGc: hadGc(arxSpans) }) + '\n');
