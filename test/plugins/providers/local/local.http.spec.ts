import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { lastValueFrom, toArray } from 'rxjs';
import { AgentRxError } from '../../../../src/core/errors.js';
import { HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec, RawEvent } from '../../../../src/core/model.js';
import { LocalProviderOptionsClass } from '../../../../src/plugins/providers/local/local.config.js';
import { LocalAgentProvider, type LocalConn } from '../../../../src/plugins/providers/local/local.provider.js';
import { startOpenAiEmulator, type OpenAiEmulator, type OpenAiEmulatorOptions } from '../../../../src/testing/index.js';
import { failure } from '../../../fakes/failure.js';
import { hostText } from '../host-text.js';

const spec: AgentSpec = { name: 'a', tools: [] };
const SECRET = 'sk-local-secret-4242';

describe('LocalAgentProvider over HTTP', () => {
  let emu: OpenAiEmulator | undefined;
  let logger: MemoryLogger;

  beforeEach(() => {
    logger = new MemoryLogger();
  });

  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  async function setup(
    emuOpts: OpenAiEmulatorOptions,
    overrides: Partial<LocalProviderOptionsClass> = {},
  ): Promise<{ provider: LocalAgentProvider; conn: LocalConn; emu: OpenAiEmulator }> {
    const e = await startOpenAiEmulator(emuOpts);
    emu = e;
    const options = Object.assign(new LocalProviderOptionsClass(), { baseUrl: e.baseUrl, retryBaseMs: 1, model: 'm' }, overrides);
    const provider = new LocalAgentProvider(options, new HttpClientFactoryImpl(), logger);
    const conn = await provider.open({ spec, signal: new AbortController().signal });
    return { provider, conn, emu: e };
  }

  function run(provider: LocalAgentProvider, conn: LocalConn, prompt = 'hi'): Promise<RawEvent[]> {
    return lastValueFrom(provider.pollTurn(conn, provider.kickoffInput({ prompt })).pipe(toArray()));
  }

  const completions = (e: OpenAiEmulator): number => e.requests.filter((r) => r.completion !== undefined).length;

  describe('retries', () => {
    describe('when the endpoint answers 429 with Retry-After', () => {
      it('should wait the Retry-After delay instead of the backoff, then succeed', async () => {
        // A one-minute backoff base: only an honoured Retry-After (50 ms) lets this finish in time.
        const { provider, conn, emu } = await setup(
          { script: [{ text: 'after the limit' }], faults: { 0: { kind: 'status', status: 429, retryAfter: '0.05' } } },
          { retryBaseMs: 60_000 },
        );
        const turn = provider.normalize(await run(provider, conn));
        expect(turn.text).toBe('after the limit');
        expect(completions(emu)).toBe(2);
        const warn = logger.lines.find((l) => l.level === 'warn');
        expect(warn?.fields).toMatchObject({ retry: 1, delayMs: 50, fromRetryAfter: true });
      });
    });

    describe('when the endpoint answers 503', () => {
      it('should retry with backoff and succeed, in streaming and non-streaming mode', async () => {
        for (const stream of [true, false]) {
          const { provider, conn, emu } = await setup({ script: [{ text: 'ok' }], faults: { 0: { kind: 'status', status: 503 } } }, { stream });
          expect(provider.normalize(await run(provider, conn)).text).toBe('ok');
          expect(completions(emu)).toBe(2);
          await emu.close();
        }
      });
    });

    describe('when the endpoint keeps failing with 5xx', () => {
      it('should give up after maxRetries with an http_error naming the status', async () => {
        const { provider, conn, emu } = await setup(
          { script: [{ text: 'never' }], faults: { 0: { kind: 'status', status: 500 }, 1: { kind: 'status', status: 502 } } },
          { maxRetries: 1 },
        );
        const e = await failure(run(provider, conn));
        expect(e.code).toBe('http_error');
        expect(e.details).toMatchObject({ status: 502 });
        expect(completions(emu)).toBe(2);
      });
    });

    describe('when the endpoint answers 400', () => {
      it('should not retry', async () => {
        const { provider, conn, emu } = await setup({ script: [{ text: 'never' }], faults: { 0: { kind: 'status', status: 400 } } });
        const e = await failure(run(provider, conn));
        expect(e).toMatchObject({ code: 'http_error', details: { status: 400 } });
        expect(completions(emu)).toBe(1);
      });
    });

    describe('when the endpoint rejects the API key (401)', () => {
      it('should not retry, name status, URL and a hint, and never reveal the key', async () => {
        const { provider, conn, emu } = await setup({ script: [{ text: 'never' }], apiKey: 'the-right-key' }, { apiKey: SECRET });
        const e = await failure(run(provider, conn));
        expect(e.code).toBe('http_error');
        expect(e.message).toContain('HTTP 401');
        expect(e.message).toContain(`${emu.baseUrl}/chat/completions`);
        expect(e.message).toContain('apiKey');
        expect(completions(emu)).toBe(1);
        expect(emu.requests[0]!.headers['authorization']).toBe('Bearer [redacted]');
        expect(`${e.message} ${inspect(e, { depth: 10 })} ${JSON.stringify(e.details)}`).not.toContain(SECRET);
        expect(JSON.stringify(logger.lines)).not.toContain(SECRET);
      });
    });

    describe('when the model does not exist (404)', () => {
      it('should say so and hint at baseUrl and pulling the model', async () => {
        const { provider, conn } = await setup({ script: [{ text: 'never' }], faults: { 0: { kind: 'status', status: 404 } } }, { model: 'llama-missing' });
        const e = await failure(run(provider, conn));
        expect(e.message).toContain('HTTP 404');
        expect(e.message).toContain('llama-missing');
        expect(e.message).toContain('/v1');
        expect(e.message).toContain('ollama pull');
      });
    });

    describe('when the stream breaks before its first chunk', () => {
      it('should retry the whole call, emitting each chunk once', async () => {
        const { provider, conn, emu } = await setup({ script: [{ text: 'one two three four' }], faults: { 0: { kind: 'drop', afterChunks: 0 } } });
        const events = await run(provider, conn);
        expect(completions(emu)).toBe(2);
        const text = events.map((e) => hostText(provider.decode(conn, e))?.text ?? '').join('');
        expect(text).toBe('one two three four');
      });
    });

    describe('when the response headers never come', () => {
      it('should time out per attempt, retry, then fail with timeout', async () => {
        const { provider, conn, emu } = await setup(
          { script: [{ text: 'never' }], faults: { 0: { kind: 'hang' }, 1: { kind: 'hang' } } },
          { requestTimeoutMs: 100, maxRetries: 1 },
        );
        const e = await failure(run(provider, conn));
        expect(e).toMatchObject({ code: 'timeout', details: { kind: 'request' } });
        expect(completions(emu)).toBe(2);
      });
    });
  });

  describe('stream failures', () => {
    describe('when the connection drops mid-stream', () => {
      it('should fail with stream_error after the emitted chunks and not retry', async () => {
        const { provider, conn, emu } = await setup({
          script: [{ text: 'one two three four five six seven eight' }],
          faults: { 0: { kind: 'drop', afterChunks: 3 } },
        });
        const seen: RawEvent[] = [];
        const done = new Promise<unknown>((resolve) => {
          provider
            .pollTurn(conn, provider.kickoffInput({ prompt: 'x' }))
            .subscribe({ next: (e) => seen.push(e), error: resolve, complete: () => resolve(undefined) });
        });
        const e = (await done) as AgentRxError;
        expect(e).toBeInstanceOf(AgentRxError);
        expect(e).toMatchObject({ code: 'stream_error', details: { chunks: 3 } });
        expect(seen.map((x) => x['type'])).toEqual(['local.chunk', 'local.chunk', 'local.chunk']);
        expect(completions(emu)).toBe(1);
        expect(provider.transcript(conn)).toEqual([]);
      });
    });

    describe('when a chunk is not JSON', () => {
      it('should fail with stream_error and not retry', async () => {
        const { provider, conn, emu } = await setup({ script: [{ text: 'a b c d' }], faults: { 0: { kind: 'malformed_chunk', afterChunks: 1 } } });
        const e = await failure(run(provider, conn));
        expect(e.code).toBe('stream_error');
        expect(e.message).toContain('malformed chunk');
        expect(completions(emu)).toBe(1);
      });
    });

    describe('when the stream stalls longer than idleTimeoutMs', () => {
      it('should fail with timeout and close the connection', async () => {
        const { provider, conn, emu } = await setup(
          { script: [{ text: 'one two three four five six' }], faults: { 0: { kind: 'stall', afterChunks: 2 } } },
          { idleTimeoutMs: 150 },
        );
        const e = await failure(run(provider, conn));
        expect(e).toMatchObject({ code: 'timeout', details: { kind: 'idle', chunks: 2 } });
        expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: true, chunksSent: 2 });
        expect(completions(emu)).toBe(1);
      });
    });
  });

  describe('unclear outcomes', () => {
    const page = '<!doctype html><html><head><title>Open WebUI</title></head><body>app</body></html>';

    describe('when the endpoint answers HTTP 200 with an HTML page', () => {
      it('should fail at once with the status, the content type and a baseUrl hint, streamed and not', async () => {
        for (const stream of [true, false]) {
          const { provider, conn, emu } = await setup(
            { script: [{ text: 'never' }], faults: { 0: { kind: 'body', contentType: 'text/html; charset=utf-8', body: page } } },
            { stream },
          );
          const e = await failure(run(provider, conn));
          expect([stream, e.code]).toEqual([stream, 'http_error']);
          expect(e.message).toContain("HTTP 200 with content-type 'text/html; charset=utf-8'");
          expect(e.message).toContain('is baseUrl pointing at the API, including /v1?');
          expect(e.message).not.toContain('Open WebUI');
          expect(e.details).toMatchObject({ status: 200, contentType: 'text/html; charset=utf-8', transient: false });
          expect(completions(emu)).toBe(1);
          await emu.close();
        }
      });
    });

    describe('when a streamed request is answered 200 with a body that is neither JSON nor an event stream', () => {
      it('should fail without retrying and name the content type', async () => {
        const { provider, conn, emu } = await setup({
          script: [{ text: 'never' }],
          faults: { 0: { kind: 'body', contentType: 'text/plain', body: 'Ollama is running' } },
        });
        const e = await failure(run(provider, conn));
        expect(e.code).toBe('stream_error');
        expect(e.message).toContain("content-type was 'text/plain', not text/event-stream");
        expect(e.details).toMatchObject({ chunks: 0, transient: false });
        expect(completions(emu)).toBe(1);
      });
    });

    describe('when the completion has no choices', () => {
      it('should fail with provider_error and reason no_choices, not retried, streamed and not', async () => {
        for (const stream of [true, false]) {
          const { provider, conn, emu } = await setup({ script: [{ noChoices: true }, { text: 'never' }] }, { stream });
          const e = await failure(run(provider, conn));
          expect([stream, e.code]).toEqual([stream, 'provider_error']);
          expect(e.message).toContain('returned a completion with no choices');
          expect(e.details).toMatchObject({ reason: 'no_choices', transient: false });
          expect(completions(emu)).toBe(1);
          expect(provider.transcript(conn)).toEqual([]);
          await emu.close();
        }
      });
    });
  });

  describe('frame cap', () => {
    describe('when a frame grows past maxFrameBytes without ending', () => {
      it('should fail with stream_error naming the limit and the option, close the connection and not retry', async () => {
        // Without the cap this would wait for the (one-minute) idle timeout while the frame grows.
        const { provider, conn, emu } = await setup(
          { script: [{ text: 'one two three' }], faults: { 0: { kind: 'unbounded_frame', afterChunks: 2, bytes: 4 * 1024 * 1024 } } },
          { maxFrameBytes: 256 * 1024, idleTimeoutMs: 60_000 },
        );
        const e = await failure(run(provider, conn));
        expect(e.code).toBe('stream_error');
        expect(e.message).toMatch(/^an SSE frame exceeded maxFrameBytes \(262144 bytes\); /);
        expect(e.message).toContain('providers.local.maxFrameBytes');
        expect(e.details).toMatchObject({ chunks: 2, maxFrameBytes: 262_144, transient: false });
        expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: true });
        expect(completions(emu)).toBe(1);
      });
    });

    describe('when frames stay under maxFrameBytes', () => {
      it('should read the stream as usual', async () => {
        const text = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
        const { provider, conn } = await setup({ script: [{ text }] }, { maxFrameBytes: 1024 });
        expect(provider.normalize(await run(provider, conn)).text).toBe(text);
      });
    });
  });

  describe('cancellation', () => {
    describe('when the subscriber unsubscribes mid-stream', () => {
      it('should abort the request (the emulator sees the socket close) and leave the history untouched', async () => {
        const { provider, conn, emu } = await setup({ script: [{ text: 'one two three four five six' }], faults: { 0: { kind: 'stall', afterChunks: 2 } } });
        const chunks: RawEvent[] = [];
        const turn$ = provider.pollTurn(conn, provider.kickoffInput({ prompt: 'x' }));
        let resolveSecond!: () => void;
        const second = new Promise<void>((r) => (resolveSecond = r));
        const sub = turn$.subscribe((e) => {
          chunks.push(e);
          if (chunks.length === 2) resolveSecond();
        });
        await second;
        sub.unsubscribe();
        expect(await emu.waitForClose(0)).toMatchObject({ clientAborted: true });
        expect(provider.transcript(conn)).toEqual([]);
      });
    });

    describe('when the session signal aborts mid-stream', () => {
      it('should error with cancelled and close the connection', async () => {
        const e = await startOpenAiEmulator({ script: [{ text: 'one two three four five six' }], faults: { 0: { kind: 'stall', afterChunks: 1 } } });
        emu = e;
        const provider = new LocalAgentProvider(Object.assign(new LocalProviderOptionsClass(), { baseUrl: e.baseUrl }), new HttpClientFactoryImpl(), logger);
        const controller = new AbortController();
        const conn = await provider.open({ spec, signal: controller.signal });
        let onFirst!: () => void;
        const first = new Promise<void>((r) => (onFirst = r));
        const result = new Promise<unknown>((resolve) => {
          provider
            .pollTurn(conn, provider.kickoffInput({ prompt: 'x' }))
            .subscribe({ next: () => onFirst(), error: resolve, complete: () => resolve(undefined) });
        });
        await first;
        controller.abort();
        expect(await result).toMatchObject({ code: 'cancelled' });
        expect(await e.waitForClose(0)).toMatchObject({ clientAborted: true });
      });
    });

    describe('when the conn is closed', () => {
      it('should refuse further polls with session_closed', async () => {
        const { provider, conn } = await setup({ script: [{ text: 'x' }] });
        provider.close(conn);
        expect(await failure(run(provider, conn))).toMatchObject({ code: 'session_closed' });
      });
    });
  });

  describe('a server that ignores stream: true', () => {
    describe('when it answers a streamed request with a whole JSON completion', () => {
      it('should accept it and report its text once, from the model response', async () => {
        const server = createHttpServer((req, res) => {
          req.resume();
          req.on('end', () => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({
                id: 'x',
                object: 'chat.completion',
                choices: [{ index: 0, message: { role: 'assistant', content: 'whole answer' }, finish_reason: 'stop' }],
                usage: { prompt_tokens: 3, completion_tokens: 2 },
              }),
            );
          });
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        try {
          const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
          const provider = new LocalAgentProvider(Object.assign(new LocalProviderOptionsClass(), { baseUrl }), new HttpClientFactoryImpl(), logger);
          const conn = await provider.open({ spec, signal: new AbortController().signal });
          const events = await run(provider, conn);
          expect(events.map((e) => e['type'])).toEqual(['local.model_response']);
          expect(events.map((e) => hostText(provider.decode(conn, e))?.text)).toEqual(['whole answer']);
          expect(provider.normalize(events)).toMatchObject({ terminal: 'end_turn', text: 'whole answer', usage: { inputTokens: 3, outputTokens: 2 } });
        } finally {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          });
        }
      });
    });
  });

  describe('a server that sends decoded (object) arguments', () => {
    describe('when they are nested 5,000 levels deep, in a whole completion', () => {
      it('should surface the call with an inputError naming the depth limit instead of failing the turn', async () => {
        const args = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
        const server = createHttpServer((req, res) => {
          req.resume();
          req.on('end', () => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(
              `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"d","type":"function","function":{"name":"echo","arguments":${args}}}]},"finish_reason":"tool_calls"}]}`,
            );
          });
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        try {
          const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
          const provider = new LocalAgentProvider(
            Object.assign(new LocalProviderOptionsClass(), { baseUrl, stream: false }),
            new HttpClientFactoryImpl(),
            logger,
          );
          const conn = await provider.open({ spec, signal: new AbortController().signal });
          const turn = provider.normalize(await run(provider, conn));
          expect(turn).toMatchObject({
            terminal: 'requires_action',
            customToolUses: [{ id: 'd', name: 'echo', input: {}, inputError: 'Tool arguments are nested deeper than 64 levels.' }],
          });
          const assistant = provider.transcript(conn).find((m) => m['role'] === 'assistant')!;
          expect((assistant['tool_calls'] as { function: { arguments: string } }[])[0]!.function.arguments).toBe(args);
        } finally {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          });
        }
      });
    });
  });

  describe('connection refused', () => {
    describe('when nothing listens at baseUrl', () => {
      it('should fail with an error naming the base URL', async () => {
        const port = await freePort();
        const baseUrl = `http://127.0.0.1:${port}/v1`;
        const provider = new LocalAgentProvider(
          Object.assign(new LocalProviderOptionsClass(), { baseUrl, maxRetries: 1, retryBaseMs: 1 }),
          new HttpClientFactoryImpl(),
          logger,
        );
        const conn = await provider.open({ spec, signal: new AbortController().signal });
        const e = await failure(run(provider, conn));
        expect(e.code).toBe('http_error');
        expect(e.message).toContain(baseUrl);
        expect(e.message).toContain('connection refused');
        expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
      });
    });
  });
});

/** A loopback port that nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
