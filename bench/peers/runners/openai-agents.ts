/**
 * `@openai/agents` with its chat-completions model (OpenAIProvider with `useResponses: false`)
 * pointed at the emulator; tracing disabled; one streamed `Runner.run` per session, drained: the
 * text from the raw model stream's text deltas (the last response's), the tool outputs from its
 * `tool_output` items.
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { SYSTEM_PROMPT, USER_PROMPT } from '../shared.js';
import { add, echo, type Setup } from './types.js';

export const setup: Setup = async (baseUrl) => {
  setTracingDisabled(true);
  const modelProvider = new OpenAIProvider({ baseURL: baseUrl, apiKey: 'not-needed', useResponses: false });
  const runner = new Runner({ modelProvider, tracingDisabled: true });
  const agent = new Agent({
    name: 'bench',
    instructions: SYSTEM_PROMPT,
    model: 'scripted',
    tools: [
      tool({ name: 'echo', description: 'Echoes text back in upper case.', parameters: z.object({ text: z.string() }), execute: ({ text }) => echo(text) }),
      tool({
        name: 'add',
        description: 'Adds two integers.',
        parameters: z.object({ a: z.number().int(), b: z.number().int() }),
        execute: ({ a, b }) => JSON.stringify(add(a, b)),
      }),
    ],
  });
  return async () => {
    const result = await runner.run(agent, USER_PROMPT, { stream: true, maxTurns: 10 });
    const toolResults: { id: string; output: unknown }[] = [];
    let text = '';
    for await (const ev of result) {
      if (ev.type === 'raw_model_stream_event') {
        // One model response per turn: the answer is the last response's text deltas.
        if (ev.data.type === 'response_started') text = '';
        else if (ev.data.type === 'output_text_delta') text += ev.data.delta;
      } else if (ev.type === 'run_item_stream_event' && ev.name === 'tool_output' && ev.item.type === 'tool_call_output_item') {
        const raw = ev.item.rawItem as { callId?: string };
        toolResults.push({ id: raw.callId ?? '', output: ev.item.output });
      }
    }
    await result.completed;
    return { text, toolResults };
  };
};
