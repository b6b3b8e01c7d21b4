import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Setup } from './types.js';
import { setupWith } from './agentrx.js';

/** agentrx-file with both tools declared idempotent: the store syncs at each recorded result and terminal, not at each tool start. */
export const setup: Setup = (baseUrl) => setupWith(baseUrl, { type: 'file', dir: mkdtempSync(join(tmpdir(), 'agentrx-bench-store-')) }, { idempotent: true });
