/**
 * The floor: `fetch` + a hand-written SSE parser speaking chat completions directly, accumulating
 * text and tool-call deltas, running the tools and looping until `finish_reason: stop`. The text
 * is the last turn's, concatenated from its deltas.
 */
import { SYSTEM_PROMPT, USER_PROMPT } from '../shared.js';
import { add, echo, type Setup } from './types.js';

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'echo',
      description: 'Echoes text back in upper case.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'add',
      description: 'Adds two integers.',
      parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
    },
  },
];

interface Call {
  id: string;
  name: string;
  args: string;
}
interface Chunk {
  choices?: {
    delta?: { content?: string | null; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string | null } }[] };
    finish_reason?: string | null;
  }[];
}

export const setup: Setup = async (baseUrl) => async () => {
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: USER_PROMPT },
  ];
  const toolResults: { id: string; output: string }[] = [];
  for (let turn = 0; turn < 20; turn++) {
    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'scripted', messages, tools: TOOLS, stream: true }),
    });
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    const decoder = new TextDecoder();
    let buf = '';
    let text = '';
    let finish: string | null = null;
    const calls: Call[] = [];
    for await (const bytes of res.body) {
      buf += decoder.decode(bytes as Uint8Array, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        for (const line of frame.split('\n')) {
          if (!line.startsWith('data:')) continue;
          const data = line.slice(5).trim();
          if (data === '[DONE]') continue;
          const chunk = JSON.parse(data) as Chunk;
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          const d = choice.delta;
          if (d?.content) text += d.content;
          for (const tc of d?.tool_calls ?? []) {
            const c = (calls[tc.index] ??= { id: '', name: '', args: '' });
            if (tc.id) c.id = tc.id;
            if (tc.function?.name) c.name = tc.function.name;
            if (tc.function?.arguments) c.args += tc.function.arguments;
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
      }
    }
    if (finish !== 'tool_calls' || calls.length === 0) return { text, toolResults };
    messages.push({
      role: 'assistant',
      content: text || null,
      tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } })),
    });
    for (const c of calls) {
      const input = JSON.parse(c.args) as { text: string; a: number; b: number };
      const out = c.name === 'echo' ? echo(input.text) : JSON.stringify(add(input.a, input.b));
      toolResults.push({ id: c.id, output: out });
      messages.push({ role: 'tool', tool_call_id: c.id, content: out });
    }
  }
  throw new Error('too many turns');
};
