/**
 * Vercel `ai` 6.x: `streamText` with tools and `stopWhen: stepCountIs(10)` over
 * `@ai-sdk/openai-compatible` 2.x pointed at the emulator; the full stream is drained.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { SYSTEM_PROMPT, USER_PROMPT } from '../shared.js';
import { add, echo, type Setup } from './types.js';

export const setup: Setup = async (baseUrl) => {
  const provider = createOpenAICompatible({ name: 'emulator', baseURL: baseUrl, includeUsage: true });
  const model = provider('scripted');
  const tools = {
    echo: tool({ description: 'Echoes text back in upper case.', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => echo(text) }),
    add: tool({
      description: 'Adds two integers.',
      inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
      execute: async ({ a, b }) => add(a, b),
    }),
  };
  return async () => {
    const result = streamText({ model, system: SYSTEM_PROMPT, prompt: USER_PROMPT, tools, stopWhen: stepCountIs(10) });
    let last = '';
    const toolResults: { id: string; output: unknown }[] = [];
    for await (const part of result.fullStream) {
      if (part.type === 'error') throw part.error instanceof Error ? part.error : new Error(String(part.error));
      if (part.type === 'text-start') last = '';
      if (part.type === 'text-delta') last += part.text;
      if (part.type === 'tool-result') toolResults.push({ id: part.toolCallId, output: part.output });
    }
    return { text: last, toolResults };
  };
};
