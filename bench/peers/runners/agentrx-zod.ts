/**
 * agentrx with the tools declared as the ai-sdk and openai-agents runners declare theirs: zod
 * schemas (`defineTool`, validated through Standard Schema), so no class-validator index is
 * loaded. Everything else as the `agentrx` runner (memory store, consumers, `rx.run()`).
 */
import { defineTool } from 'agentrx';
import { z } from 'zod';
import { setupWith } from './agentrx.js';
import { add, echo, type Setup } from './types.js';

/** The two tools as zod schemas (shared with `agentrx-zod-keepnone`). */
export const tools = [
  defineTool({ name: 'echo', description: 'Echoes text back in upper case.', inputSchema: z.object({ text: z.string() }), handle: ({ text }) => echo(text) }),
  defineTool({
    name: 'add',
    description: 'Adds two integers.',
    inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
    handle: ({ a, b }) => add(a, b),
  }),
];

export const setup: Setup = (baseUrl) => setupWith(baseUrl, undefined, { tools });
