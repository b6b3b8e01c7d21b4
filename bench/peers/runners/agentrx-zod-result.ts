/**
 * agentrx-zod without consumers: each session's outcome is read from `rx.run()`'s result (its text
 * and the Local transcript's tool messages), as a caller that only wants the answer does. A layer
 * of the `layers` bench (what delivering AG-UI events to consumers costs).
 */
import { setupWith } from './agentrx.js';
import { tools } from './agentrx-zod.js';
import type { Setup } from './types.js';

export const setup: Setup = (baseUrl) => setupWith(baseUrl, undefined, { tools, consumers: 'none' });
