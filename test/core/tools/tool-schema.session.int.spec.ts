import { Ajv, type AnySchema } from 'ajv';
import { Type } from 'class-transformer';
import { IsArray, IsNumber, IsOptional, IsString, ValidateNested } from 'class-validator';
import { AgentRx } from '../../../src/agentrx.js';
import { injectable } from '../../../src/core/util/inversify.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';

class Stop {
  @IsString() city!: string;
  @IsNumber() hours!: number;
}

/** A note that holds replies of its own kind: the recursive part of the input. */
class Note {
  @IsString() text!: string;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => Note) replies?: Note[];
}

class RouteInput {
  @ValidateNested() @Type(() => Stop) start!: Stop;
  @IsArray() @ValidateNested({ each: true }) @Type(() => Stop) stops!: Stop[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => Note) notes?: Note[];
}

/** What the handler got, to check the nested input arrived as instances of the nested classes. */
const received: RouteInput[] = [];

@injectable()
class PlanRouteToolHandler implements ToolHandler<RouteInput> {
  readonly name = 'plan_route';
  readonly description = 'Plans a route through stops.';
  readonly inputType = RouteInput;
  handle(input: RouteInput): string {
    received.push(input);
    return `${input.stops.length} stops from ${input.start.city}`;
  }
}

type Body = {
  tools?: { type: string; function: { name: string; parameters: Record<string, unknown> } }[];
  messages: { role: string; content?: unknown; tool_call_id?: string }[];
};

const stop = { type: 'object', properties: { city: { type: 'string' }, hours: { type: 'number' } }, required: ['city', 'hours'] };
const note = { type: 'object', properties: { text: { type: 'string' }, replies: { type: 'array', items: { $ref: '#/$defs/Note' } } }, required: ['text'] };

describe('a class tool with nested inputs in a whole Local session', () => {
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;

  afterEach(async () => {
    await rx?.stop();
    await emulator?.close();
    rx = undefined;
    emulator = undefined;
    received.length = 0;
  });

  describe('when the model is sent the tool and calls it with nested input', () => {
    it('should send a self-contained schema (nested classes inlined, the recursive one in $defs) and run the tool with nested instances', async () => {
      const args = { start: { city: 'Oslo', hours: 0 }, stops: [{ city: 'Bergen', hours: 7 }], notes: [{ text: 'scenic', replies: [{ text: 'agreed' }] }] };
      emulator = await startOpenAiEmulator({ script: [{ toolCalls: [{ id: 'c1', name: 'plan_route', arguments: args }] }, { text: 'Planned.' }] });
      rx = await AgentRx.create({
        config: { providers: { local: { baseUrl: emulator.baseUrl, model: 'm' } }, logLevel: 'silent', consumers: { terminal: false } },
        tools: [PlanRouteToolHandler],
      });
      const result = await rx.run({ prompt: 'Plan it.' });
      expect(result.text).toBe('Planned.');

      const first = emulator.requests.find((r) => r.completion === 0)!.body as Body;
      const parameters = first.tools?.find((t) => t.function.name === 'plan_route')?.function.parameters;
      expect(parameters).toEqual({
        type: 'object',
        properties: { start: stop, stops: { type: 'array', items: stop }, notes: { type: 'array', items: { $ref: '#/$defs/Note' } } },
        required: ['start', 'stops'],
        $defs: { Note: note },
      });
      expect(() => new Ajv({ strict: true }).compile(parameters as AnySchema)).not.toThrow();

      const second = emulator.requests.find((r) => r.completion === 1)!.body as Body;
      expect(second.messages.find((m) => m.tool_call_id === 'c1')?.content).toBe('1 stops from Oslo');
      expect(received).toHaveLength(1);
      expect(received[0]!.start).toBeInstanceOf(Stop);
      expect(received[0]!.notes![0]!.replies![0]).toBeInstanceOf(Note);
    });
  });
});
