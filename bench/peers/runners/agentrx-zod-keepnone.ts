/**
 * agentrx-zod with `store.memoryKeep: 'none'`: the configuration the docs give a process that never
 * reads a session back after its result (as every runner of this bench: `rx.run()`, then the
 * result). Nothing is kept past a session's end, so no closed session is sealed. Compared with the
 * raw loop only: it shows what the default's keeping of closed sessions costs in each pass.
 */
import { setupWith } from './agentrx.js';
import { tools } from './agentrx-zod.js';
import type { Setup } from './types.js';

export const setup: Setup = (baseUrl) => setupWith(baseUrl, { type: 'memory', memoryKeep: 'none' }, { tools });
