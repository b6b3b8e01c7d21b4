import OpenAI from 'openai';
import type { FunctionTool, ResponseCreateParamsNonStreaming, ResponseInput, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { startResponsesEmulator, type ResponsesEmulator, type ResponsesEmulatorOptions } from '../../src/testing/responses-emulator.js';

const MODEL = 'gpt-emulated';

const tools: FunctionTool[] = [
  { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
  { type: 'function', name: 'get_time', description: 'Current time', parameters: { type: 'object', properties: {} }, strict: false },
];

type APIError = InstanceType<typeof OpenAI.APIError>;
type Params = { model: string; input: string | ResponseInput };

/** Checked with the official `openai` client, which no one here wrote. */
describe('startResponsesEmulator', () => {
  let emu: ResponsesEmulator;
  let client: OpenAI;
  let logged: unknown[][];

  afterEach(async () => {
    await emu.close();
  });

  async function start(opts: ResponsesEmulatorOptions): Promise<void> {
    emu = await startResponsesEmulator({ apiKey: 'sk-test', ...opts });
    logged = [];
    const record = (...args: unknown[]): void => void logged.push(args);
    client = new OpenAI({ apiKey: 'sk-test', baseURL: emu.baseUrl, maxRetries: 0, logger: { error: record, warn: record, info: record, debug: record } });
  }

  /** A raw `POST /v1/responses` with the SDK's headers (minus `omit`). */
  function post(body: unknown, omit: readonly string[] = [], signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json', authorization: 'Bearer sk-test' };
    for (const name of omit) delete headers[name];
    return fetch(`${emu.baseUrl}/responses`, { method: 'POST', headers, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  }

  /** Reads a whole SSE body into its frames, each data line parsed. */
  async function readEvents(res: Response): Promise<{ event: string; data: Record<string, unknown> & { type: string } }[]> {
    const text = await res.text();
    expect(text).not.toContain('[DONE]');
    return text
      .split('\n\n')
      .filter((frame) => frame !== '')
      .map((frame) => {
        const [event, data] = frame.split('\n');
        expect([event!.startsWith('event: '), data!.startsWith('data: ')]).toEqual([true, true]);
        return { event: event!.slice(7), data: JSON.parse(data!.slice(6)) as Record<string, unknown> & { type: string } };
      });
  }

  /** Request params for `input: text`, good for `create` and `stream` alike. */
  const ask = <E extends Omit<Partial<ResponseCreateParamsNonStreaming>, 'stream'>>(text: string, extra?: E) =>
    ({ model: MODEL, input: text, ...extra }) as E & Params;
  const failure = (p: Promise<unknown>): Promise<APIError> =>
    p.then(
      () => Promise.reject(new Error('expected a failure')),
      (e: APIError) => e,
    );

  describe('POST /v1/responses', () => {
    it('should answer a non-streamed request with the response object, which the client parses', async () => {
      await start({
        script: [
          {
            reasoning: 'The user wants weather and time.',
            text: 'Let me look both up.',
            functionCalls: [
              { callId: 'call_a', name: 'get_weather', arguments: { city: 'Oslo', days: [1, 2] } },
              { name: 'get_time', arguments: '{}' },
            ],
            usage: { input_tokens: 11, output_tokens: 7, cached_tokens: 5, reasoning_tokens: 3 },
          },
        ],
      });
      const response = await client.responses.create(ask('weather and time?', { tools, include: ['reasoning.encrypted_content'], instructions: 'Be brief.' }));
      const text = { text: 'Let me look both up.' };
      const encrypted = (response.output[0] as { encrypted_content: string }).encrypted_content;
      expect(encrypted).toMatch(/^gAAAAA[A-Za-z0-9+/]{20,}={0,2}$/);
      expect(response).toMatchObject({ id: 'resp_e0', object: 'response', status: 'completed', model: MODEL, error: null, instructions: 'Be brief.' });
      expect(response.output).toEqual([
        { id: 'rs_e0_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'The user wants weather and time.' }], encrypted_content: encrypted },
        { id: 'msg_e0_0', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', ...text, annotations: [], logprobs: [] }] },
        { id: 'fc_e0_0', type: 'function_call', status: 'completed', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Oslo","days":[1,2]}' },
        { id: 'fc_e0_1', type: 'function_call', status: 'completed', call_id: 'call_e0_1', name: 'get_time', arguments: '{}' },
      ]);
      expect(response.output_text).toBe('Let me look both up.');
      const usage = { input_tokens: 11, input_tokens_details: { cached_tokens: 5 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 3 } };
      expect(response.usage).toEqual({ ...usage, total_tokens: 18 });
      expect(response._request_id).toBe('req_e0');
      const recorded = { index: 0, response: 0, method: 'POST', path: '/v1/responses', status: 200, headers: { authorization: 'Bearer [redacted]' } };
      expect(emu.requests[0]).toMatchObject(recorded);
      expect(JSON.stringify(emu.requests[0]!.headers)).not.toContain('sk-test');
      expect(emu.requests[0]!.body).toMatchObject({ model: MODEL, input: 'weather and time?', tools });
    });

    it('should estimate the usage and leave encrypted_content out unless it is included', async () => {
      await start({ script: [{ reasoning: 'Hmm.', text: 'Hi.' }] });
      const response = await client.responses.create(ask('hello'));
      expect(response.output[0]).toEqual({ id: 'rs_e0_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hmm.' }] });
      expect(response.usage!.input_tokens).toBeGreaterThan(0);
      expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(1);
      expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
    });

    it('should stream deltas through the client helper into a final response equal to the script', async () => {
      const text = 'Here is a streamed answer in several small pieces.';
      const args = { city: 'Lima', nested: { units: 'metric', list: [1, 'two'] } };
      await start({ script: [{ reasoning: 'Think first, then answer and call a tool.', text, functionCalls: [{ name: 'get_weather', arguments: args }] }] });
      const stream = client.responses.stream({ model: MODEL, input: 'x', tools });
      const deltas: string[] = [];
      const summaryDeltas: string[] = [];
      const argDeltas: string[] = [];
      stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
      stream.on('response.reasoning_summary_text.delta', (e) => summaryDeltas.push(e.delta));
      stream.on('response.function_call_arguments.delta', (e) => argDeltas.push(e.delta));
      const final = await stream.finalResponse();
      expect([deltas.length > 2, deltas.join('')]).toEqual([true, text]);
      expect([summaryDeltas.length > 2, summaryDeltas.join('')]).toEqual([true, 'Think first, then answer and call a tool.']);
      expect([argDeltas.length > 1, JSON.parse(argDeltas.join(''))]).toEqual([true, args]);
      expect(final).toMatchObject({ id: 'resp_e0', status: 'completed', output_text: text, usage: { total_tokens: expect.any(Number) } });
      expect(
        final.output.map((o) =>
          o.type === 'reasoning' ? o.summary : o.type === 'message' ? o.content[0] : o.type === 'function_call' ? [o.call_id, o.name, o.arguments] : o.type,
        ),
      ).toEqual([
        [{ type: 'summary_text', text: 'Think first, then answer and call a tool.' }],
        expect.objectContaining({ type: 'output_text', text }),
        ['call_e0_0', 'get_weather', JSON.stringify(args)],
      ]);
      expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: false, status: 200 });
    });

    it('should send event/data frames in the API order, with increasing sequence numbers and no [DONE]', async () => {
      await start({ script: [{ reasoning: 'a b c', text: 'one two three', functionCalls: [{ name: 'get_time', arguments: { tz: 'UTC' } }] }] });
      const res = await post({ model: MODEL, input: 'q', tools, stream: true });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = await readEvents(res);
      expect(events.map((e) => e.event === e.data.type)).not.toContain(false);
      expect(events.map((e) => e.data['sequence_number'])).toEqual(events.map((_, i) => i));
      const [summary, text, args] = ['reasoning_summary_text.delta', 'output_text.delta', 'function_call_arguments.delta'];
      expect(events.map((e) => e.event.replace(/^response\./, ''))).toEqual([
        ...['created', 'in_progress', 'output_item.added', 'reasoning_summary_part.added', summary, summary, 'reasoning_summary_text.done'],
        ...['reasoning_summary_part.done', 'output_item.done', 'output_item.added', 'content_part.added', text, text, 'output_text.done'],
        ...['content_part.done', 'output_item.done', 'output_item.added', args, args, args, 'function_call_arguments.done', 'output_item.done', 'completed'],
      ]);
      expect(events[0]!.data['response']).toMatchObject({ id: 'resp_e0', status: 'in_progress', output: [], usage: null });
      expect(events[2]!.data).toMatchObject({ output_index: 0, item: { id: 'rs_e0_0', type: 'reasoning', summary: [] } });
      expect(events[9]!.data).toMatchObject({ output_index: 1, item: { type: 'message', status: 'in_progress', content: [] } });
      const last = events[events.length - 1]!.data['response'] as { status: string; output: unknown[]; usage: object };
      expect([last.status, last.output.length, last.usage]).toEqual(['completed', 3, expect.objectContaining({ total_tokens: expect.any(Number) })]);
      expect(emu.requests[0]!.eventsSent).toBe(events.length);
    });

    it('should end an incomplete turn with response.incomplete, and say why when not streamed', async () => {
      const turn = { text: 'cut', status: 'incomplete' as const };
      await start({ script: [turn, turn] });
      const whole = await client.responses.create(ask('q'));
      expect([whole.status, whole.incomplete_details]).toEqual(['incomplete', { reason: 'max_output_tokens' }]);
      expect(whole.output).toEqual([expect.objectContaining({ type: 'message', status: 'incomplete' })]);
      const events = await readEvents(await post({ model: MODEL, input: 'q', stream: true }));
      expect(events[events.length - 1]!.event).toBe('response.incomplete');
    });

    it('should take a two-turn function-call conversation, refusing the history without the function_call_output', async () => {
      await start({
        script: [{ reasoning: 'Need the weather.', functionCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'Rain in Oslo.' }],
      });
      const params = { model: MODEL, tools, store: false, include: ['reasoning.encrypted_content' as const] };
      const first = await client.responses.create({ ...params, input: 'weather in Oslo?' });
      const call = first.output.find((o) => o.type === 'function_call')!;
      expect([call.call_id, call.name]).toEqual(['call_e0_0', 'get_weather']);
      const history: ResponseInput = [{ role: 'user', content: 'weather in Oslo?' }, ...(first.output as ResponseInput)];
      // The output must come before the next message item: one after it is too late.
      const late: ResponseInput = [...history, { role: 'user', content: 'and?' }, { type: 'function_call_output', call_id: call.call_id, output: 'rain' }];
      const missing = await failure(client.responses.create({ ...params, input: late }));
      expect(missing).toBeInstanceOf(OpenAI.BadRequestError);
      const expected = { message: 'No tool output found for function call call_e0_0.', type: 'invalid_request_error', param: 'input', code: null };
      expect(missing.error).toEqual(expected);
      const orphan = await failure(client.responses.create({ ...params, input: [{ type: 'function_call_output', call_id: 'call_ghost', output: 'x' }] }));
      expect(orphan.message).toContain('No tool call found for function call output with call_id call_ghost.');
      const second = await client.responses.create({ ...params, input: [...history, { type: 'function_call_output', call_id: call.call_id, output: 'rain' }] });
      expect(second.output_text).toBe('Rain in Oslo.');
      expect(emu.requests.map((r) => r.status)).toEqual([200, 400, 400, 200]);
    });

    it.each<[string, (item: Record<string, unknown>) => Record<string, unknown>, boolean | undefined, string]>([
      ['with forged encrypted content', (rs) => ({ ...rs, encrypted_content: 'gAAAAAforged' }), false, 'The encrypted content for item rs_e0_0 could not'],
      ['without encrypted content, store off', ({ encrypted_content: _, ...rs }) => rs, false, 'Items are not persisted when `store` is set to false'],
      ['as an id never served', ({ encrypted_content: _, ...rs }) => ({ ...rs, id: 'rs_ghost' }), undefined, "Item with id 'rs_ghost' not found."],
    ])('should refuse a reasoning item sent back %s', async (_name, edit, store, message) => {
      await start({ script: [{ reasoning: 'thought', text: 'ok' }, { text: 'never served' }] });
      const first = await client.responses.create(ask('q', { include: ['reasoning.encrypted_content'] }));
      const [rs, msg] = first.output as unknown as Record<string, unknown>[];
      const input = [{ role: 'user', content: 'q' }, edit(rs!), msg, { role: 'user', content: 'more' }] as unknown as ResponseInput;
      const error = await failure(client.responses.create({ model: MODEL, input, ...(store === undefined ? {} : { store }) }));
      expect([error.status, error.message]).toEqual([400, expect.stringContaining(message)]);
      const ok = await client.responses.create({ model: MODEL, store: true, input: [{ role: 'user', content: 'q' }, rs, msg] as unknown as ResponseInput });
      expect(ok.output_text).toBe('never served');
    });

    it('should accept a text.format json_schema request, echoing the format', async () => {
      await start({ script: [{ text: '{"city":"Oslo","rain":true}' }] });
      const schema = { type: 'object', properties: { city: { type: 'string' }, rain: {} }, required: ['city', 'rain'], additionalProperties: false };
      const format = { type: 'json_schema' as const, name: 'weather', strict: true, schema };
      const params = { text: { format }, temperature: 0, top_p: 1, max_output_tokens: 16, reasoning: { effort: 'low' as const } };
      const response = await client.responses.create(ask('q', params));
      expect(JSON.parse(response.output_text)).toEqual({ city: 'Oslo', rain: true });
      expect(response.text).toEqual({ format, verbosity: 'medium' });
    });

    describe('when the request is invalid', () => {
      const user = { role: 'user', content: 'q' };
      const open = { type: 'object', properties: { a: { type: 'object', properties: {} } }, required: ['a'], additionalProperties: false };
      it.each<[string | null, string, Record<string, unknown>]>([
        ['model', "Missing required parameter: 'model'.", { model: undefined }],
        ['model', "Invalid 'model': string too short.", { model: '' }],
        ['input', "Invalid 'input': empty array.", { input: [] }],
        ['input[1].role', "Invalid value: 'tool'. Supported values are: 'assistant',", { input: [user, { role: 'tool', content: 'x' }] }],
        [
          'input[1].content[0]',
          "Supported values are: 'output_text' and 'refusal'.",
          { input: [user, { role: 'assistant', content: [{ type: 'input_text' }] }] },
        ],
        ['input[0].arguments', 'expected a string, but got an object', { input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }],
        [
          'input',
          "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
          { input: [user, { type: 'reasoning', id: 'rs_1', summary: [] }] },
        ],
        ['tools[0].name', "Missing required parameter: 'tools[0].name'.", { tools: [{ type: 'function', function: { name: 'f' } }] }],
        [
          'tools[0].parameters',
          'schema must be a JSON Schema of \'type: "object"\'',
          { tools: [{ type: 'function', name: 'f', parameters: { type: 'string' } }] },
        ],
        ['temperature', "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.", { temperature: 3 }],
        ['top_p', 'Expected a value <= 1', { top_p: 1.5 }],
        ['max_output_tokens', 'integer below minimum value. Expected a value >= 16, but got 10', { max_output_tokens: 10 }],
        ['max_tokens', "Unknown parameter: 'max_tokens'.", { max_tokens: 100 }],
        ['previous_response_id', "send the whole conversation in 'input'", { previous_response_id: 'resp_e0' }],
        ['text.format.name', 'Missing required parameter', { text: { format: { type: 'json_schema', schema: { type: 'object' } } } }],
        ['text.format.schema', 'expected an object, but got a string', { text: { format: { type: 'json_schema', name: 'x', schema: 'obj' } } }],
        [
          'text.format.schema',
          "Invalid schema for response_format 'x': In context=('properties', 'a'), 'additionalProperties' is required to be supplied and to be false.",
          { text: { format: { type: 'json_schema', name: 'x', strict: true, schema: open } } },
        ],
      ])('should answer 400 naming %s: %s', async (param, message, patch) => {
        await start({ script: [{ text: 'never served' }] });
        const res = await post({ model: MODEL, input: 'q', ...patch });
        expect(res.status).toBe(400);
        const { error } = (await res.json()) as { error: { message: string; type: string; param: string | null } };
        expect([error.type, error.param, error.message]).toEqual(['invalid_request_error', param, expect.stringContaining(message)]);
        // Nothing was served: the turn is still there.
        expect((await client.responses.create(ask('q'))).output_text).toBe('never served');
      });
    });

    it('should answer 400 saying so once the script is exhausted', async () => {
      await start({ script: [] });
      const error = await failure(client.responses.create(ask('q')));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect([error.type, error.message]).toEqual(['invalid_request_error', expect.stringContaining('script exhausted')]);
    });

    it('should answer 401 invalid_api_key without the key or with a wrong one', async () => {
      await start({ script: [{ text: 'x' }] });
      const res = await post(ask('q'), ['authorization']);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        error: { message: expect.stringMatching(/^Incorrect API key provided/), type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
      });
      const wrong = new OpenAI({ apiKey: 'sk-wrong', baseURL: emu.baseUrl, maxRetries: 0 });
      expect(await failure(wrong.responses.create(ask('q')))).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(emu.requests[1]!.headers.authorization).toBe('Bearer [redacted]');
      expect((await client.responses.create(ask('q'))).output_text).toBe('x');
    });

    it('should answer 404 unknown_url to another path and not count it as a responses request', async () => {
      await start({ script: [{ text: 'x' }], faults: { 0: { kind: 'status', status: 500 } } });
      const res = await fetch(`${emu.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-test' }, body: '{}' });
      expect([res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([404, 'unknown_url']);
      expect(emu.requests[0]!.response).toBeUndefined();
      expect(await failure(client.responses.create(ask('q')))).toBeInstanceOf(OpenAI.InternalServerError);
    });
  });

  describe('faults', () => {
    it.each<[number, string, new (...args: never[]) => Error]>([
      [429, 'rate_limit_exceeded', OpenAI.RateLimitError],
      [500, 'server_error', OpenAI.InternalServerError],
      [503, 'server_overloaded', OpenAI.InternalServerError],
    ])('should answer %d with retry-after and an OpenAI error body of code %s, not consuming the turn', async (status, code, errorClass) => {
      await start({ script: [{ text: 'after the error' }], faults: { 0: { kind: 'status', status, retryAfter: 3 } } });
      const error = await failure(client.responses.create(ask('q')));
      expect(error).toBeInstanceOf(errorClass);
      expect([error.status, error.headers?.get('retry-after'), error.code, error.param]).toEqual([status, '3', code, null]);
      expect((await client.responses.create(ask('q'))).output_text).toBe('after the error');
    });

    it('should hang a request, writing nothing until the client leaves', async () => {
      await start({ script: [{ text: 'later' }], faults: { 0: { kind: 'hang' } } });
      const controller = new AbortController();
      const pending = post(ask('q'), [], controller.signal);
      await emu.waitForRequest(0);
      controller.abort();
      await expect(pending).rejects.toThrow();
      expect(await emu.waitForClose(0)).toMatchObject({ status: 0, clientAborted: true, eventsSent: 0 });
      expect((await client.responses.create(ask('q'))).output_text).toBe('later');
    });

    it('should stall a stream after the planned events until the client aborts', async () => {
      await start({ script: [{ text: 'one two three four five six' }], faults: { 0: { kind: 'stall', afterEvents: 3 } } });
      const stream = client.responses.stream(ask('q'));
      const final = stream.finalResponse();
      const seen: string[] = [];
      stream.on('event', (e) => {
        seen.push(e.type);
        if (seen.length === 3) stream.abort();
      });
      await expect(final).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
      expect(seen).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
      expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: true, eventsSent: 3 });
      expect((await client.responses.stream(ask('q')).finalResponse()).output_text).toBe('one two three four five six');
    });

    it('should drop a stream after the planned events, and a non-streamed request unanswered', async () => {
      await start({ script: [{ text: 'one two three four five six' }], faults: { 0: { kind: 'drop', afterEvents: 5 }, 1: { kind: 'drop', afterEvents: 0 } } });
      const stream = client.responses.stream(ask('q'));
      const deltas: string[] = [];
      stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
      await expect(stream.finalResponse()).rejects.toBeInstanceOf(OpenAI.OpenAIError);
      expect(deltas).toEqual(['one two ']);
      expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: true, eventsSent: 5 });
      expect(await failure(client.responses.create(ask('q')))).toBeInstanceOf(OpenAI.APIConnectionError);
      expect(emu.requests[1]).toMatchObject({ status: 0, closed: true });
      expect((await client.responses.create(ask('q'))).output_text).toBe('one two three four five six');
    });

    it('should inject an event whose data is not JSON, and cut a non-streamed body short', async () => {
      await start({
        script: [{ text: 'a b c d e f' }],
        faults: { 0: { kind: 'malformed_event', afterEvents: 4 }, 1: { kind: 'malformed_event', afterEvents: 0 } },
      });
      const stream = client.responses.stream(ask('q'));
      const deltas: string[] = [];
      stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
      const error = (await stream.finalResponse().catch((e: unknown) => e)) as Error;
      expect([error.constructor, error.cause]).toEqual([OpenAI.OpenAIError, expect.any(SyntaxError)]);
      expect(deltas).toEqual([]);
      expect(JSON.stringify(logged)).toContain('this is not json');
      const res = await post(ask('q'));
      const text = await res.text();
      expect([res.status, text.startsWith('{"id":"resp_e1"')]).toEqual([200, true]);
      expect(() => JSON.parse(text) as unknown).toThrow(SyntaxError);
      expect((await client.responses.create(ask('q'))).output_text).toBe('a b c d e f');
    });

    it('should send an in-stream error event and end, or answer 500 when not streamed', async () => {
      await start({
        script: [{ text: 'one two three four' }],
        faults: { 0: { kind: 'error_event', afterEvents: 5, message: 'Boom.' }, 1: { kind: 'error_event', afterEvents: 0 } },
      });
      const events: ResponseStreamEvent[] = [];
      for await (const e of await client.responses.create({ ...ask('q'), stream: true })) events.push(e);
      expect(events.map((e) => e.type).slice(-2)).toEqual(['response.output_text.delta', 'error']);
      expect(events[5]).toEqual({ type: 'error', code: 'server_error', message: 'Boom.', param: null, sequence_number: 5 });
      expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: false, eventsSent: 6 });
      const error = await failure(client.responses.create(ask('q')));
      expect([error.constructor, error.status, error.code]).toEqual([OpenAI.InternalServerError, 500, 'server_error']);
      expect((await client.responses.stream(ask('q')).finalResponse()).output_text).toBe('one two three four');
    });

    it('should fail a response with response.failed, keeping the items finished, and whole when not streamed', async () => {
      await start({
        script: [{ reasoning: 'r', text: 'one two three four' }],
        faults: { 0: { kind: 'failed', afterEvents: 8 }, 1: { kind: 'failed', afterEvents: 0 } },
      });
      const final = await client.responses.stream(ask('q')).finalResponse();
      expect(final).toMatchObject({ status: 'failed', error: { code: 'server_error', message: expect.any(String) }, usage: null });
      expect(final.output.map((o) => o.type)).toEqual(['reasoning']);
      expect(emu.requests[0]).toMatchObject({ eventsSent: 9 });
      const whole = await client.responses.create(ask('q'));
      expect([whole.status, whole.output, whole.error?.code]).toEqual(['failed', [], 'server_error']);
      expect((await client.responses.create(ask('q'))).status).toBe('completed');
    });

    it('should read the plan at each request, so a test may edit it while the emulator runs', async () => {
      const faults: ResponsesEmulatorOptions['faults'] = {};
      await start({ script: [{ text: 'first' }, { text: 'second' }], faults });
      expect((await client.responses.create(ask('q'))).output_text).toBe('first');
      faults[1] = { kind: 'status', status: 500 };
      expect(await failure(client.responses.create(ask('q')))).toBeInstanceOf(OpenAI.InternalServerError);
      expect((await client.responses.create(ask('q'))).output_text).toBe('second');
    });
  });
});
