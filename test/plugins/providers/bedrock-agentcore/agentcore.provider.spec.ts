import { inspect } from 'node:util';
import { jest } from '@jest/globals';
import { AgentRxError } from '../../../../src/core/errors.js';
import type { RawEvent } from '../../../../src/core/model.js';
import { ATTEMPT_FAILED, STREAM_EXCEPTION } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore.provider.js';
import { startAgentCoreEmulator, type AgentCoreEmulator, type AgentCoreEmulatorOptions } from '../../../../src/testing/agentcore-emulator.js';
import { CREDS, HARNESS_ARN, collect, kinds, makeProvider, open } from './helpers.js';
import { hostText } from '../host-text.js';

type Body = { messages: { role: string; content: Record<string, unknown>[] }[]; [k: string]: unknown };

describe('AgentCoreAgentProvider', () => {
  let emulator: AgentCoreEmulator;
  let stopProvider: (() => void) | undefined;

  async function setup(opts: AgentCoreEmulatorOptions, extra: Record<string, unknown> = {}) {
    emulator = await startAgentCoreEmulator({ credentials: CREDS, region: 'eu-west-1', ...opts });
    const made = makeProvider(emulator, extra);
    stopProvider = () => made.provider.stop();
    return made;
  }

  afterEach(async () => {
    stopProvider?.();
    await emulator?.close();
  });

  describe('.pollTurn', () => {
    describe('when the model asks for two parallel tool uses whose input deltas are split across frames and 7-byte TCP writes', () => {
      it('should assemble both, accept the resume pair and end the next turn', async () => {
        const { provider } = await setup({
          chunkBytes: 7,
          script: [
            {
              text: 'Let me check both.',
              toolUses: [
                { id: 'tu-echo', name: 'echo', input: { text: 'hello world' }, pieces: 4 },
                { id: 'tu-add', name: 'add', input: { a: 20, b: 22 }, pieces: 3 },
              ],
              interleave: true,
              usage: { inputTokens: 100, outputTokens: 20 },
            },
            { text: 'HELLO WORLD and 42.', usage: { inputTokens: 150, outputTokens: 8 } },
          ],
        });
        const conn = await open(provider);

        const first = await collect(provider.pollTurn(conn, provider.kickoffInput({ prompt: 'go' })));
        expect(first).toMatchObject({ completed: true, error: undefined });
        const inputDeltas = first.events.filter((e) => (e['contentBlockDelta'] as { delta?: { toolUse?: unknown } } | undefined)?.delta?.toolUse !== undefined);
        expect(inputDeltas).toHaveLength(7);
        const rec0 = emulator.invokes()[0]!;
        expect(rec0.writes).toBeGreaterThan(rec0.framesSent);
        const turn1 = provider.normalize(first.events);
        expect(turn1).toMatchObject({
          terminal: 'requires_action',
          stopReason: 'tool_use',
          text: 'Let me check both.',
          usage: { inputTokens: 100, outputTokens: 20 },
        });
        expect(turn1.customToolUses).toEqual([
          { id: 'tu-echo', name: 'echo', input: { text: 'hello world' } },
          { id: 'tu-add', name: 'add', input: { a: 20, b: 22 } },
        ]);

        const resume = provider.resumeInput(turn1.customToolUses, [
          { toolUseId: 'tu-echo', content: 'HELLO WORLD', isError: false },
          { toolUseId: 'tu-add', content: 'add failed', isError: true },
        ]);
        const second = await collect(provider.pollTurn(conn, resume));
        expect(second.error).toBeUndefined();
        const turn2 = provider.normalize(second.events);
        expect(turn2).toMatchObject({
          terminal: 'end_turn',
          stopReason: 'end_turn',
          text: 'HELLO WORLD and 42.',
          customToolUses: [],
          usage: { inputTokens: 150, outputTokens: 8 },
        });

        const body = emulator.invokes()[1]!.body as Body;
        expect(body.messages).toEqual([
          {
            role: 'assistant',
            content: [
              { toolUse: { toolUseId: 'tu-echo', name: 'echo', input: { text: 'hello world' } } },
              { toolUse: { toolUseId: 'tu-add', name: 'add', input: { a: 20, b: 22 } } },
            ],
          },
          {
            role: 'user',
            content: [
              { toolResult: { toolUseId: 'tu-echo', content: [{ text: 'HELLO WORLD' }], status: 'success' } },
              { toolResult: { toolUseId: 'tu-add', content: [{ text: 'add failed' }], status: 'error' } },
            ],
          },
        ]);
        expect(emulator.invokes()[1]!.outcome).toBe('completed');
        expect(emulator.invokes().map((r) => r.runtimeSessionId)).toEqual([conn.sessionId, conn.sessionId]);
      });
    });

    describe('when a stream pauses in the middle of a frame after the text', () => {
      it('should emit the text deltas live, before the answer is complete, and finish once the rest arrives', async () => {
        const { provider } = await setup({ script: [{ text: ['Hel', 'lo'] }], faults: { 0: { kind: 'stall', afterFrames: 3, midFrame: true } } });
        const conn = await open(provider);
        const events: RawEvent[] = [];
        let sawText!: () => void;
        const textSeen = new Promise<void>((r) => (sawText = r));
        const done = new Promise<void>((resolve, reject) =>
          provider.pollTurn(conn, provider.userInput('hi')).subscribe({
            next: (e) => {
              events.push(e);
              if (events.map((x) => hostText(provider.decode(conn, x))?.text ?? '').join('') === 'Hello') sawText();
            },
            error: reject,
            complete: resolve,
          }),
        );
        await textSeen;
        expect(kinds(events)).toEqual(['messageStart', 'contentBlockDelta', 'contentBlockDelta']);
        emulator.release(0);
        await done;
        expect(kinds(events).slice(-2)).toEqual(['messageStop', 'metadata']);
        expect(provider.normalize(events)).toMatchObject({ terminal: 'end_turn', text: 'Hello' });
      });
    });

    describe('when two tool uses reuse the same contentBlockIndex', () => {
      it('should still keep them apart by toolUseId', async () => {
        const { provider } = await setup({
          script: [
            {
              toolUses: [
                { id: 'a', name: 'echo', input: { text: 'A' } },
                { id: 'b', name: 'echo', input: { text: 'B' } },
              ],
              reuseIndex: true,
            },
          ],
        });
        const turn = provider.normalize((await collect(provider.pollTurn(await open(provider), provider.userInput('x')))).events);
        expect(turn.customToolUses).toEqual([
          { id: 'a', name: 'echo', input: { text: 'A' } },
          { id: 'b', name: 'echo', input: { text: 'B' } },
        ]);
      });
    });

    describe('when the model sends tool input that is not valid JSON', () => {
      it('should yield a ToolUse with inputError instead of failing', async () => {
        const { provider } = await setup({ script: [{ toolUses: [{ id: 'bad', name: 'echo', input: '{"text": "unterminated' }] }] });
        const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('x')));
        expect(polled.completed).toBe(true);
        const [use] = provider.normalize(polled.events).customToolUses;
        expect(use).toMatchObject({ id: 'bad', name: 'echo', input: {}, inputError: expect.stringContaining('not valid JSON') });
      });
    });

    describe('when the stop reason is max_tokens', () => {
      it('should terminate with the raw reason', async () => {
        const { provider } = await setup({ script: [{ text: 'cut', stopReason: 'max_tokens' }] });
        const turn = provider.normalize((await collect(provider.pollTurn(await open(provider), provider.userInput('x')))).events);
        expect(turn).toMatchObject({ terminal: 'terminated', stopReason: 'max_tokens', text: 'cut' });
      });
    });

    describe('request body', () => {
      it('should send only the delta and omit unset knobs', async () => {
        const { provider } = await setup({ script: [{ text: 'ok' }] });
        await collect(provider.pollTurn(await open(provider), provider.kickoffInput({ prompt: 'hello' })));
        const rec = emulator.invokes()[0]!;
        expect(rec.body).toEqual({ messages: [{ role: 'user', content: [{ text: 'hello' }] }] });
        expect(rec.query).toEqual({ harnessArn: HARNESS_ARN });
        expect(rec.headers['x-amzn-bedrock-agentcore-runtime-user-id']).toBeUndefined();
      });

      it('should send the configured knobs, qualifier and user id', async () => {
        const { provider } = await setup(
          { script: [{ text: 'ok' }] },
          { maxIterations: 5, maxTokens: 256, timeoutSeconds: 60, model: 'us.anthropic.claude-test', qualifier: 'prod', runtimeUserId: 'user-7' },
        );
        await collect(provider.pollTurn(await open(provider), provider.userInput('hi')));
        const rec = emulator.invokes()[0]!;
        expect(rec.body).toEqual({
          messages: [{ role: 'user', content: [{ text: 'hi' }] }],
          maxIterations: 5,
          maxTokens: 256,
          timeoutSeconds: 60,
          model: { bedrockModelConfig: { modelId: 'us.anthropic.claude-test' } },
        });
        expect(rec.query).toEqual({ harnessArn: HARNESS_ARN, qualifier: 'prod' });
        expect(rec.headers['x-amzn-bedrock-agentcore-runtime-user-id']).toBe('user-7');
      });
    });

    describe('retries', () => {
      describe('when the first attempt is truncated (clean end without messageStop)', () => {
        it('should retry once and count only the successful attempt', async () => {
          const { provider, logger } = await setup({
            script: [{ text: 'Second try wins.', toolUses: [{ id: 'ok-1', name: 'echo', input: { text: 'x' } }], usage: { inputTokens: 30, outputTokens: 7 } }],
            faults: { 0: { kind: 'truncate', afterFrames: 4 } },
          });
          const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
          expect(polled.completed).toBe(true);
          expect(emulator.invokes()).toHaveLength(2);
          const markerAt = polled.events.findIndex((e) => e['type'] === ATTEMPT_FAILED);
          expect(markerAt).toBe(4);
          expect(polled.events[markerAt]).toMatchObject({ type: ATTEMPT_FAILED, attempt: 1, maxAttempts: 3, code: 'early_termination' });
          const turn = provider.normalize(polled.events);
          expect(turn).toMatchObject({ terminal: 'requires_action', text: 'Second try wins.', usage: { inputTokens: 30, outputTokens: 7 } });
          expect(turn.customToolUses).toEqual([{ id: 'ok-1', name: 'echo', input: { text: 'x' } }]);
          expect(turn.events).toHaveLength(polled.events.length);
          expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
        });
      });

      describe('when the first attempt breaks in the middle of a frame (socket destroyed)', () => {
        it('should retry', async () => {
          const { provider } = await setup({ script: [{ text: 'fine' }], faults: { 0: { kind: 'truncate', afterFrames: 1, midFrame: true } } });
          const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
          expect(polled.completed).toBe(true);
          expect(emulator.invokes()).toHaveLength(2);
          expect(provider.normalize(polled.events).text).toBe('fine');
        });
      });

      describe('when the service answers 503, then throttles, then answers', () => {
        it('should retry both', async () => {
          const { provider } = await setup({ script: [{ text: 'third time' }], faults: { 0: { kind: 'status', status: 503 }, 1: { kind: 'throttle' } } });
          const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
          expect(polled.completed).toBe(true);
          expect(polled.events.filter((e) => e['type'] === ATTEMPT_FAILED).map((e) => e['code'])).toEqual(['http_error', 'http_error']);
          expect(emulator.invokes()).toHaveLength(3);
        });
      });

      describe('when retries are off and the service answers 503', () => {
        it('should send exactly one request (the SDK never retries on its own)', async () => {
          const { provider } = await setup({ script: [{ text: 'x' }], faults: { 0: { kind: 'status', status: 503 } } }, { maxRetries: 0 });
          const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
          expect(polled.error).toMatchObject({ code: 'http_error', details: { status: 503, transient: true } });
          expect(emulator.requests).toHaveLength(1);
        });
      });

      describe('when every attempt is truncated', () => {
        it('should fail with early_termination after the last attempt', async () => {
          const t = { kind: 'truncate', afterFrames: 2 } as const;
          const { provider } = await setup({ script: [{ text: 'never complete' }], faults: { 0: t, 1: t, 2: t } });
          const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
          expect(polled.error).toBeInstanceOf(AgentRxError);
          expect(polled.error).toMatchObject({ code: 'early_termination', details: { attempts: 3 } });
          expect((polled.error as Error).message).toContain('gave up after 3 attempts');
          expect(emulator.invokes()).toHaveLength(3);
        });
      });

      describe('when an exception frame arrives mid-stream', () => {
        it('should fail at once with harness_stream_error carrying its type and message', async () => {
          const { provider } = await setup({
            script: [{ text: 'a b c d e f' }],
            faults: { 0: { kind: 'exception', afterFrames: 2, exceptionType: 'internalServerException', message: 'model exploded' } },
          });
          const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
          expect(polled.error).toMatchObject({
            code: 'harness_stream_error',
            details: { exceptionType: 'InternalServerException', message: 'model exploded', transient: false },
          });
          expect(emulator.invokes()).toHaveLength(1);
          expect(polled.events.at(-1)).toEqual({ type: STREAM_EXCEPTION, exceptionType: 'InternalServerException', message: 'model exploded' });
          expect(polled.events.some((e) => e['type'] === ATTEMPT_FAILED)).toBe(false);
        });
      });

      describe('when the invoke is rejected by an unmodeled exception frame', () => {
        it('should not retry it either', async () => {
          const { provider } = await setup({
            script: [{ text: 'x' }],
            faults: { 0: { kind: 'exception', afterFrames: 0, exceptionType: 'throttlingException', message: 'slow down' } },
          });
          const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
          expect(polled.error).toMatchObject({ code: 'harness_stream_error', details: { exceptionType: 'throttlingException' } });
          expect(emulator.invokes()).toHaveLength(1);
        });
      });

      describe('when the service answers 400', () => {
        it('should not retry and fail with http_error', async () => {
          const { provider } = await setup({ script: [{ text: 'x' }], faults: { 0: { kind: 'status', status: 400, message: 'bad input' } } });
          const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
          expect(polled.error).toMatchObject({ code: 'http_error', details: { status: 400, errorType: 'ValidationException', transient: false } });
          expect((polled.error as Error).message).toContain('bad input');
          expect(emulator.invokes()).toHaveLength(1);
        });
      });

      describe('when a resume is rejected by the harness (tool results without tool uses)', () => {
        it('should surface the validationException frame without retrying', async () => {
          const { provider } = await setup({ script: [{ toolUses: [{ id: 't1', name: 'echo', input: { text: 'x' } }] }, { text: 'never' }] });
          const conn = await open(provider);
          await collect(provider.pollTurn(conn, provider.userInput('go')));
          const onlyResults = {
            messages: [{ role: 'user' as const, content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'X' }], status: 'success' as const } }] }],
          };
          const polled = await collect(provider.pollTurn(conn, onlyResults));
          expect(polled.error).toMatchObject({ code: 'harness_stream_error', details: { exceptionType: 'ValidationException' } });
          expect((polled.error as Error).message).toContain('exceeds the number of toolUse blocks');
          expect(emulator.invokes()).toHaveLength(2);
        });
      });
    });

    describe('when the stream stalls', () => {
      it('should fail with a timeout after the idle period and close the socket', async () => {
        const { provider } = await setup(
          { script: [{ text: 'one two three' }], faults: { 0: { kind: 'stall', afterFrames: 2 } } },
          { idleTimeoutMs: 150, maxRetries: 0 },
        );
        const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
        expect(polled.error).toMatchObject({ code: 'timeout', details: { kind: 'idle', idleTimeoutMs: 150, events: 2 } });
        expect(polled.events).toHaveLength(2);
        await emulator.waitForClose(0);
      });

      it('should also time out when no frame arrives at all', async () => {
        const { provider } = await setup(
          { script: [{ text: 'never' }], faults: { 0: { kind: 'stall', afterFrames: 0 } } },
          { idleTimeoutMs: 100, maxRetries: 0 },
        );
        const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
        expect(polled.error).toMatchObject({ code: 'timeout', details: { kind: 'idle', events: 0 } });
        await emulator.waitForClose(0);
      });

      it('should measure idleness between frames, not the whole stream', async () => {
        jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
        try {
          const { provider } = await setup(
            {
              script: [{ text: 'a b c d e f g h' }],
              faults: {
                0: [
                  { kind: 'stall', afterFrames: 2 },
                  { kind: 'stall', afterFrames: 4 },
                ],
              },
            },
            { idleTimeoutMs: 1_000, maxRetries: 0 },
          );
          const conn = await open(provider);
          const events: RawEvent[] = [];
          const waiters: [number, () => void][] = [];
          const reach = (n: number): Promise<void> => new Promise((r) => (events.length >= n ? r() : waiters.push([n, r])));
          const done = new Promise<unknown>((resolve) =>
            provider.pollTurn(conn, provider.userInput('go')).subscribe({
              next: (e) => {
                events.push(e);
                for (const [n, r] of waiters) if (events.length >= n) r();
              },
              error: resolve,
              complete: () => resolve('completed'),
            }),
          );
          await reach(2);
          jest.advanceTimersByTime(700);
          emulator.release(0);
          await reach(4);
          jest.advanceTimersByTime(700);
          emulator.release(0);
          expect(await done).toBe('completed');
          expect(provider.normalize(events).text).toBe('a b c d e f g h');
        } finally {
          jest.useRealTimers();
        }
      });

      it('should retry a stalled attempt when retries are left', async () => {
        const { provider } = await setup(
          { script: [{ text: 'recovered' }], faults: { 0: { kind: 'stall', afterFrames: 1 } } },
          { idleTimeoutMs: 150, maxRetries: 1 },
        );
        const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
        expect(polled.completed).toBe(true);
        expect(polled.events.find((e) => e['type'] === ATTEMPT_FAILED)).toMatchObject({ code: 'timeout' });
        expect(provider.normalize(polled.events).text).toBe('recovered');
      });
    });

    describe('when the subscriber unsubscribes mid-stream', () => {
      it('should abort the request so that the emulator sees the socket close', async () => {
        const { provider } = await setup({ script: [{ text: 'one two three' }], faults: { 0: { kind: 'stall', afterFrames: 2 } } });
        const conn = await open(provider);
        let got!: () => void;
        const twoEvents = new Promise<void>((r) => (got = r));
        let n = 0;
        const sub = provider.pollTurn(conn, provider.userInput('go')).subscribe({ next: () => ++n === 2 && got() });
        await twoEvents;
        sub.unsubscribe();
        const rec = await emulator.waitForClose(0);
        expect(rec.closed).toBe(true);
        expect(conn.inflight.size).toBe(0);
      });
    });

    describe('when the session signal aborts mid-stream', () => {
      it('should fail with the abort reason and close the socket', async () => {
        const { provider } = await setup({ script: [{ text: 'one two three' }], faults: { 0: { kind: 'stall', afterFrames: 1 } } });
        const ctl = new AbortController();
        const conn = await open(provider, { signal: ctl.signal });
        const polling = collect(provider.pollTurn(conn, provider.userInput('go')));
        await emulator.waitForFrames(0, 1);
        ctl.abort(new AgentRxError('cancelled', 'the session was cancelled'));
        expect((await polling).error).toMatchObject({ code: 'cancelled' });
        await emulator.waitForClose(0);
      });
    });

    describe('when the conn is closed', () => {
      it('should refuse to poll', async () => {
        const { provider } = await setup({ script: [{ text: 'x' }] });
        const conn = await open(provider);
        provider.close(conn);
        expect((await collect(provider.pollTurn(conn, provider.userInput('x')))).error).toMatchObject({ code: 'session_closed' });
        expect(emulator.invokes()).toHaveLength(0);
      });
    });
  });

  describe('.open', () => {
    it('should generate a valid runtime session id for a fresh session', async () => {
      const { provider } = await setup({});
      const conn = await open(provider);
      expect(conn.sessionId).toMatch(/^[a-zA-Z0-9][a-zA-Z0-9_-]{32,99}$/);
      expect(provider.resumed(conn)).toBe(false);
    });

    it('should keep a valid resumed session id and send it as the header', async () => {
      const { provider } = await setup({ script: [{ text: 'welcome back' }] });
      const sid = 'resumed-session-0123456789abcdefghijklmnop';
      const conn = await open(provider, { sessionId: sid });
      expect(provider.resumed(conn)).toBe(true);
      await collect(provider.pollTurn(conn, provider.userInput('again')));
      expect(emulator.invokes()[0]!.runtimeSessionId).toBe(sid);
    });

    it('should reject an invalid session id with a clear error', async () => {
      const { provider } = await setup({});
      await expect(open(provider, { sessionId: 'too-short' })).rejects.toMatchObject({ code: 'invalid_options', message: expect.stringContaining('33-100') });
      await expect(open(provider, { sessionId: `bad!${'x'.repeat(40)}` })).rejects.toMatchObject({
        code: 'invalid_options',
        message: expect.stringContaining('only letters, digits'),
      });
    });

    it('should fail with invalid_config when no harness is known', async () => {
      emulator = await startAgentCoreEmulator({});
      const { provider } = makeProvider(emulator, { harnessArn: undefined });
      await expect(open(provider)).rejects.toMatchObject({ code: 'invalid_config', message: expect.stringContaining('harnessArn') });
    });

    describe('when no region is configured or in the environment', () => {
      const saved = { AWS_REGION: process.env['AWS_REGION'], AWS_DEFAULT_REGION: process.env['AWS_DEFAULT_REGION'] };
      afterEach(() => {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      });

      it('should fail with invalid_config naming the region settings', async () => {
        delete process.env['AWS_REGION'];
        delete process.env['AWS_DEFAULT_REGION'];
        emulator = await startAgentCoreEmulator({});
        const { provider } = makeProvider(emulator, { region: undefined });
        await expect(open(provider)).rejects.toMatchObject({ code: 'invalid_config', message: expect.stringContaining('AWS_REGION') });
      });

      it('should take AWS_REGION from the environment', async () => {
        process.env['AWS_REGION'] = 'ap-south-1';
        emulator = await startAgentCoreEmulator({ script: [{ text: 'ok' }] });
        const { provider } = makeProvider(emulator, { region: undefined });
        stopProvider = () => provider.stop();
        await collect(provider.pollTurn(await open(provider), provider.userInput('x')));
        expect(emulator.invokes()[0]!.auth.region).toBe('ap-south-1');
      });
    });
  });

  describe('.resumeInput', () => {
    it('should send each id once and answer a use without result with an error', async () => {
      const { provider } = await setup({});
      const input = provider.resumeInput(
        [
          { id: 'a', name: 'echo', input: { text: 'x' } },
          { id: 'a', name: 'echo', input: { text: 'x' } },
          { id: 'b', name: 'add', input: {} },
        ],
        [{ toolUseId: 'a', content: '', isError: false }],
      );
      expect(input.messages).toEqual([
        {
          role: 'assistant',
          content: [{ toolUse: { toolUseId: 'a', name: 'echo', input: { text: 'x' } } }, { toolUse: { toolUseId: 'b', name: 'add', input: {} } }],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'a', content: [{ text: '(no output)' }], status: 'success' } },
            { toolResult: { toolUseId: 'b', content: [{ text: 'No result was recorded for this tool call.' }], status: 'error' } },
          ],
        },
      ]);
    });
  });

  describe('secrets', () => {
    it('should never put the secret access key in errors, logs, events or inspect output', async () => {
      const { provider, logger } = await setup({
        script: [{ text: 'x' }],
        faults: { 0: { kind: 'status', status: 503 }, 1: { kind: 'status', status: 403, errorType: 'AccessDeniedException', message: 'denied' } },
      });
      const conn = await open(provider);
      const polled = await collect(provider.pollTurn(conn, provider.userInput('go')));
      expect(polled.error).toMatchObject({ code: 'http_error', details: { status: 403 } });
      const secret = CREDS.secretAccessKey;
      const shown = [
        inspect(provider, { depth: 10 }),
        inspect(conn, { depth: 10 }),
        inspect(polled.error, { depth: 10 }),
        JSON.stringify((polled.error as AgentRxError).details),
        JSON.stringify(polled.events),
        JSON.stringify(logger.lines),
        JSON.stringify(emulator.requests),
      ].join('\n');
      expect(shown).not.toContain(secret);
      expect(inspect(provider)).toContain('[redacted]');
      expect(emulator.invokes()[0]!.auth.signatureVerified).toBe(true);
    });
  });
});
