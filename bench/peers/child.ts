/**
 * One runner in a fresh process: `node --expose-gc child.js <runner> <baseUrl> seq|conc|live <n> <warmup>`.
 * Prints one JSON line with per-session CPU/wall (seq), the concurrent wall and event-loop delay
 * (conc), or the largest heap after a forced GC while n concurrent sessions run (live), and
 * memory after GC (each taken on a fresh macrotask): modules loaded, runner set up, after the
 * warm-up, after the run. Every session's outcome is checked (`checkOutcome`).
 */
import { checkOutcome, cpuMs, loopDelay, memAfterGc, settledMemAfterGc } from './shared.js';
import type { SessionOutcome, Setup } from './runners/types.js';

const [runnerName, baseUrl, mode, nArg, warmArg] = process.argv.slice(2);
const n = Number(nArg);
const warmup = Number(warmArg ?? 20);
const mod = (await import(`./runners/${runnerName}.js`)) as { setup: Setup };
const memLoaded = await settledMemAfterGc();
const session = await mod.setup(baseUrl!);
const memCreated = await settledMemAfterGc();

const check = (o: SessionOutcome): void => checkOutcome(runnerName!, o);
for (let i = 0; i < warmup; i++) check(await session());
const memWarm = await settledMemAfterGc();

if (mode === 'seq') {
  const cpu: number[] = [];
  const wall: number[] = [];
  // User and system time summed over the sessions (a session's own split is too coarse to read).
  const split = { userMs: 0, systemMs: 0 };
  for (let i = 0; i < n; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    check(await session());
    wall.push(performance.now() - t0);
    const d = process.cpuUsage(c0);
    split.userMs += d.user / 1000;
    split.systemMs += d.system / 1000;
    cpu.push(cpuMs(c0));
  }
  const memEnd = await settledMemAfterGc();
  process.stdout.write(JSON.stringify({ cpu, wall, split, memLoaded, memCreated, memWarm, memEnd }) + '\n');
} else if (mode === 'live') {
  // Live state per session: all n started at once, a forced GC every second while they run; the
  // largest heap (and RSS) after GC, with how many sessions were still in flight at that moment.
  let inFlight = n;
  const started = Array.from({ length: n }, () => session().then((o) => (inFlight--, o)));
  let best = { heapUsed: 0, rss: 0, inFlight: 0, atMs: 0 };
  const t0 = performance.now();
  const sampler = setInterval(() => {
    const m = memAfterGc();
    if (m.heapUsed > best.heapUsed) best = { heapUsed: m.heapUsed, rss: m.rss, inFlight, atMs: performance.now() - t0 };
  }, 1000);
  const outcomes = await Promise.all(started);
  clearInterval(sampler);
  for (const o of outcomes) check(o);
  process.stdout.write(JSON.stringify({ live: best, memWarm }) + '\n');
} else {
  const c0 = process.cpuUsage();
  const eld = loopDelay();
  const t0 = performance.now();
  const peak = { rss: 0, heapUsed: 0 };
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
  }, 20);
  const started = Array.from({ length: n }, () => session());
  // How long starting all sessions blocked the loop (their synchronous prefixes, back to back).
  const startMs = performance.now() - t0;
  const outcomes = await Promise.all(started);
  const wall = performance.now() - t0;
  clearInterval(sampler);
  const delay = eld.stop();
  const cpu = cpuMs(c0);
  for (const o of outcomes) check(o);
  const memEnd = await settledMemAfterGc();
  process.stdout.write(
    JSON.stringify({
      wall,
      startMs,
      cpu,
      eldP99: delay.p99,
      eldMax: delay.max,
      peakRss: peak.rss,
      peakHeapUsed: peak.heapUsed,
      memLoaded,
      memCreated,
      memWarm,
      memEnd,
    }) + '\n',
  );
}
