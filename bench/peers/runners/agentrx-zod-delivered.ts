/**
 * agentrx-zod without the JSON-lines consumer: the delivered-outcome consumer is the only one.
 * A layer of the `layers` bench (what serializing every AG-UI event to a stream costs).
 */
import { setupWith } from './agentrx.js';
import { tools } from './agentrx-zod.js';
import type { Setup } from './types.js';

export const setup: Setup = (baseUrl) => setupWith(baseUrl, undefined, { tools, consumers: 'delivered' });
