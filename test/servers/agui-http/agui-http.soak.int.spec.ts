/**
 * The CI-sized soak of `agentrx serve --demo` (the full one is `npm run bench -- soak`,
 * bench/soak.bench.ts): the serve command runs in this process, the bench's own driver sends
 * WARMUP + RUNS AG-UI runs of its mix (new threads, follow-ups with history, tools, a failing
 * tool, client aborts) and the heap after a full GC must not grow past a generous bound.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { jest } from '@jest/globals';
import { Agent } from 'undici';
import { runCli } from '../../../src/cli/cli.js';
import { driveSoak, type RunTally } from '../../../bench/soak.bench.js';
import { tempDir } from '../../support/temp-dir.js';
import { waitForOutput } from './agui-http.fixtures.js';

const WARMUP = 100;
const RUNS = 250;
const MAX_THREADS = 20;
/**
 * Heap growth allowed from the warm-up sample to the end: about twice what these runs measured
 * (7.9 MB over 300 runs), because this heap is jest's and the client's too, and the file store
 * keeps the journal of every session it saw (up to 1,000) in memory, which is growth by design.
 */
const MAX_GROWTH_BYTES = 16 * 2 ** 20;

/**
 * The client's connections (the driver's HttpAgent and its own fetch both use the global fetch): a
 * pool of its own per block, whose idle connections the client closes after 1 s, well within the
 * server's keep-alive (`Keep-Alive: timeout=5`), so the server never closes a connection the
 * client is about to reuse. A new pool per block: the heap sample between two blocks is three
 * full GCs, which hold the event loop (no timer runs, the client's included) for as long as they
 * take, several seconds on a loaded machine; a connection kept across that pause was idle past
 * the server's keep-alive, and the first requests of the next block were sent on connections the
 * server was closing (ECONNRESET: "fetch failed" on one run per connection). That is the client's
 * part of HTTP keep-alive (a POST is not retried), not a fault of the endpoint.
 */
function clientPool(): Agent {
  return new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });
}

/** A full GC of this process (V8's `gc`, exposed at run time: jest's workers start without --expose-gc). */
function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

describe('agentrx serve --demo under a soak', () => {
  describe(`when ${WARMUP} warm-up runs and then ${RUNS} more of the soak's mix are sent`, () => {
    let stop: AbortController | undefined;
    let exit: Promise<number> | undefined;
    afterEach(async () => {
      stop?.abort();
      await exit;
    });

    it('should end every run with RUN_FINISHED (or its client abort) and keep the heap after GC within the bound', async () => {
      const stateDir = await tempDir('agentrx-soak-');
      stop = new AbortController();
      const out = new PassThrough();
      const err = new PassThrough();
      const errLines: string[] = [];
      err.on('data', (c: Buffer) =>
        errLines.push(
          ...c
            .toString()
            .split('\n')
            .filter((l) => l !== '' && !l.includes('"agui request"')),
        ),
      );
      const url = waitForOutput(out, /^(http:\/\/127\.0\.0\.1:\d+\/)$/m);
      // Few live threads, so the endpoint's cap is reached within the warm-up (the soak's mix
      // opens about 30 threads per 100 runs).
      const config = join(stateDir, 'serve.json');
      await writeFile(config, JSON.stringify({ agui: { maxThreads: MAX_THREADS } }));
      exit = runCli(['node', 'agentrx', 'serve', '--demo', '--port', '0', '--config', config], {
        out,
        err,
        env: { AGENTRX_STATE_DIR: stateDir },
        cwd: process.cwd(),
        signal: stop.signal,
      });
      const base = (await url)[1]!;

      const heap: number[] = [];
      // HttpAgent logs every refused request; the only refusal the mix may meet is the 409 of a
      // follow-up sent right after an abort (the driver sends it again): checked below.
      const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
      let refusals: unknown[][] = [];
      let tally: RunTally;
      const globalFetch = globalThis.fetch;
      let pool = clientPool();
      globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
        globalFetch(input, { ...init, dispatcher: pool } as RequestInit)) as typeof fetch;
      try {
        tally = await driveSoak({
          endpoint: `${base}agent`,
          blocks: [WARMUP, RUNS],
          concurrency: 6,
          seed: 7,
          afterBlock: async () => {
            heap.push(heapAfterGc());
            // Nothing is in flight: the next block connects anew (see clientPool).
            const used = pool;
            pool = clientPool();
            await used.close();
          },
        });
      } finally {
        globalThis.fetch = globalFetch;
        await pool.close();
        stop.abort();
        refusals = logged.mock.calls.slice();
        logged.mockRestore();
      }

      expect(await exit).toBe(0);
      expect(tally.failures).toEqual([]);
      expect(tally.finished + tally.aborted).toBe(WARMUP + RUNS);
      expect(tally.aborted).toBeGreaterThan(0);
      expect(tally.followUps).toBeGreaterThan(0);
      expect(tally.withTools).toBeGreaterThan(0);
      expect(refusals.map((c) => (c[1] as { status?: number } | undefined)?.status)).toEqual(refusals.map(() => 409));
      expect(refusals.length).toBeLessThanOrEqual(tally.busyRetries);
      expect(heap).toHaveLength(2);
      expect(heap[1]! - heap[0]!).toBeLessThan(MAX_GROWTH_BYTES);
      // Nothing but the start and stop lines: no warning or error from the server.
      expect(errLines.filter((l) => !/^agentrx serve: (chat page|stopping)/.test(l))).toEqual([]);
    }, 120_000);
  });
});
