import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Setup } from './types.js';
import { setupWith } from './agentrx.js';

/**
 * A fresh store folder for this bench process: under `BENCH_STORE_ROOT` when the parent bench set
 * it (the parent removes that root once every runner is done), else under the temp folder and
 * removed when this process exits. Why not per runner: on a file system that checks the inodes it
 * allocates against recent deletions (ext4 without a journal skips every inode of the block group
 * deleted in the last 5 s, or 5 min while its table block is dirty, as this machine's does), a
 * runner's store removed at its exit makes the next runner's inode allocations scan those
 * deletions: the store of the runner before would be measured, not this runner's.
 */
export function benchStoreDir(): string {
  const root = process.env['BENCH_STORE_ROOT'];
  if (root) return mkdtempSync(join(root, 'store-'));
  const dir = mkdtempSync(join(tmpdir(), 'agentrx-bench-store-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** agentrx with the file SessionStore (log, record and ledger on disk, fsync at tool records and terminals). */
export const setup: Setup = (baseUrl) => setupWith(baseUrl, { type: 'file', dir: benchStoreDir() });
