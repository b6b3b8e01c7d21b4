import { ApiError, GoogleGenAI, type Content, type GenerateContentParameters, type GenerateContentResponse, type Tool } from '@google/genai';
import { startGeminiEmulator, type GeminiEmulator, type GeminiEmulatorFault, type GeminiEmulatorOptions } from '../../src/testing/gemini-emulator.js';

const MODEL = 'gemini-2.5-flash';
const KEY = 'AIza-test-key';
const PATH = `/v1beta/models/${MODEL}:generateContent`;

const tools: Tool[] = [
  {
    functionDeclarations: [
      { name: 'get_weather', description: 'Weather for a city', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'get_time', description: 'Current time' },
    ],
  },
];

const ask = (text: string): Content[] => [{ role: 'user', parts: [{ text }] }];
const params = (contents: Content[], config: GenerateContentParameters['config'] = {}): GenerateContentParameters => ({ model: MODEL, contents, config });

type GoogleError = { error: { code: number; message: string; status: string; details?: unknown[] } };

/** The Google error body an SDK `ApiError` carries as its message. */
function errorBody(e: unknown): GoogleError {
  expect(e).toBeInstanceOf(ApiError);
  return JSON.parse((e as ApiError).message) as GoogleError;
}

/** Checked with the official `@google/genai` client, which no one here wrote. */
describe('startGeminiEmulator', () => {
  let emu: GeminiEmulator;
  let ai: GoogleGenAI;

  afterEach(async () => {
    await emu.close();
  });

  async function start(opts: GeminiEmulatorOptions): Promise<void> {
    emu = await startGeminiEmulator({ apiKey: KEY, ...opts });
    ai = client(KEY);
  }

  /**
   * The SDK as a user builds it, but given the global `fetch`: by default it sends through Node's
   * global Undici dispatcher, which a Jest sandbox does not see (the SDK then throws "Undici
   * globalDispatcher is not available").
   */
  function client(apiKey: string): GoogleGenAI {
    return new GoogleGenAI({ vertexai: false, apiKey, httpOptions: { baseUrl: emu.baseUrl, fetch: globalThis.fetch } });
  }

  /** A raw POST to the emulator, the key in the header unless `headers` replaces it. */
  function post(path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': KEY }, signal?: AbortSignal): Promise<Response> {
    return fetch(`${emu.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal });
  }

  /** Reads an SDK stream into the chunks it yields, and the error it ends with (if any). */
  async function collect(stream: AsyncGenerator<GenerateContentResponse>): Promise<{ chunks: GenerateContentResponse[]; error?: unknown }> {
    const chunks: GenerateContentResponse[] = [];
    try {
      for await (const chunk of stream) chunks.push(chunk);
      return { chunks };
    } catch (error) {
      return { chunks, error };
    }
  }

  const texts = (chunks: GenerateContentResponse[]): string[] => chunks.map((c) => c.candidates![0]!.content!.parts![0]!.text!);
  const generate = (text = 'q'): Promise<GenerateContentResponse> => ai.models.generateContent(params(ask(text)));
  const failure = (text = 'q'): Promise<unknown> => generate(text).catch((e: unknown) => e);

  describe('generateContent', () => {
    it('should answer the whole GenerateContentResponse: thought, signed text, function calls and usage, which the client parses', async () => {
      const usage = { promptTokenCount: 11, candidatesTokenCount: 7, cachedContentTokenCount: 5, thoughtsTokenCount: 3 };
      const calls = [
        { id: 'call_a', name: 'get_weather', args: { city: 'Oslo', days: [1, 2] } },
        { name: 'get_time', args: {} },
      ];
      await start({ script: [{ thought: 'The user wants weather and time.', text: 'Let me look both up.', functionCalls: calls, usage }] });
      const config = { systemInstruction: 'Be brief.', tools, thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } };
      const response = await ai.models.generateContent(params(ask('weather and time?'), config));
      const parts = response.candidates![0]!.content!.parts!;
      const signature = parts[1]!.thoughtSignature!;
      expect(signature).toMatch(/^[A-Za-z0-9+/]{20,}={0,2}$/);
      expect(parts).toEqual([
        { text: 'The user wants weather and time.', thought: true },
        { text: 'Let me look both up.', thoughtSignature: signature },
        ...calls.map((functionCall) => ({ functionCall })),
      ]);
      expect(response.functionCalls).toEqual(calls);
      expect(response.candidates![0]).toMatchObject({ finishReason: 'STOP', index: 0, content: { role: 'model' } });
      expect(response.usageMetadata).toEqual({ ...usage, totalTokenCount: 21, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 11 }] });
      expect([response.modelVersion, response.responseId]).toEqual([MODEL, 'resp_e0']);
      expect(emu.requests[0]).toMatchObject({ index: 0, call: 0, method: 'POST', path: PATH, model: MODEL, streamed: false, status: 200 });
      expect(emu.requests[0]!.headers['x-goog-api-key']).toBe('[redacted]');
      expect(JSON.stringify(emu.requests[0]!.headers)).not.toContain(KEY);
      expect(emu.requests[0]!.body).toMatchObject({
        contents: ask('weather and time?'),
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        tools,
        generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } },
      });
    });

    it('should leave the thought out when thoughts are not asked for, still sign the next part, and estimate the usage', async () => {
      await start({ script: [{ thought: 'Hidden reasoning.', text: 'Hi.' }, { finishReason: 'MAX_TOKENS' }] });
      const response = await generate('hello');
      expect([response.text, response.candidates![0]!.content!.parts]).toEqual(['Hi.', [{ text: 'Hi.', thoughtSignature: expect.any(String) }]]);
      const usage = response.usageMetadata!;
      expect(usage.thoughtsTokenCount).toBeGreaterThan(0);
      expect(usage.totalTokenCount).toBe(usage.promptTokenCount! + usage.candidatesTokenCount! + usage.thoughtsTokenCount!);
      expect(usage.cachedContentTokenCount).toBeUndefined();
      // A turn with no parts: a model content without `parts`, as the API sends it.
      expect((await generate()).candidates![0]).toEqual({ content: { role: 'model' }, finishReason: 'MAX_TOKENS', index: 0 });
    });
  });

  describe('streamGenerateContent', () => {
    it('should yield thought and text in several chunks, each function call whole, and the finish reason and usage last', async () => {
      const text = 'Here is a streamed answer in several small pieces.';
      const calls = [
        { name: 'get_weather', args: { city: 'Lima', nested: { units: 'metric', list: [1, 'two'] } } },
        { name: 'get_time', args: {} },
      ];
      await start({
        script: [{ thought: 'Think first, then answer.', text, functionCalls: calls, usage: { promptTokenCount: 20, candidatesTokenCount: 30 } }],
      });
      const stream = await ai.models.generateContentStream(params(ask('x'), { tools, thinkingConfig: { includeThoughts: true } }));
      const { chunks, error } = await collect(stream);
      expect(error).toBeUndefined();
      expect(chunks.every((c) => c.candidates![0]!.content!.parts!.length === 1)).toBe(true);
      const flat = chunks.map((c) => c.candidates![0]!.content!.parts![0]!);
      const thoughts = flat.filter((p) => p.thought === true);
      const answer = flat.filter((p) => p.text !== undefined && p.thought === undefined);
      expect(flat).toEqual([...thoughts, ...answer, ...calls.map((functionCall) => ({ functionCall }))]);
      expect([thoughts.length > 1, thoughts.map((p) => p.text).join('')]).toEqual([true, 'Think first, then answer.']);
      expect([answer.length > 2, answer.map((p) => p.text).join('')]).toEqual([true, text]);
      expect(answer[0]!.thoughtSignature).toEqual(expect.any(String));
      const early = chunks.slice(0, -1).map((c) => [c.candidates![0]!.finishReason, c.usageMetadata]);
      expect(early).toEqual(early.map(() => [undefined, undefined]));
      const last = chunks[chunks.length - 1]!;
      expect([last.candidates![0]!.finishReason, last.usageMetadata]).toEqual([
        'STOP',
        expect.objectContaining({ candidatesTokenCount: 30, totalTokenCount: 50 }),
      ]);
      expect(chunks.every((c) => c.responseId === 'resp_e0' && c.modelVersion === MODEL)).toBe(true);
      const record = await emu.waitForClose(0);
      expect(record).toMatchObject({ streamed: true, model: MODEL, query: { alt: 'sse' }, status: 200, clientAborted: false, eventsSent: chunks.length });
    });

    it('should send text/event-stream frames of one data line each, no [DONE]; and one JSON array without alt=sse', async () => {
      await start({ script: [{ text: 'one two three four five' }, { text: 'one two three' }] });
      const res = await post(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, { contents: ask('q') });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const frames = (await res.text()).split('\r\n\r\n');
      expect([frames.pop(), frames.length, frames.every((f) => f.startsWith('data: {') && !f.includes('\n') && !f.includes('[DONE]'))]).toEqual(['', 3, true]);
      const data = frames.map((f) => JSON.parse(f.slice(6)) as GenerateContentResponse);
      expect(texts(data).join('')).toBe('one two three four five');
      const array = (await (await post(`/v1beta/models/${MODEL}:streamGenerateContent`, { contents: ask('q') })).json()) as GenerateContentResponse[];
      expect([texts(array), array[1]!.candidates![0]!.finishReason]).toEqual([['one two ', 'three'], 'STOP']);
    });
  });

  describe('function calling', () => {
    it('should accept a second turn with the function responses, and refuse one without them (ApiError 400, the API message)', async () => {
      const calls = [
        { id: 'call_1', name: 'get_weather', args: { city: 'Oslo' } },
        { name: 'get_time', args: {} },
      ];
      await start({ script: [{ thought: 'Need both.', functionCalls: calls }, { text: 'Rain in Oslo at noon.' }] });
      const first = await ai.models.generateContent(params(ask('weather in Oslo?'), { tools }));
      expect(first.functionCalls!.map((c) => c.name)).toEqual(['get_weather', 'get_time']);
      const history: Content[] = [...ask('weather in Oslo?'), first.candidates![0]!.content!];
      const answer = (weatherId: string): Content => ({
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { output: 'noon' } } },
          { functionResponse: { id: weatherId, name: 'get_weather', response: { output: 'rain' } } },
        ],
      });

      const missing = await ai.models.generateContent(params([...history, ...ask('and?')], { tools })).catch((e: unknown) => e);
      expect((missing as ApiError).status).toBe(400);
      const message = 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
      expect(errorBody(missing)).toEqual({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
      const mismatch = await ai.models.generateContent(params([...history, answer('call_9')], { tools })).catch((e: unknown) => e);
      expect(errorBody(mismatch).error.message).toContain('none for function call "get_weather" (id "call_1") in contents[2].');

      const second = await ai.models.generateContent(params([...history, answer('call_1')], { tools }));
      expect(second.text).toBe('Rain in Oslo at noon.');
      expect(emu.requests.map((r) => r.status)).toEqual([200, 400, 400, 200]);
    });
  });

  describe('when the request is invalid', () => {
    const base = { contents: ask('q') };
    const config = (generationConfig: Record<string, unknown>): Record<string, unknown> => ({ ...base, generationConfig });
    const model = (parts: unknown[]): Record<string, unknown> => ({ role: 'model', parts });
    const turns = (...contents: unknown[]): Record<string, unknown> => ({ contents: [...ask('q'), ...contents] });
    const call = { functionCall: { name: 'get_time', args: {} } };
    it.each<[string, Record<string, unknown>, string]>([
      ['no contents', {}, '* GenerateContentRequest.contents: contents is not specified\n'],
      ['empty parts', { contents: [{ role: 'user', parts: [] }] }, '* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.\n'],
      ['an unknown role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'Please use a valid role: user, model.'],
      ['a part without data', { contents: [{ role: 'user', parts: [{ thought: true }] }] }, "contents[0].parts[0].data: required oneof field 'data'"],
      ['an unknown part field', { contents: [{ role: 'user', parts: [{ txt: 'x' }] }] }, 'Unknown name "txt" at \'contents[0].parts[0]\': Cannot find field.'],
      [
        'a response not an object',
        turns(model([call]), { parts: [{ functionResponse: { name: 'get_time', response: 'ok' } }] }),
        "Invalid value at 'contents[2]",
      ],
      [
        'a function response after no call',
        turns(model([{ text: 'x' }]), { parts: [{ functionResponse: { name: 'f', response: {} } }] }),
        'response turn comes immediately',
      ],
      [
        'a function call after a model turn',
        turns(model([{ text: 'x' }]), model([call])),
        'call turn comes immediately after a user turn or after a function response turn.',
      ],
      ['a history ending on a function call', turns(model([call])), 'the number of function response parts is equal to the number of function call parts'],
      ['a system instruction without parts', { ...base, systemInstruction: { parts: [] } }, '* GenerateContentRequest.system_instruction.parts:'],
      [
        'a function without a name',
        { ...base, tools: [{ functionDeclarations: [{ description: 'x' }] }] },
        'function_declarations[0].name: Name cannot be empty.',
      ],
      ['a bad function name', { ...base, tools: [{ functionDeclarations: [{ name: '1 bad' }] }] }, 'Invalid function name.'],
      ['temperature 2.5', config({ temperature: 2.5 }), '* GenerateContentRequest.generation_config.temperature: temperature must be in the range [0, 2].'],
      ['topP 1.5', config({ topP: 1.5 }), 'generation_config.top_p: top_p must be in the range [0, 1].'],
      ['maxOutputTokens 0', config({ maxOutputTokens: 0 }), 'generation_config.max_output_tokens: max_output_tokens must be positive.'],
      ['a temperature not a number', config({ temperature: 'hot' }), 'Invalid value at \'generation_config.temperature\' (TYPE_FLOAT), "hot"'],
      ['an unknown response mime type', config({ responseMimeType: 'text/html' }), 'generation_config.response_mime_type: allowed mimetypes are'],
      ['a thinking budget under -1', config({ thinkingConfig: { thinkingBudget: -2 } }), 'generation_config.thinking_config.thinking_budget:'],
    ])('should answer 400 INVALID_ARGUMENT for %s, and not consume the turn', async (_name, body, message) => {
      await start({ script: [{ text: 'never served' }] });
      const res = await post(PATH, body);
      const error = (await res.json()) as GoogleError;
      expect([res.status, error.error.code, error.error.status]).toEqual([400, 400, 'INVALID_ARGUMENT']);
      expect(error.error.message).toContain(message);
      expect((await generate()).text).toBe('never served');
    });

    it('should answer 400 to a body that is not JSON', async () => {
      await start({ script: [] });
      const res = await fetch(`${emu.baseUrl}${PATH}`, { method: 'POST', headers: { 'x-goog-api-key': KEY }, body: '{bad' });
      expect([res.status, ((await res.json()) as GoogleError).error.message]).toEqual([400, 'Invalid JSON payload received. Unexpected token.']);
    });
  });

  describe('with a JSON response schema', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    it('should accept it with responseMimeType application/json, and refuse it with text/plain or when it is not an object', async () => {
      await start({ script: [{ text: '{"city":"Oslo"}' }] });
      const json = (responseMimeType: string, responseJsonSchema: unknown) =>
        params(ask('q'), { responseMimeType, responseJsonSchema, temperature: 0, topP: 1 });
      const plain = await ai.models.generateContent(json('text/plain', schema)).catch((e: unknown) => e);
      expect((plain as ApiError).status).toBe(400);
      expect(errorBody(plain).error.message).toBe(
        '* GenerateContentRequest.generation_config.response_json_schema: `response_json_schema` is only supported with `response_mime_type` `application/json`.\n',
      );
      const notObject = await ai.models.generateContent(json('application/json', 'city')).catch((e: unknown) => e);
      expect(errorBody(notObject).error.message).toContain('generation_config.response_json_schema: the schema must be a JSON object.');
      const response = await ai.models.generateContent(json('application/json', schema));
      expect(JSON.parse(response.text!)).toEqual({ city: 'Oslo' });
      expect(emu.requests[2]!.body).toMatchObject({ generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } });
    });
  });

  describe('requests the emulator does not serve', () => {
    it('should answer a wrong key 400 "API key not valid", a missing one 403, and take the key from ?key= too', async () => {
      await start({ script: [{ text: 'by query' }] });
      const error = await client('AIza-wrong')
        .models.generateContent(params(ask('q')))
        .catch((e: unknown) => e);
      expect((error as ApiError).status).toBe(400);
      expect(errorBody(error).error).toMatchObject({
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [expect.objectContaining({ reason: 'API_KEY_INVALID' }), expect.objectContaining({ locale: 'en-US' })],
      });
      const missing = await post(PATH, { contents: ask('q') }, {});
      expect([missing.status, ((await missing.json()) as GoogleError).error.status]).toEqual([403, 'PERMISSION_DENIED']);
      expect((await post(`${PATH}?key=${KEY}`, { contents: ask('q') }, {})).status).toBe(200);
      expect(emu.requests[2]!.query).toEqual({ key: '[redacted]' });
    });

    it('should answer 400 once the script is exhausted, and 404 NOT_FOUND to another path without counting it', async () => {
      await start({ script: [], faults: { 1: { kind: 'status', status: 500 } } });
      expect(errorBody(await failure()).error.message).toContain('Emulator script exhausted');
      const res = await post(`/v1beta/models/${MODEL}:countTokens`, { contents: ask('q') });
      expect([res.status, ((await res.json()) as GoogleError).error.status, emu.requests[1]!.call]).toEqual([404, 'NOT_FOUND', undefined]);
      expect(((await failure()) as ApiError).status).toBe(500);
    });
  });

  describe('with recordLimit', () => {
    it('should keep only the most recent requests, their index still counting every one', async () => {
      await start({ script: Array.from({ length: 4 }, (_, i) => ({ text: `answer ${i}` })), recordLimit: 2 });
      for (let i = 0; i < 4; i++) await generate(`hello ${i}`);
      expect(emu.requests.map((r) => [r.index, (r.body as { contents: Content[] }).contents[0]!.parts![0]!.text])).toEqual([
        [2, 'hello 2'],
        [3, 'hello 3'],
      ]);
    });
  });

  describe('faults', () => {
    describe.each([429, 500, 503])('when the plan answers %d with retryAfter', (status) => {
      it('should send the status, a Google error body with RetryInfo and the retry-after header, and not consume the turn', async () => {
        const faults: GeminiEmulatorOptions['faults'] = { 0: { kind: 'status', status, retryAfter: 3 } };
        await start({ script: [{ text: 'after the errors' }], faults });
        const error = await failure();
        expect((error as ApiError).status).toBe(status);
        const names: Record<number, string> = { 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };
        expect(errorBody(error).error).toEqual({
          code: status,
          message: expect.any(String),
          status: names[status],
          details: [expect.objectContaining({ retryDelay: '3s' })],
        });
        faults[1] = { kind: 'status', status, retryAfter: 7 }; // the plan is read per request
        const raw = await post(PATH, { contents: ask('q') });
        expect([raw.status, raw.headers.get('retry-after')]).toEqual([status, '7']);
        expect((await generate()).text).toBe('after the errors');
      });
    });

    it('should hang a request until the client leaves, record the abort, and not consume the turn', async () => {
      await start({ script: [{ text: 'later' }], faults: { 0: { kind: 'hang' } } });
      const controller = new AbortController();
      const pending = ai.models.generateContent({ ...params(ask('q')), config: { abortSignal: controller.signal } });
      await emu.waitForRequest(0);
      controller.abort();
      await expect(pending).rejects.toThrow();
      expect(await emu.waitForClose(0)).toMatchObject({ status: 0, clientAborted: true, eventsSent: 0 });
      expect((await generate()).text).toBe('later');
    });

    it('should stall a stream after the planned chunks until the client aborts, and a non-streamed answer after its head', async () => {
      await start({
        script: [{ text: 'one two three four five six' }],
        faults: { 0: { kind: 'stall', afterEvents: 2 }, 1: { kind: 'stall', afterEvents: 0 } },
      });
      const streaming = new AbortController();
      const stream = await ai.models.generateContentStream({ ...params(ask('q')), config: { abortSignal: streaming.signal } });
      const seen: string[] = [];
      const read = async (): Promise<void> => {
        for await (const chunk of stream) if (seen.push(chunk.text!) === 2) streaming.abort();
      };
      const error = await read().catch((e: unknown) => e);
      expect([seen, (error as Error).name]).toEqual([['one two ', 'three four '], 'AbortError']);
      expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: true, eventsSent: 2 });
      const whole = new AbortController();
      expect((await post(PATH, { contents: ask('q') }, undefined, whole.signal)).status).toBe(200);
      whole.abort();
      expect(await emu.waitForClose(1)).toMatchObject({ status: 200, clientAborted: true });
      expect((await generate()).text).toBe('one two three four five six');
    });

    describe.each<[GeminiEmulatorFault['kind'], (e: unknown) => void, object, (e: unknown) => void]>([
      ['drop', (e) => expect(String(e)).toContain('terminated'), { clientAborted: true, eventsSent: 2 }, (e) => expect(String(e)).toContain('fetch failed')],
      [
        'error_event',
        (e) => expect([(e as ApiError).status, (e as ApiError).message]).toEqual([503, expect.stringContaining('"status":"UNAVAILABLE"')]),
        { clientAborted: false, eventsSent: 3 },
        (e) => expect([(e as ApiError).status, errorBody(e).error.message]).toEqual([503, 'The model is overloaded. Please try again later.']),
      ],
      [
        'malformed_event',
        (e) => expect((e as Error).name).toBe('SyntaxError'),
        { clientAborted: false, eventsSent: 4 },
        (e) => expect((e as Error).name).toBe('SyntaxError'),
      ],
    ])('when the plan injects %s after 2 chunks', (kind, streamError, record, wholeError) => {
      it('should end the client stream with an error after those chunks, do its nearest equivalent unstreamed, and not consume the turn', async () => {
        const faults = { 0: { kind, afterEvents: 2 } as GeminiEmulatorFault, 1: { kind, afterEvents: 0 } as GeminiEmulatorFault };
        await start({ script: [{ text: 'one two three four five six' }], faults });
        const { chunks, error } = await collect(await ai.models.generateContentStream(params(ask('q'))));
        expect(texts(chunks)).toEqual(['one two ', 'three four ']);
        streamError(error);
        expect(await emu.waitForClose(0)).toMatchObject(record);
        wholeError(await failure());
        const { chunks: whole } = await collect(await ai.models.generateContentStream(params(ask('q'))));
        expect(texts(whole).join('')).toBe('one two three four five six');
      });
    });
  });
});
