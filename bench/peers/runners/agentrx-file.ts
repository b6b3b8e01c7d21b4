import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Setup } from './types.js';
import { setupWith } from './agentrx.js';

/** agentrx with the file SessionStore (log, record and ledger on disk, fsync at tool records and terminals). */
export const setup: Setup = (baseUrl) => setupWith(baseUrl, { type: 'file', dir: mkdtempSync(join(tmpdir(), 'agentrx-bench-store-')) });
