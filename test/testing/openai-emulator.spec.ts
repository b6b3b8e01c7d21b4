import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/index.js';

const tools: ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
  { type: 'function', function: { name: 'get_time', description: 'Current time', parameters: { type: 'object', properties: {} } } },
];

/** Checked with the official `openai` client, which no one here wrote. */
describe('startOpenAiEmulator', () => {
  let emu: OpenAiEmulator;
  let client: OpenAI;

  afterEach(async () => {
    await emu.close();
  });

  async function start(opts: Parameters<typeof startOpenAiEmulator>[0]): Promise<void> {
    emu = await startOpenAiEmulator(opts);
    client = new OpenAI({ baseURL: emu.baseUrl, apiKey: 'test', maxRetries: 0 });
  }

  describe('POST /v1/chat/completions', () => {
    describe('when called non-streaming with tools, and the script answers with two parallel calls', () => {
      it('should return an OpenAI chat.completion the client parses', async () => {
        await start({
          script: [
            {
              toolCalls: [
                { id: 'call_a', name: 'get_weather', arguments: { city: 'Oslo' } },
                { name: 'get_time', arguments: {} },
              ],
              usage: { prompt_tokens: 11, completion_tokens: 7 },
            },
          ],
        });
        const completion = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'weather and time?' }], tools });
        expect(completion.object).toBe('chat.completion');
        expect(completion.model).toBe('m1');
        expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
        const calls = completion.choices[0]!.message.tool_calls!;
        expect(calls.map((c) => (c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : c.type))).toEqual([
          ['call_a', 'get_weather', { city: 'Oslo' }],
          ['call_e0_1', 'get_time', {}],
        ]);
        expect(completion.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
        expect(emu.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', status: 200, headers: { authorization: 'Bearer [redacted]' } });
        expect(emu.requests[0]!.body).toMatchObject({ model: 'm1', tools });
      });
    });

    describe('when called streaming with include_usage, and the script answers with text', () => {
      it('should stream chat.completion.chunk deltas, a usage chunk with empty choices, then end', async () => {
        await start({ script: [{ text: 'Hello there, this is a streamed answer.' }] });
        const stream = await client.chat.completions.create({
          model: 'm1',
          messages: [{ role: 'user', content: 'hi' }],
          stream: true,
          stream_options: { include_usage: true },
        });
        const chunks: ChatCompletionChunk[] = [];
        for await (const c of stream) chunks.push(c);
        expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0]!.id)).toBe(true);
        const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).filter((t) => t !== '');
        expect(deltas.length).toBeGreaterThan(2);
        expect(deltas.join('')).toBe('Hello there, this is a streamed answer.');
        const last = chunks[chunks.length - 1]!;
        expect(last.choices).toEqual([]);
        expect(last.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
        expect(chunks[chunks.length - 2]!.choices[0]!.finish_reason).toBe('stop');
      });
    });

    describe('when streamed through the client helper with interleaved parallel tool calls and quirks', () => {
      it('should assemble a final completion with both calls intact', async () => {
        await start({
          script: [
            {
              toolCalls: [
                { name: 'get_weather', arguments: { city: 'Lima' } },
                { name: 'get_time', arguments: { tz: 'UTC' } },
              ],
            },
          ],
          quirks: { interleaveParallelToolCalls: true },
        });
        const final = await client.chat.completions
          .stream({ model: 'm1', messages: [{ role: 'user', content: 'x' }], tools, stream_options: { include_usage: true } })
          .finalChatCompletion();
        const calls = final.choices[0]!.message.tool_calls!;
        expect(calls.map((c) => (c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : c.type))).toEqual([
          ['call_e0_0', 'get_weather', { city: 'Lima' }],
          ['call_e0_1', 'get_time', { tz: 'UTC' }],
        ]);
        expect(final.choices[0]!.finish_reason).toBe('tool_calls');
        expect(final.usage?.total_tokens).toBeGreaterThan(0);
      });
    });

    describe('when a tool_call id is left unanswered before the next message', () => {
      it('should answer 400 with an OpenAI error body, like OpenAI', async () => {
        await start({ script: [{ text: 'never served' }] });
        const messages: ChatCompletionMessageParam[] = [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } },
              { id: 'c2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'noon' },
          { role: 'user', content: 'next' },
        ];
        const error = await client.chat.completions.create({ model: 'm1', messages, tools }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('c2');
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'messages.[3].role' });
      });
    });

    describe('when a tool_call id is answered twice', () => {
      it('should answer 400', async () => {
        await start({ script: [{ text: 'never served' }] });
        const messages: ChatCompletionMessageParam[] = [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'noon' },
          { role: 'tool', tool_call_id: 'c1', content: 'noon again' },
        ];
        await expect(client.chat.completions.create({ model: 'm1', messages, tools })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
      });
    });

    describe('when every tool_call id is answered once', () => {
      it('should accept the history and serve the next turn', async () => {
        await start({ script: [{ text: 'done' }] });
        const messages: ChatCompletionMessageParam[] = [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'noon' },
        ];
        const completion = await client.chat.completions.create({ model: 'm1', messages, tools });
        expect(completion.choices[0]!.message.content).toBe('done');
      });
    });

    describe('when two calls of one assistant message share an id (a server that reuses ids)', () => {
      it('should want one tool message per call: 400 with one, the next turn with two', async () => {
        await start({ script: [{ text: 'done' }] });
        const call = (city: string) => ({ id: 'same', type: 'function' as const, function: { name: 'get_weather', arguments: JSON.stringify({ city }) } });
        const asked: ChatCompletionMessageParam[] = [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [call('Oslo'), call('Rome')] },
          { role: 'tool', tool_call_id: 'same', content: 'cold' },
        ];
        await expect(client.chat.completions.create({ model: 'm1', messages: asked, tools })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
        const completion = await client.chat.completions.create({
          model: 'm1',
          messages: [...asked, { role: 'tool', tool_call_id: 'same', content: 'warm' }],
          tools,
        });
        expect(completion.choices[0]!.message.content).toBe('done');
      });
    });

    describe('when the script answers with no choices', () => {
      it('should send choices: [] whole, and streamed only the usage chunk', async () => {
        await start({ script: [{ noChoices: true }, { noChoices: true }] });
        const completion = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'q' }] });
        expect(completion.choices).toEqual([]);
        const stream = await client.chat.completions.create({
          model: 'm1',
          messages: [{ role: 'user', content: 'q' }],
          stream: true,
          stream_options: { include_usage: true },
        });
        const chunks: ChatCompletionChunk[] = [];
        for await (const c of stream) chunks.push(c);
        expect(chunks.map((c) => [c.choices, c.usage?.total_tokens !== undefined])).toEqual([[[], true]]);
      });
    });

    describe('when the fault plan answers 429 with Retry-After', () => {
      it('should send the status, the header and an OpenAI error body, and not consume the turn', async () => {
        await start({ script: [{ text: 'after the limit' }], faults: { 0: { kind: 'status', status: 429, retryAfter: 1 } } });
        const error = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'q' }] }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.RateLimitError);
        const e = error as InstanceType<typeof OpenAI.RateLimitError>;
        expect(e.headers.get('retry-after')).toBe('1');
        expect(e.error).toMatchObject({ code: 'rate_limit_exceeded' });
        const ok = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'q' }] });
        expect(ok.choices[0]!.message.content).toBe('after the limit');
      });
    });

    describe('when the script is exhausted', () => {
      it('should answer an explicit error instead of inventing a turn', async () => {
        await start({ script: [] });
        const error = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'q' }] }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(String((error as Error).message)).toContain('script exhausted');
      });
    });

    describe('when the emulator requires an API key and the client sends a wrong one', () => {
      it('should answer 401', async () => {
        emu = await startOpenAiEmulator({ script: [{ text: 'x' }], apiKey: 'right' });
        const wrong = new OpenAI({ baseURL: emu.baseUrl, apiKey: 'wrong', maxRetries: 0 });
        await expect(wrong.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'q' }] })).rejects.toBeInstanceOf(
          OpenAI.AuthenticationError,
        );
      });
    });
  });

  describe('GET /v1/models', () => {
    describe('when listed with the client', () => {
      it('should return an OpenAI model list', async () => {
        await start({ model: 'demo' });
        const page = await client.models.list();
        expect(page.data.map((m) => [m.id, m.object])).toEqual([['demo', 'model']]);
      });
    });
  });

  describe('with recordLimit', () => {
    it('should keep only the most recent requests, their index still counting every one', async () => {
      await start({ model: 'demo', recordLimit: 2 });
      for (let i = 0; i < 5; i++) await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: `hello ${i}` }] });
      expect(emu.requests.map((r) => r.index)).toEqual([3, 4]);
      expect((emu.requests[1]!.body as { messages: { content: string }[] }).messages[0]!.content).toBe('hello 4');
    });
  });

  describe('faults', () => {
    describe('when a stream stalls and the client gives up', () => {
      it('should keep the socket open until the client aborts, and record the abort', async () => {
        await start({ script: [{ text: 'one two three four five six seven eight' }], faults: { 0: { kind: 'stall', afterChunks: 2 } } });
        const controller = new AbortController();
        const stream = await client.chat.completions.create(
          { model: 'm1', messages: [{ role: 'user', content: 'q' }], stream: true },
          { signal: controller.signal },
        );
        const seen: ChatCompletionChunk[] = [];
        const consumed = (async () => {
          for await (const c of stream) {
            seen.push(c);
            if (seen.length === 2) controller.abort();
          }
        })();
        // The client ends the iteration (quietly or with an abort error) once aborted.
        await consumed.catch(() => undefined);
        expect(seen).toHaveLength(2);
        const closed = await emu.waitForClose(0);
        expect(closed).toMatchObject({ clientAborted: true, chunksSent: 2 });
      });
    });

    describe('when a malformed chunk is injected', () => {
      it('should make the official client fail to parse the stream', async () => {
        await start({ script: [{ text: 'a b c d' }], faults: { 0: { kind: 'malformed_chunk', afterChunks: 1 } } });
        const logged: unknown[][] = [];
        const record = (...args: unknown[]): void => void logged.push(args);
        client = new OpenAI({ baseURL: emu.baseUrl, apiKey: 'test', maxRetries: 0, logger: { error: record, warn: record, info: record, debug: record } });
        const stream = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'q' }], stream: true });
        const consumed = (async () => {
          for await (const _c of stream) {
            // drain
          }
        })();
        await expect(consumed).rejects.toThrow();
        expect(JSON.stringify(logged)).toContain('this is not json');
      });
    });

    describe('when the fault plan answers with a foreign body', () => {
      it('should send it verbatim with its content type and status 200, and not consume the turn', async () => {
        const page = '<!doctype html><title>Web UI</title>';
        await start({ script: [{ text: 'served later' }], faults: { 0: { kind: 'body', contentType: 'text/html', body: page } } });
        const res = await fetch(`${emu.baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm1', messages: [{ role: 'user', content: 'q' }] }),
        });
        expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([200, 'text/html', page]);
        const completion = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'q' }] });
        expect(completion.choices[0]!.message.content).toBe('served later');
      });
    });

    describe('when the fault plan streams an unbounded frame', () => {
      it('should send the chunks before it, then frame data without any line break, and keep the socket open', async () => {
        await start({ script: [{ text: 'one two three' }], faults: { 0: { kind: 'unbounded_frame', afterChunks: 1, bytes: 300_000 } } });
        const controller = new AbortController();
        const res = await fetch(`${emu.baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm1', messages: [{ role: 'user', content: 'q' }], stream: true }),
          signal: controller.signal,
        });
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        let text = '';
        while (text.length < 300_000) {
          const { value, done } = await reader.read();
          expect(done).toBe(false);
          text += decoder.decode(value, { stream: true });
        }
        const frames = text.split('\n\n');
        expect(frames).toHaveLength(2);
        expect(JSON.parse(frames[0]!.slice('data: '.length))).toMatchObject({ object: 'chat.completion.chunk' });
        expect(frames[1]!.startsWith('data: {"id":"')).toBe(true);
        expect(frames[1]).not.toMatch(/[\r\n]/);
        expect(emu.requests[0]).toMatchObject({ chunksSent: 1, closed: false });
        controller.abort();
        expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: true });
      });
    });
  });
});
