/**
 * Child of the model-APIs bench: runs `warmup` then `n` sessions, one after another, of the
 * Local loop on one model API against the emulator at `baseUrl` (served by the parent, so only
 * the loop's own work is measured here), each a tool call then an answer; prints its CPU and wall
 * per session as one JSON line.
 */
import 'reflect-metadata';
import { AgentRx, defineTool } from '../../src/index.js';
import { cpuMs } from './shared.js';

const [api, baseUrl, n, warmup] = process.argv.slice(2) as [string, string, string, string];
const echo = defineTool({
  name: 'echo',
  description: 'Echoes text in capitals.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  idempotent: true,
  handle: ({ text }: { text: string }) => text.toUpperCase(),
});
const rx = await AgentRx.create({
  tools: [echo],
  config: {
    provider: 'local',
    logLevel: 'silent',
    consumers: { terminal: false },
    providers: { local: { api, baseUrl, apiKey: 'bench-key', model: 'bench-model' } },
  },
});
const run = async (): Promise<void> => {
  const r = await rx.run({ prompt: 'Echo hello world, then say what came back.' });
  if (!r.text.startsWith('The echo came back')) throw new Error(`unexpected answer on ${api}: ${r.text}`);
};
for (let i = 0; i < Number(warmup); i++) await run();
const cpu: number[] = [];
const wall: number[] = [];
for (let i = 0; i < Number(n); i++) {
  const c = process.cpuUsage();
  const t = performance.now();
  await run();
  cpu.push(cpuMs(c));
  wall.push(performance.now() - t);
}
await rx.stop();
process.stdout.write(`${JSON.stringify({ cpu, wall })}\n`);
