import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { startAnthropicEmulator, type AnthropicEmulator, type AnthropicEmulatorOptions } from '../../src/testing/anthropic-emulator.js';

const MODEL = 'claude-emulated';

const tools: Tool[] = [
  { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
  { name: 'get_time', description: 'Current time', input_schema: { type: 'object', properties: {} } },
];

const ask = (content: string): MessageParam[] => [{ role: 'user', content }];

/** One server-sent event as it came over the wire. */
interface WireEvent {
  readonly event: string;
  readonly data: string;
}

/** Checked with the official `@anthropic-ai/sdk` client, which no one here wrote. */
describe('startAnthropicEmulator', () => {
  let emu: AnthropicEmulator;
  let client: Anthropic;
  let logged: unknown[][];

  afterEach(async () => {
    await emu.close();
  });

  async function start(opts: AnthropicEmulatorOptions): Promise<void> {
    emu = await startAnthropicEmulator({ apiKey: 'sk-test', ...opts });
    logged = [];
    const record = (...args: unknown[]): void => void logged.push(args);
    client = new Anthropic({ apiKey: 'sk-test', baseURL: emu.baseUrl, maxRetries: 0, logger: { error: record, warn: record, info: record, debug: record } });
  }

  /** A raw `POST /v1/messages` with the headers the SDK would send (minus `omit`). */
  function post(body: unknown, omit: readonly string[] = [], signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' };
    for (const name of omit) delete headers[name];
    return fetch(`${emu.baseUrl}/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  }

  /** Reads a whole SSE body into its events. */
  async function readEvents(res: Response): Promise<WireEvent[]> {
    const text = await res.text();
    return text
      .split('\n\n')
      .filter((frame) => frame !== '')
      .map((frame) => {
        const lines = frame.split('\n');
        return { event: lines.find((l) => l.startsWith('event: '))!.slice(7), data: lines.find((l) => l.startsWith('data: '))!.slice(6) };
      });
  }

  describe('POST /v1/messages', () => {
    describe('when called non-streamed with thinking, text and two tool uses, and cache usage', () => {
      it('should return the API message object, which the client parses', async () => {
        await start({
          script: [
            {
              thinking: 'The user wants weather and time.',
              text: 'Let me look both up.',
              toolUses: [
                { id: 'toolu_a', name: 'get_weather', input: { city: 'Oslo', days: [1, 2] } },
                { name: 'get_time', input: {} },
              ],
              usage: { input_tokens: 11, output_tokens: 7, cache_read_input_tokens: 5, cache_creation_input_tokens: 3 },
            },
          ],
        });
        const message = await client.messages.create({
          model: MODEL,
          max_tokens: 2048,
          system: [{ type: 'text', text: 'Be brief.' }],
          thinking: { type: 'enabled', budget_tokens: 1024 },
          messages: ask('weather and time?'),
          tools,
        });
        const signature = (message.content[0] as { signature: string }).signature;
        expect(signature).toMatch(/^[A-Za-z0-9+/]{20,}={0,2}$/);
        expect(message).toEqual({
          id: 'msg_e0',
          type: 'message',
          role: 'assistant',
          model: MODEL,
          content: [
            { type: 'thinking', thinking: 'The user wants weather and time.', signature },
            { type: 'text', text: 'Let me look both up.' },
            { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Oslo', days: [1, 2] } },
            { type: 'tool_use', id: 'toolu_e0_1', name: 'get_time', input: {} },
          ],
          stop_reason: 'tool_use',
          stop_sequence: null,
          usage: { input_tokens: 11, output_tokens: 7, cache_read_input_tokens: 5, cache_creation_input_tokens: 3 },
        });
        expect(emu.requests[0]).toMatchObject({
          index: 0,
          message: 0,
          method: 'POST',
          path: '/v1/messages',
          status: 200,
          headers: { authorization: 'Bearer [redacted]', 'anthropic-version': expect.any(String) },
        });
        expect(JSON.stringify(emu.requests[0]!.headers)).not.toContain('sk-test');
        expect(emu.requests[0]!.body).toMatchObject({ model: MODEL, max_tokens: 2048, tools });
      });
    });

    describe('when a turn without tool uses is asked for, with no usage scripted', () => {
      it('should answer end_turn with an estimated usage and zero cache counts', async () => {
        await start({ script: [{ text: 'Hi.' }] });
        const message = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('hello') });
        expect([message.stop_reason, message.content]).toEqual(['end_turn', [{ type: 'text', text: 'Hi.' }]]);
        expect(message.usage).toEqual({
          input_tokens: expect.any(Number),
          output_tokens: expect.any(Number),
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
        });
        expect(message.usage.input_tokens).toBeGreaterThan(0);
      });
    });

    describe('when streamed through the client helper', () => {
      it('should assemble a final message equal to the scripted content, the text arriving in several deltas', async () => {
        const text = 'Here is a streamed answer in several small pieces.';
        await start({
          script: [
            {
              thinking: 'Think first, then answer and call a tool.',
              text,
              toolUses: [{ name: 'get_weather', input: { city: 'Lima', nested: { units: 'metric', list: [1, 'two'] } } }],
              usage: { input_tokens: 20, output_tokens: 30, cache_read_input_tokens: 4 },
            },
          ],
        });
        const stream = client.messages.stream({
          model: MODEL,
          max_tokens: 4096,
          thinking: { type: 'enabled', budget_tokens: 2048 },
          messages: ask('x'),
          tools,
        });
        const deltas: string[] = [];
        const thinkingDeltas: string[] = [];
        stream.on('text', (delta) => deltas.push(delta));
        stream.on('thinking', (delta) => thinkingDeltas.push(delta));
        const final = await stream.finalMessage();
        expect(deltas.length).toBeGreaterThan(2);
        expect(deltas.join('')).toBe(text);
        expect(thinkingDeltas.length).toBeGreaterThan(1);
        const signature = (final.content[0] as { signature: string }).signature;
        expect(signature).not.toBe('');
        // The helper adds `parsed_output` (no output format was asked for) to what it assembled.
        const { parsed_output: parsed, ...assembled } = final;
        expect(parsed).toBeNull();
        expect(assembled).toEqual({
          id: 'msg_e0',
          type: 'message',
          role: 'assistant',
          model: MODEL,
          content: [
            { type: 'thinking', thinking: 'Think first, then answer and call a tool.', signature },
            { type: 'text', text },
            { type: 'tool_use', id: 'toolu_e0_0', name: 'get_weather', input: { city: 'Lima', nested: { units: 'metric', list: [1, 'two'] } } },
          ],
          stop_reason: 'tool_use',
          stop_sequence: null,
          usage: { input_tokens: 20, output_tokens: 30, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 },
        });
        expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: false, status: 200 });
      });

      it('should give the thinking block the same signature as a non-streamed answer of the same thinking', async () => {
        const turn = { thinking: 'Same thought.', text: 'Same answer.' };
        await start({ script: [turn, turn] });
        const params = { model: MODEL, max_tokens: 2048, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, messages: ask('q') };
        const whole = await client.messages.create(params);
        const streamed = await client.messages.stream(params).finalMessage();
        expect(streamed.content).toEqual(whole.content);
      });
    });

    describe('when streamed, read raw', () => {
      it('should send event/data frames in the API order, with a ping, input_json_delta pieces and a message_delta', async () => {
        await start({ script: [{ thinking: 'a b c d', text: 'one two three four five', toolUses: [{ name: 'get_time', input: { tz: 'UTC' } }] }] });
        const res = await post({ model: MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: ask('q'), tools, stream: true });
        expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
        const events = await readEvents(res);
        const data = events.map((e) => JSON.parse(e.data) as Record<string, unknown> & { type: string });
        expect(events.map((e, i) => e.event === data[i]!.type)).not.toContain(false);
        const types = events.map((e) => e.event);
        expect(types[0]).toBe('message_start');
        expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
        expect(types.filter((t) => t === 'ping')).toHaveLength(1);
        expect(data[0]!['message']).toMatchObject({
          id: 'msg_e0',
          type: 'message',
          role: 'assistant',
          content: [],
          stop_reason: null,
          usage: { input_tokens: expect.any(Number) },
        });
        // Per block: start, deltas, stop; blocks in order 0, 1, 2.
        const blockEvents = data.filter((d) => d.type.startsWith('content_block_'));
        const byBlock = [0, 1, 2].map((index) => blockEvents.filter((d) => d['index'] === index));
        for (const block of byBlock) {
          expect(block[0]!.type).toBe('content_block_start');
          expect(block[block.length - 1]!.type).toBe('content_block_stop');
          expect(block.slice(1, -1).every((d) => d.type === 'content_block_delta')).toBe(true);
        }
        expect(blockEvents.map((d) => d['index'])).toEqual([...byBlock[0]!.map(() => 0), ...byBlock[1]!.map(() => 1), ...byBlock[2]!.map(() => 2)]);
        const deltaTypes = (block: typeof data) => block.slice(1, -1).map((d) => (d['delta'] as { type: string }).type);
        expect(deltaTypes(byBlock[0]!).slice(-1)).toEqual(['signature_delta']);
        expect(
          deltaTypes(byBlock[0]!)
            .slice(0, -1)
            .every((t) => t === 'thinking_delta'),
        ).toBe(true);
        expect(deltaTypes(byBlock[1]!).every((t) => t === 'text_delta')).toBe(true);
        expect(deltaTypes(byBlock[1]!).length).toBeGreaterThan(1);
        expect(byBlock[2]![0]!['content_block']).toEqual({ type: 'tool_use', id: 'toolu_e0_0', name: 'get_time', input: {} });
        const pieces = byBlock[2]!.slice(1, -1).map((d) => (d['delta'] as { type: string; partial_json: string }).partial_json);
        expect(pieces.length).toBeGreaterThan(2);
        expect(JSON.parse(pieces.join(''))).toEqual({ tz: 'UTC' });
        expect(data[data.length - 2]).toEqual({
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: { output_tokens: expect.any(Number) },
        });
        expect(emu.requests[0]!.eventsSent).toBe(events.length);
        expect(emu.requests[0]!.headers['x-api-key']).toBe('[redacted]');
      });
    });

    describe('when a tool conversation takes two turns', () => {
      it('should accept the history with the tool_result, and refuse one without it with the API message', async () => {
        await start({
          script: [{ thinking: 'Need the weather.', toolUses: [{ name: 'get_weather', input: { city: 'Oslo' } }] }, { text: 'Rain in Oslo.' }],
        });
        const params = { model: MODEL, max_tokens: 2048, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, tools };
        const first = await client.messages.create({ ...params, messages: ask('weather in Oslo?') });
        const toolUse = first.content.find((b) => b.type === 'tool_use')!;
        expect(toolUse.id).toBe('toolu_e0_0');
        const history: MessageParam[] = [...ask('weather in Oslo?'), { role: 'assistant', content: first.content }];

        const missing = await client.messages.create({ ...params, messages: [...history, { role: 'user', content: 'and?' }] }).catch((e: unknown) => e);
        expect(missing).toBeInstanceOf(Anthropic.BadRequestError);
        const error = missing as InstanceType<typeof Anthropic.BadRequestError>;
        expect(error.error).toEqual({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message:
              'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_e0_0. ' +
              'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
          },
        });

        const second = await client.messages.create({
          ...params,
          messages: [...history, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'rain' }] }],
        });
        expect(second.content).toEqual([{ type: 'text', text: 'Rain in Oslo.' }]);
        expect(emu.requests.map((r) => r.status)).toEqual([200, 400, 200]);
      });

      it('should refuse a tool_result whose tool_use is not in the previous message', async () => {
        await start({ script: [{ text: 'never served' }] });
        const messages: MessageParam[] = [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: 'no tools here' },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_ghost', content: 'x' }] },
        ];
        const error = await client.messages.create({ model: MODEL, max_tokens: 64, messages }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.BadRequestError);
        expect((error as Error).message).toContain('messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_ghost.');
      });

      it('should refuse a thinking block sent back with its text changed', async () => {
        await start({ script: [{ thinking: 'Original thought.', text: 'ok' }, { text: 'never served' }] });
        const params = { model: MODEL, max_tokens: 2048, thinking: { type: 'enabled' as const, budget_tokens: 1024 } };
        const first = await client.messages.create({ ...params, messages: ask('q') });
        const [thinking, text] = first.content as [Anthropic.ThinkingBlock, Anthropic.TextBlock];
        const edited: MessageParam[] = [
          ...ask('q'),
          { role: 'assistant', content: [{ ...thinking, thinking: 'Edited thought.' }, text] },
          { role: 'user', content: 'more' },
        ];
        const error = await client.messages.create({ ...params, messages: edited }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.BadRequestError);
        expect((error as Error).message).toContain('messages.1.content.0: Invalid `signature` in `thinking` block');
      });
    });

    describe('when the request is invalid', () => {
      const base = { model: MODEL, max_tokens: 64, messages: ask('q') };
      it.each<[string, Record<string, unknown>, string]>([
        ['no model', { ...base, model: undefined }, 'model: Field required'],
        ['an empty model', { ...base, model: '' }, 'model:'],
        ['no max_tokens', { ...base, max_tokens: undefined }, 'max_tokens: Field required'],
        ['max_tokens 0', { ...base, max_tokens: 0 }, 'max_tokens: Input should be greater than or equal to 1'],
        ['max_tokens 1.5', { ...base, max_tokens: 1.5 }, 'max_tokens: Input should be a valid integer'],
        ['no messages', { ...base, messages: [] }, 'messages: at least one message is required'],
        ['a system message', { ...base, messages: [{ role: 'system', content: 'x' }, ...ask('q')] }, 'messages: Unexpected role "system"'],
        ['an unknown role', { ...base, messages: [...ask('q'), { role: 'tool', content: 'x' }] }, "messages.1.role: Input should be 'user' or 'assistant'"],
        ['an assistant first', { ...base, messages: [{ role: 'assistant', content: 'x' }, ...ask('q')] }, 'messages: first message must use the "user" role'],
        ['an unknown block type', { ...base, messages: [{ role: 'user', content: [{ type: 'video' }] }] }, "messages.0.content.0: Input tag 'video'"],
        ['an empty user content', { ...base, messages: [{ role: 'user', content: [] }] }, 'messages.0: all messages must have non-empty content'],
        ['a system of non-text blocks', { ...base, system: [{ type: 'image' }] }, "system.0.type: Input should be 'text'"],
        ['a tool without input_schema', { ...base, tools: [{ name: 'x' }] }, 'tools.0.custom.input_schema: Field required'],
        ['a tool without name', { ...base, tools: [{ input_schema: { type: 'object' } }] }, 'tools.0.name: Field required'],
        [
          'a tool schema not of an object',
          { ...base, tools: [{ name: 'x', input_schema: { type: 'string' } }] },
          "tools.0.custom.input_schema.type: Input should be 'object'",
        ],
        ['temperature 1.5', { ...base, temperature: 1.5 }, 'temperature: Input should be less than or equal to 1'],
        ['top_p -0.1', { ...base, top_p: -0.1 }, 'top_p: Input should be greater than or equal to 0'],
        [
          'a thinking budget under 1024',
          { ...base, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 512 } },
          'budget_tokens: Input should be greater',
        ],
        ['a thinking budget of max_tokens', { ...base, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }, '`max_tokens` must be greater'],
      ])('should answer 400 invalid_request_error for %s', async (_name, body, message) => {
        await start({ script: [{ text: 'never served' }] });
        const res = await post(body);
        expect(res.status).toBe(400);
        const error = (await res.json()) as { type: string; error: { type: string; message: string } };
        expect([error.type, error.error.type]).toEqual(['error', 'invalid_request_error']);
        expect(error.error.message).toContain(message);
        // Nothing was served: the turn is still there.
        const ok = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') });
        expect(ok.content).toEqual([{ type: 'text', text: 'never served' }]);
      });

      it('should answer 400 without the anthropic-version header', async () => {
        await start({ script: [{ text: 'x' }] });
        const res = await post(base, ['anthropic-version']);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({
          type: 'error',
          error: { type: 'invalid_request_error', message: expect.stringContaining('anthropic-version') },
        });
      });

      it('should accept output_format, tool_choice, a system string and image and tool_result blocks as given', async () => {
        await start({ script: [{ text: 'fine' }] });
        const body: MessageCreateParamsNonStreaming & Record<string, unknown> = {
          model: MODEL,
          max_tokens: 64,
          system: 'Be brief.',
          temperature: 0,
          top_p: 1,
          tools,
          tool_choice: { type: 'auto' },
          output_format: { type: 'json_schema', schema: { type: 'object' } },
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
                { type: 'text', text: 'see' },
              ],
            },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'noon' }], is_error: false }] },
          ],
        };
        const res = await post(body);
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ content: [{ type: 'text', text: 'fine' }] });
      });
    });

    describe('when the script is exhausted', () => {
      it('should answer 400 invalid_request_error saying so', async () => {
        await start({ script: [] });
        const error = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.BadRequestError);
        expect((error as InstanceType<typeof Anthropic.BadRequestError>).type).toBe('invalid_request_error');
        expect((error as Error).message).toContain('script exhausted');
      });
    });

    describe('when the emulator requires an API key', () => {
      it('should answer 401 with the API error body to a request without it or with a wrong one', async () => {
        await start({ script: [{ text: 'x' }] });
        const res = await post({ model: MODEL, max_tokens: 64, messages: ask('q') }, ['x-api-key']);
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
        const wrong = new Anthropic({ apiKey: 'sk-wrong', baseURL: emu.baseUrl, maxRetries: 0 });
        const error = await wrong.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
        expect(emu.requests[1]!.headers.authorization).toBe('Bearer [redacted]');
        const ok = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') });
        expect(ok.content).toEqual([{ type: 'text', text: 'x' }]);
      });
    });

    describe('when another path is asked for', () => {
      it('should answer 404 not_found_error and not count it as a messages request', async () => {
        await start({ script: [{ text: 'x' }], faults: { 0: { kind: 'status', status: 500 } } });
        const res = await fetch(`${emu.baseUrl}/v1/complete`, { method: 'POST', headers: { 'x-api-key': 'sk-test' }, body: '{}' });
        expect([res.status, ((await res.json()) as { error: { type: string } }).error.type]).toEqual([404, 'not_found_error']);
        expect(emu.requests[0]!.message).toBeUndefined();
        await expect(client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') })).rejects.toBeInstanceOf(Anthropic.InternalServerError);
      });
    });
  });

  describe('with recordLimit', () => {
    it('should keep only the most recent requests, their index still counting every one', async () => {
      await start({ script: Array.from({ length: 5 }, (_, i) => ({ text: `answer ${i}` })), recordLimit: 2 });
      for (let i = 0; i < 5; i++) await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask(`hello ${i}`) });
      expect(emu.requests.map((r) => r.index)).toEqual([3, 4]);
      expect((emu.requests[1]!.body as { messages: { content: string }[] }).messages[0]!.content).toBe('hello 4');
    });
  });

  describe('faults', () => {
    describe.each<[number, string, new (...args: never[]) => Error]>([
      [429, 'rate_limit_error', Anthropic.RateLimitError],
      [529, 'overloaded_error', Anthropic.OverloadedError],
      [500, 'api_error', Anthropic.InternalServerError],
    ])('when the plan answers %d with retry-after', (status, type, errorClass) => {
      it(`should send the status, the header and an error body of type ${type}, and not consume the turn`, async () => {
        await start({ script: [{ text: 'after the error' }], faults: { 0: { kind: 'status', status, retryAfter: 3 } } });
        const error = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(errorClass);
        const e = error as InstanceType<typeof Anthropic.APIError>;
        expect([e.status, e.headers?.get('retry-after'), e.type]).toEqual([status, '3', type]);
        expect(e.error).toEqual({ type: 'error', error: { type, message: expect.any(String) } });
        const ok = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') });
        expect(ok.content).toEqual([{ type: 'text', text: 'after the error' }]);
      });
    });

    describe('when the plan is edited while the emulator runs', () => {
      it('should apply the fault added for a later request', async () => {
        const faults: AnthropicEmulatorOptions['faults'] = {};
        await start({ script: [{ text: 'first' }, { text: 'second' }], faults });
        expect((await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') })).content).toEqual([{ type: 'text', text: 'first' }]);
        faults[1] = { kind: 'status', status: 529 };
        await expect(client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') })).rejects.toBeInstanceOf(Anthropic.InternalServerError);
        expect((await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') })).content).toEqual([{ type: 'text', text: 'second' }]);
      });
    });

    describe('when the plan hangs a request', () => {
      it('should write nothing until the client leaves, and record the abort', async () => {
        await start({ script: [{ text: 'later' }], faults: { 0: { kind: 'hang' } } });
        const controller = new AbortController();
        const pending = post({ model: MODEL, max_tokens: 64, messages: ask('q') }, [], controller.signal);
        await emu.waitForRequest(0);
        controller.abort();
        await expect(pending).rejects.toThrow();
        expect(await emu.waitForClose(0)).toMatchObject({ status: 0, clientAborted: true, eventsSent: 0 });
        const ok = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') });
        expect(ok.content).toEqual([{ type: 'text', text: 'later' }]);
      });
    });

    describe('when a stream stalls and the client gives up', () => {
      it('should keep the socket open after the planned events until the client aborts', async () => {
        await start({ script: [{ text: 'one two three four five six' }], faults: { 0: { kind: 'stall', afterEvents: 3 } } });
        const stream = client.messages.stream({ model: MODEL, max_tokens: 64, messages: ask('q') });
        const final = stream.finalMessage();
        const seen: string[] = [];
        // message_start, content_block_start, ping (which the client does not surface): then abort.
        stream.on('streamEvent', (event) => {
          seen.push(event.type);
          if (seen.length === 2) stream.abort();
        });
        await expect(final).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
        expect(seen).toEqual(['message_start', 'content_block_start']);
        expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: true, eventsSent: 3 });
        const ok = await client.messages.stream({ model: MODEL, max_tokens: 64, messages: ask('q') }).finalText();
        expect(ok).toBe('one two three four five six');
      });
    });

    describe('when a stream is dropped', () => {
      it('should make the client stream reject, and not consume the turn', async () => {
        await start({ script: [{ text: 'one two three four five six' }], faults: { 0: { kind: 'drop', afterEvents: 4 } } });
        const stream = client.messages.stream({ model: MODEL, max_tokens: 64, messages: ask('q') });
        const deltas: string[] = [];
        stream.on('text', (d) => deltas.push(d));
        await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.AnthropicError);
        expect(deltas).toEqual(['one two ']);
        expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: true, eventsSent: 4 });
        const ok = await client.messages.stream({ model: MODEL, max_tokens: 64, messages: ask('q') }).finalText();
        expect(ok).toBe('one two three four five six');
      });

      it('should destroy a non-streamed request unanswered', async () => {
        await start({ script: [{ text: 'later' }], faults: { 0: { kind: 'drop', afterEvents: 0 } } });
        await expect(client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') })).rejects.toBeInstanceOf(Anthropic.APIConnectionError);
        expect(emu.requests[0]).toMatchObject({ status: 0, closed: true });
        expect((await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') })).content).toEqual([{ type: 'text', text: 'later' }]);
      });
    });

    describe('when an error event is sent mid-stream', () => {
      it('should make the client stream reject with the overloaded error, and not consume the turn', async () => {
        await start({ script: [{ text: 'one two three four' }], faults: { 0: { kind: 'error_event', afterEvents: 4 } } });
        const error = await client.messages
          .stream({ model: MODEL, max_tokens: 64, messages: ask('q') })
          .finalMessage()
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.APIError);
        const e = error as InstanceType<typeof Anthropic.APIError>;
        expect([e.type, e.apiMessage]).toEqual(['overloaded_error', 'Overloaded']);
        expect(e.error).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
        expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: false, eventsSent: 5 });
        const ok = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') });
        expect(ok.content).toEqual([{ type: 'text', text: 'one two three four' }]);
      });

      it('should answer a non-streamed request 529 overloaded_error instead', async () => {
        await start({ script: [{ text: 'later' }], faults: { 0: { kind: 'error_event', afterEvents: 0 } } });
        const error = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.InternalServerError);
        expect([(error as InstanceType<typeof Anthropic.APIError>).status, (error as InstanceType<typeof Anthropic.APIError>).type]).toEqual([
          529,
          'overloaded_error',
        ]);
      });
    });

    describe('when a malformed event is injected', () => {
      it('should make the client stream reject on the data that is not JSON, and not consume the turn', async () => {
        await start({ script: [{ text: 'a b c d e f' }], faults: { 0: { kind: 'malformed_event', afterEvents: 3 } } });
        const stream = client.messages.stream({ model: MODEL, max_tokens: 64, messages: ask('q') });
        const deltas: string[] = [];
        stream.on('text', (d) => deltas.push(d));
        await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.AnthropicError);
        expect(deltas).toEqual([]);
        expect(JSON.stringify(logged)).toContain('this is not json');
        const ok = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('q') });
        expect(ok.content).toEqual([{ type: 'text', text: 'a b c d e f' }]);
      });

      it('should cut a non-streamed body short', async () => {
        await start({ script: [{ text: 'later' }], faults: { 0: { kind: 'malformed_event', afterEvents: 0 } } });
        const res = await post({ model: MODEL, max_tokens: 64, messages: ask('q') });
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(() => JSON.parse(text) as unknown).toThrow(SyntaxError);
        expect(text.startsWith('{"id":"msg_e0"')).toBe(true);
      });
    });
  });
});
