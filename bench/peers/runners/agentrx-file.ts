import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Setup } from './types.js';
import { setupWith } from './agentrx.js';

/** A fresh store folder for this bench process, removed when the process exits. */
export function benchStoreDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentrx-bench-store-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** agentrx with the file SessionStore (log, record and ledger on disk, fsync at tool records and terminals). */
export const setup: Setup = (baseUrl) => setupWith(baseUrl, { type: 'file', dir: benchStoreDir() });
