/**
 * agentrx-zod without consumers and keeping no closed session (`store.memoryKeep: 'none'`): the
 * session core alone (the provider's stream, the envelopes and their log while the session is
 * open, the tool dispatch and its ledger). The innermost layer of the `layers` bench.
 */
import { setupWith } from './agentrx.js';
import { tools } from './agentrx-zod.js';
import type { Setup } from './types.js';

export const setup: Setup = (baseUrl) => setupWith(baseUrl, { type: 'memory', memoryKeep: 'none' }, { tools, consumers: 'none' });
