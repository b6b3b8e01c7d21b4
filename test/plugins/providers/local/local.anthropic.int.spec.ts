/**
 * The Local loop on the Anthropic Messages API (`providers.local.api: 'anthropic-messages'`),
 * through AgentRx against the Messages emulator on loopback, streamed and not: tool calls and
 * their results in Messages shape, thinking as reasoning (sent back with its signature), usage
 * with cache reads and writes, the key as `x-api-key` and never shown, the retry rules (a 529
 * before the answer is retried; an error event after text was shown is not), structured output
 * (`output_format`) and the session's settings.
 */
import 'reflect-metadata';
import { z } from 'zod';
import { AgentRx } from '../../../../src/agentrx.js';
import {
  startAnthropicEmulator,
  type AnthropicEmulator,
  type AnthropicEmulatorFault,
  type AnthropicEmulatorTurn,
} from '../../../../src/testing/anthropic-emulator.js';
import { RecordingConsumer } from '../../../../src/testing/recording-consumer.js';
import { EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';
import { rejectedWith } from '../../../support/agentrx-errors.js';

const API_KEY = 'sk-ant-local-test-0123456789';

type Block = Record<string, unknown> & { type: string };
type Body = Record<string, unknown> & { messages: { role: string; content: string | Block[] }[] };

describe('the Local loop on the Anthropic Messages API', () => {
  let emu: AnthropicEmulator | undefined;
  let rx: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await rx?.stop();
    await emu?.close();
    rx = undefined;
    emu = undefined;
  });

  async function setup(
    script: readonly AnthropicEmulatorTurn[],
    local: Record<string, unknown> = {},
    faults: Record<number, AnthropicEmulatorFault> = {},
  ): Promise<{ emu: AnthropicEmulator; rx: AgentRx; rec: RecordingConsumer }> {
    emu = await startAnthropicEmulator({ script, apiKey: API_KEY, faults });
    const rec = new RecordingConsumer();
    rx = await AgentRx.create({
      tools: [EchoToolHandler],
      consumers: [rec],
      config: {
        provider: 'local',
        logLevel: 'silent',
        consumers: { terminal: false },
        agent: { name: 'a', systemPrompt: 'You are terse.' },
        providers: { local: { api: 'anthropic-messages', baseUrl: `${emu.baseUrl}/v1`, apiKey: API_KEY, model: 'claude-test', retryBaseMs: 1, ...local } },
      },
    });
    return { emu, rx, rec };
  }

  const bodies = (e: AnthropicEmulator): Body[] => e.requests.filter((r) => r.message !== undefined && r.status === 200).map((r) => r.body as Body);

  const TOOL_TURNS: AnthropicEmulatorTurn[] = [
    {
      thinking: 'The user wants an echo.',
      text: 'Echoing.',
      toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'hi' } }],
      usage: { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 5 },
    },
    { text: 'It said HI.', usage: { input_tokens: 30, output_tokens: 4 } },
  ];

  for (const stream of [true, false]) {
    describe(stream ? 'streamed' : 'not streamed', () => {
      it('should run the tool once, send its result as a tool_result and the thinking back with its signature, and count cache tokens as input', async () => {
        const { emu, rx, rec } = await setup(TOOL_TURNS, { stream });
        const result = await rx.run({ prompt: 'echo hi' });
        expect(result.text).toBe('It said HI.');
        expect(result.customToolUses).toEqual([expect.objectContaining({ id: 'toolu_1', name: 'echo', input: { text: 'hi' } })]);
        expect(result.usage).toEqual({ inputTokens: 20 + 100 + 5 + 30, outputTokens: 11 });
        const [first, second] = bodies(emu);
        expect(first).toMatchObject({
          model: 'claude-test',
          system: 'You are terse.',
          max_tokens: 4096,
          messages: [{ role: 'user', content: [{ type: 'text', text: 'echo hi' }] }],
        });
        expect(first!['tools']).toEqual([expect.objectContaining({ name: 'echo', input_schema: expect.objectContaining({ type: 'object' }) })]);
        expect(first!['stream'] === true).toBe(stream);
        const [, assistant, toolResults] = second!.messages;
        expect(assistant!.role).toBe('assistant');
        expect((assistant!.content as Block[]).map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
        expect((assistant!.content as Block[])[0]).toEqual({ type: 'thinking', thinking: 'The user wants an echo.', signature: expect.any(String) });
        expect(toolResults).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: expect.stringContaining('HI') }] });
        // Thinking reached the client as reasoning; the key went as x-api-key and is recorded redacted.
        expect(rec.events.some((e) => e.type === 'REASONING_MESSAGE_CONTENT' || e.type === 'REASONING_START')).toBe(true);
        expect(emu.requests[0]!.headers['x-api-key']).not.toContain(API_KEY);
        expect(emu.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');
      });
    });
  }

  it('should resume a stored session with its thinking sent back, signature intact', async () => {
    const { emu, rx } = await setup([...TOOL_TURNS, { text: 'Again: HI.' }]);
    const first = await rx.run({ prompt: 'echo hi' });
    expect((await rx.run({ sessionId: first.sessionId, prompt: 'and again?' })).text).toBe('Again: HI.');
    const assistant = bodies(emu)[2]!.messages[1]!;
    expect((assistant.content as Block[])[0]).toEqual({ type: 'thinking', thinking: 'The user wants an echo.', signature: expect.any(String) });
  });

  it('should retry an overloaded answer (529) before anything was shown, and succeed', async () => {
    const { emu, rx } = await setup([{ text: 'ok' }], {}, { 0: { kind: 'status', status: 529 } });
    const result = await rx.run({ prompt: 'x' });
    expect(result.text).toBe('ok');
    expect(emu.requests.filter((r) => r.message !== undefined).map((r) => r.status)).toEqual([529, 200]);
  });

  it('should fail with stream_error, not retry, when an error event comes after text was shown', async () => {
    const { emu, rx } = await setup([{ text: 'a long answer that streams in several deltas' }], {}, { 0: { kind: 'error_event', afterEvents: 5 } });
    const e = await rejectedWith('stream_error', rx.run({ prompt: 'x' }));
    expect(e.message).toContain('reported an error');
    expect(e.message).toContain('overloaded_error');
    expect(emu.requests.filter((r) => r.message !== undefined)).toHaveLength(1);
  });

  it('should say the key was refused on a 401, without showing it', async () => {
    const { rx } = await setup([{ text: 'never' }], { apiKey: 'sk-ant-wrong-key-99999' });
    const e = await rejectedWith('http_error', rx.run({ prompt: 'x' }));
    expect(e.message).toMatch(/returned HTTP 401.*Check the local provider apiKey/);
    expect(e.message).not.toContain('sk-ant-wrong-key-99999');
  });

  it('should send the schema as output_format with the beta header, the settings as Messages fields, and return the typed output', async () => {
    const { emu, rx } = await setup([{ text: '{"total": 126}' }]);
    const result = await rx.run({
      prompt: 'sum',
      outputSchema: z.object({ total: z.number() }),
      instructions: 'Only JSON.',
      temperature: 0.5,
      topP: 0.9,
      maxOutputTokens: 300,
    });
    expect(result.output?.total).toBe(126);
    const [body] = bodies(emu);
    expect(body).toMatchObject({
      system: 'Only JSON.',
      temperature: 0.5,
      top_p: 0.9,
      max_tokens: 300,
      output_format: { type: 'json_schema', schema: expect.objectContaining({ type: 'object' }) },
    });
    expect(emu.requests[0]!.headers['anthropic-beta']).toBe('structured-outputs-2025-11-13');
  });

  it('should refuse an api it does not speak, naming the allowed ones', async () => {
    await expect(AgentRx.create({ config: { provider: 'local', logLevel: 'silent', providers: { local: { api: 'cohere-chat' } } } })).rejects.toMatchObject({
      code: 'invalid_config',
      message: expect.stringMatching(/api[\s\S]*openai-chat, anthropic-messages, openai-responses, gemini/),
    });
  });
});
