import { z } from 'zod';
import { AgentRx } from '../../../src/agentrx.js';
import type { StandardSchemaV1 } from '../../../src/core/plugin/tool-handler.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';

type Body = {
  tools?: { type: string; function: { name: string; description: string; parameters: unknown } }[];
  messages: { role: string; content?: unknown; tool_call_id?: string }[];
};

describe('defineTool in a whole Local session', () => {
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;

  afterEach(async () => {
    await rx?.stop();
    await emulator?.close();
    rx = undefined;
    emulator = undefined;
  });

  describe('when the model calls a JSON Schema tool and a zod tool, one with invalid input', () => {
    it('should declare both with their schemas, run the valid call only, and send every result back', async () => {
      const ran: unknown[] = [];
      const lookup = defineTool({
        name: 'lookup',
        description: 'Looks a word up.',
        inputSchema: { type: 'object', properties: { word: { type: 'string', minLength: 1 } }, required: ['word'] },
        handle: (input: { word: string }) => {
          ran.push(input);
          return `${input.word}: a small animal`;
        },
      });
      const forecast = defineTool({
        name: 'forecast',
        description: 'Forecast for a city.',
        inputSchema: z.object({ city: z.string().min(2) }) as unknown as StandardSchemaV1<unknown, { city: string }>,
        handle: (input: { city: string }) => {
          ran.push(input);
          return { city: input.city, sky: 'clear' };
        },
      });
      emulator = await startOpenAiEmulator({
        script: [
          {
            toolCalls: [
              { id: 'c1', name: 'lookup', arguments: { word: 'cat' } },
              { id: 'c2', name: 'forecast', arguments: { city: 1 } },
            ],
          },
          { text: 'Done.' },
        ],
      });
      rx = await AgentRx.create({ config: { providers: { local: { baseUrl: emulator.baseUrl, model: 'm' } } }, tools: [lookup, forecast] });
      const result = await rx.run({ prompt: 'go' });
      expect(result.text).toBe('Done.');

      const first = emulator.requests.find((r) => r.completion === 0)!.body as Body;
      const declared = Object.fromEntries((first.tools ?? []).map((t) => [t.function.name, t.function]));
      expect(declared.lookup).toEqual({
        name: 'lookup',
        description: 'Looks a word up.',
        parameters: { type: 'object', properties: { word: { type: 'string', minLength: 1 } }, required: ['word'], additionalProperties: false },
      });
      expect(declared.forecast?.parameters).toMatchObject({ type: 'object', properties: { city: { type: 'string', minLength: 2 } }, required: ['city'] });

      const second = emulator.requests.find((r) => r.completion === 1)!.body as Body;
      const toolMessages = Object.fromEntries(second.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, String(m.content)]));
      expect(toolMessages.c1).toBe('cat: a small animal');
      expect(JSON.parse(toolMessages.c2!)).toEqual({ isError: true, error: expect.stringMatching(/^invalid input for tool 'forecast': city: /) });
      expect(ran).toEqual([{ word: 'cat' }]);
    });
  });
});
