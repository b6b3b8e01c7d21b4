import type { Setup } from './types.js';
import { setupWith } from './agentrx.js';
import { benchStoreDir } from './agentrx-file.js';

/** agentrx-file with both tools declared idempotent: the store syncs at each recorded result and terminal, not at each tool start. */
export const setup: Setup = (baseUrl) => setupWith(baseUrl, { type: 'file', dir: benchStoreDir() }, { idempotent: true });
