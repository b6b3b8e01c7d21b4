/**
 * `npm run bench`: runs every benchmark and prints a markdown section per result (paste it into
 * bench/RESULTS.md with the command, date and machine). `npm run bench -- pipeline` runs one.
 */
import { cpus, totalmem } from 'node:os';
import { toMarkdown, type BenchResult } from './harness.js';
import { pipelineBench } from './pipeline.bench.js';
import { peersBench } from './peers.bench.js';
import { ttfdBench } from './ttfd.bench.js';
import { memoryBench } from './memory.bench.js';
import { concurrencyBench } from './concurrency.bench.js';
import { transportBench } from './transport.bench.js';
import { distributedBench } from './distributed.bench.js';
import { coldstartBench } from './coldstart.bench.js';
import { soakBench } from './soak.bench.js';
import { retainedBench } from './retained.bench.js';
import { storeHeapBench } from './store-heap.bench.js';
import { modelApisBench } from './model-apis.bench.js';
import { layersBench } from './layers.bench.js';

const benches: Record<string, () => Promise<BenchResult>> = {
  pipeline: () => pipelineBench(),
  ttfd: () => ttfdBench(),
  memory: () => memoryBench(),
  concurrency: () => concurrencyBench(),
  peers: () => peersBench(),
  transport: () => transportBench(),
  distributed: () => distributedBench(),
  coldstart: () => coldstartBench(),
  soak: () => soakBench(),
  retained: () => retainedBench(),
  'store-heap': () => storeHeapBench(),
  'model-apis': () => modelApisBench(),
  layers: () => layersBench(),
};

const only = process.argv.slice(2);
const cpu = cpus()[0]?.model ?? 'unknown cpu';
process.stdout.write(
  `## ${new Date().toISOString().slice(0, 10)} · node ${process.version} · ${cpus().length} cores (${cpu}) · ${(totalmem() / 2 ** 30).toFixed(0)} GiB\n\n`,
);
for (const [name, run] of Object.entries(benches)) {
  if (only.length > 0 && !only.includes(name)) continue;
  process.stderr.write(`running ${name}…\n`);
  process.stdout.write(toMarkdown(await run()) + '\n');
}
