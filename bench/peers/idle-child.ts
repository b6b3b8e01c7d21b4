/**
 * What an AgentRx instance costs with no session: `node --expose-gc idle-child.js <n>`. Builds
 * the peers bench's agentrx instance (Local provider, two tools, two consumers) twice to warm the
 * code, then `n` instances created and stopped one after the other (what a stopped instance
 * leaves behind), then `n` instances created and kept (what an idle instance holds). Heap after
 * GC on a fresh macrotask around each phase. No request is sent (the base URL is never called).
 */
import { createBenchAgentRx } from './runners/agentrx.js';
import { settledMemAfterGc } from './shared.js';

const n = Number(process.argv[2] ?? 200);
const baseUrl = 'http://127.0.0.1:9/v1';
for (let i = 0; i < 2; i++) await (await createBenchAgentRx(baseUrl)).rx.stop();
const h0 = (await settledMemAfterGc()).heapUsed;
for (let i = 0; i < n; i++) await (await createBenchAgentRx(baseUrl)).rx.stop();
const h1 = (await settledMemAfterGc()).heapUsed;
const live = [];
for (let i = 0; i < n; i++) live.push(await createBenchAgentRx(baseUrl));
const h2 = (await settledMemAfterGc()).heapUsed;
process.stdout.write(JSON.stringify({ n, stoppedPerInstance: (h1 - h0) / n, idlePerInstance: (h2 - h1) / n }) + '\n');
for (const b of live) await b.rx.stop();
