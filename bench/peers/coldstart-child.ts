/**
 * `node coldstart-child.js <runner>`: import (+ setup) of one framework in this fresh process,
 * timed from the first line of this script. `agentrx-import` only imports agentrx's public entry
 * (what `import('agentrx')` loads); `agentrx-index` imports it and runs `AgentRx.create` with the
 * Local provider; the other names load the peers bench's runner module and run its `setup` (no
 * request is sent). The entry is the bench build's `src/index` (compiled from the sources by
 * `npm run bench`) with `BENCH_COLDSTART_ENTRY=src`, else the built package itself
 * (`import('agentrx')`, resolved through package.json's exports to dist/). Prints one JSON line:
 * wall and CPU ms, and how many modules were loaded (CommonJS cache only; ESM loads are not
 * counted by Node).
 */
import { createRequire } from 'node:module';
import type { Setup } from './runners/types.js';

const start = performance.now();
const cpu0 = process.cpuUsage();
const runner = process.argv[2]!;
const baseUrl = 'http://127.0.0.1:9/v1';
/** The package entry: the package as built for npm, or (`src`) the bench build of the sources. */
const entry = process.env['BENCH_COLDSTART_ENTRY'] === 'src' ? '../../src/index.js' : 'agentrx';
if (runner === 'agentrx-import') {
  await import(entry);
} else if (runner === 'agentrx-index') {
  const { AgentRx } = (await import(entry)) as typeof import('../../src/index.js');
  const rx = await AgentRx.create({ config: { provider: 'local', consumers: { terminal: false }, providers: { local: { baseUrl, model: 'scripted' } } } });
  void rx;
} else {
  const mod = (await import(`./runners/${runner}.js`)) as { setup: Setup };
  await mod.setup(baseUrl);
}
const wallMs = performance.now() - start;
const cjsModules = Object.keys(createRequire(import.meta.url).cache).length;
const used = process.cpuUsage(cpu0);
process.stdout.write(JSON.stringify({ runner, wallMs, cpuMs: (used.user + used.system) / 1000, cjsModules }) + '\n');
process.exit(0);
