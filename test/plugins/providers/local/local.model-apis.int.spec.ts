/**
 * The Local loop on the OpenAI Responses API and the Gemini API (`providers.local.api`), through
 * AgentRx against each API's emulator on loopback, streamed and not: a tool call and its result in
 * the API's own shape, the reasoning shown as reasoning and sent back as the API requires
 * (encrypted Responses reasoning items; Gemini thought parts with their signatures), usage, the key
 * where the API takes it and never shown, a 5xx before the answer retried, and `outputSchema` in
 * the API's native form.
 */
import 'reflect-metadata';
import { z } from 'zod';
import { AgentRx } from '../../../../src/agentrx.js';
import { startGeminiEmulator, type GeminiEmulator } from '../../../../src/testing/gemini-emulator.js';
import { startResponsesEmulator, type ResponsesEmulator } from '../../../../src/testing/responses-emulator.js';
import { RecordingConsumer } from '../../../../src/testing/recording-consumer.js';
import { EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';
import { rejectedWith } from '../../../support/agentrx-errors.js';

const KEY = 'sk-model-apis-test-0123456789';

type Json = Record<string, unknown>;

interface Api {
  readonly id: 'openai-responses' | 'gemini';
  start(opts: {
    script: readonly Json[];
    faults?: Record<number, Json>;
  }): Promise<{ baseUrl: string; bodies(): Json[]; statuses(): number[]; keyHeader(): string | undefined; close(): Promise<void> }>;
  /** A turn that thinks, says something and calls echo({ text: 'hi' }). */
  readonly toolTurn: Json;
  readonly answerTurn: (text: string) => Json;
  readonly status500: Json;
  /** What the second request carries back of the first answer: its reasoning, the call, the tool result. */
  checkSentBack(body: Json): void;
  checkSettings(body: Json): void;
  /** The body's conversation cut to the first exchange (the prompt, the answer with its call, the tool result). */
  firstThree(body: Json): Json;
}

const responses: Api = {
  id: 'openai-responses',
  async start({ script, faults }) {
    const emu: ResponsesEmulator = await startResponsesEmulator({ script: script as never, faults: faults as never, apiKey: KEY });
    const calls = (): typeof emu.requests => emu.requests.filter((r) => r.response !== undefined);
    return {
      baseUrl: emu.baseUrl,
      bodies: () =>
        calls()
          .filter((r) => r.status === 200)
          .map((r) => r.body as Json),
      statuses: () => calls().map((r) => r.status),
      keyHeader: () => emu.requests[0]?.headers['authorization'],
      close: () => emu.close(),
    };
  },
  toolTurn: {
    reasoning: 'The user wants an echo.',
    text: 'Echoing.',
    functionCalls: [{ callId: 'call_1', name: 'echo', arguments: { text: 'hi' } }],
    usage: { input_tokens: 20, output_tokens: 7 },
  },
  answerTurn: (text) => ({ text, usage: { input_tokens: 30, output_tokens: 4 } }),
  status500: { kind: 'status', status: 500 },
  checkSentBack(body) {
    const input = body['input'] as Json[];
    const types = input.map((i) => i['type'] ?? i['role']);
    expect(types).toEqual(['user', 'reasoning', 'assistant', 'function_call', 'function_call_output']);
    expect(input[1]).toMatchObject({ type: 'reasoning', encrypted_content: expect.any(String) });
    expect(input[3]).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'echo', arguments: '{"text":"hi"}' });
    expect(input[4]).toEqual({ type: 'function_call_output', call_id: 'call_1', output: expect.stringContaining('HI') });
    expect(body).toMatchObject({ instructions: 'You are terse.', store: false, include: ['reasoning.encrypted_content'] });
  },
  checkSettings(body) {
    expect(body).toMatchObject({ temperature: 0.5, max_output_tokens: 300, text: { format: { type: 'json_schema', name: 'output' } } });
  },
  firstThree: (body) => ({ input: (body['input'] as Json[]).slice(0, 5) }),
};

const gemini: Api = {
  id: 'gemini',
  async start({ script, faults }) {
    const emu: GeminiEmulator = await startGeminiEmulator({ script: script as never, faults: faults as never, apiKey: KEY });
    const calls = (): typeof emu.requests => emu.requests.filter((r) => r.call !== undefined);
    return {
      baseUrl: `${emu.baseUrl}/v1beta`,
      bodies: () =>
        calls()
          .filter((r) => r.status === 200)
          .map((r) => r.body as Json),
      statuses: () => calls().map((r) => r.status),
      keyHeader: () => emu.requests[0]?.headers['x-goog-api-key'],
      close: () => emu.close(),
    };
  },
  toolTurn: {
    thought: 'The user wants an echo.',
    text: 'Echoing.',
    functionCalls: [{ name: 'echo', args: { text: 'hi' } }],
    usage: { promptTokenCount: 20, candidatesTokenCount: 7 },
  },
  answerTurn: (text) => ({ text, usage: { promptTokenCount: 30, candidatesTokenCount: 4 } }),
  status500: { kind: 'status', status: 500 },
  checkSentBack(body) {
    const contents = body['contents'] as { role: string; parts: Json[] }[];
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(contents[1]!.parts.some((p) => p['thought'] === true)).toBe(true);
    expect(contents[1]!.parts.find((p) => p['functionCall'] !== undefined)).toMatchObject({ functionCall: { name: 'echo', args: { text: 'hi' } } });
    expect(contents[2]!.parts).toEqual([{ functionResponse: expect.objectContaining({ name: 'echo', response: { result: expect.stringContaining('HI') } }) }]);
    expect(body).toMatchObject({ systemInstruction: { parts: [{ text: 'You are terse.' }] } });
  },
  checkSettings(body) {
    expect(body['generationConfig']).toMatchObject({
      temperature: 0.5,
      maxOutputTokens: 300,
      responseMimeType: 'application/json',
      responseJsonSchema: expect.any(Object),
    });
  },
  firstThree: (body) => ({ contents: (body['contents'] as Json[]).slice(0, 3) }),
};

for (const api of [responses, gemini]) {
  describe(`the Local loop on ${api.id}`, () => {
    let emu: Awaited<ReturnType<Api['start']>> | undefined;
    let rx: AgentRx | undefined;
    beforeEach(() => resetFakeTools());
    afterEach(async () => {
      await rx?.stop();
      await emu?.close();
      rx = undefined;
      emu = undefined;
    });

    async function setup(script: readonly Json[], local: Json = {}, faults: Record<number, Json> = {}): Promise<RecordingConsumer> {
      emu = await api.start({ script, faults });
      const rec = new RecordingConsumer();
      rx = await AgentRx.create({
        tools: [EchoToolHandler],
        consumers: [rec],
        config: {
          provider: 'local',
          logLevel: 'silent',
          consumers: { terminal: false },
          agent: { name: 'a', systemPrompt: 'You are terse.' },
          providers: { local: { api: api.id, baseUrl: emu.baseUrl, apiKey: KEY, model: 'test-model', retryBaseMs: 1, ...local } },
        },
      });
      return rec;
    }

    for (const stream of [true, false]) {
      it(`should run the tool once and send back the reasoning, the call and its result in the API's shape (${stream ? 'streamed' : 'not streamed'})`, async () => {
        const rec = await setup([api.toolTurn, api.answerTurn('It said HI.')], { stream });
        const result = await rx!.run({ prompt: 'echo hi' });
        expect(result.text).toBe('It said HI.');
        expect(result.customToolUses).toEqual([expect.objectContaining({ name: 'echo', input: { text: 'hi' } })]);
        expect(result.usage).toEqual({ inputTokens: 50, outputTokens: 11 });
        const bodies = emu!.bodies();
        expect(bodies).toHaveLength(2);
        api.checkSentBack(bodies[1]!);
        expect(rec.events.some((e) => e.type === 'REASONING_MESSAGE_CONTENT' || e.type === 'REASONING_START')).toBe(true);
        expect(rec.text).toContain('It said HI.');
        expect(emu!.keyHeader()).not.toContain(KEY);
      });
    }

    it('should resume a stored session with its reasoning and calls sent back in the API shape', async () => {
      await setup([api.toolTurn, api.answerTurn('It said HI.'), api.answerTurn('Again: HI.')]);
      const first = await rx!.run({ prompt: 'echo hi' });
      const again = await rx!.run({ sessionId: first.sessionId, prompt: 'and again?' });
      expect(again.text).toBe('Again: HI.');
      const resumed = emu!.bodies()[2]!;
      api.checkSentBack({ ...resumed, ...api.firstThree(resumed) });
    });

    it('should retry a 500 before the answer started', async () => {
      await setup([api.answerTurn('ok')], {}, { 0: api.status500 });
      expect((await rx!.run({ prompt: 'x' })).text).toBe('ok');
      expect(emu!.statuses()).toEqual([500, 200]);
    });

    it('should send the schema and the settings in the native form and return the typed output', async () => {
      await setup([api.answerTurn('{"total": 126}')]);
      const result = await rx!.run({ prompt: 'sum', outputSchema: z.object({ total: z.number() }), temperature: 0.5, maxOutputTokens: 300 });
      expect(result.output?.total).toBe(126);
      api.checkSettings(emu!.bodies()[0]!);
    });

    it('should say the key was refused, without showing it', async () => {
      await setup([api.answerTurn('never')], { apiKey: 'sk-wrong-key-0000099999' });
      const e = await rejectedWith('http_error', rx!.run({ prompt: 'x' }));
      expect(e.message).toMatch(/returned HTTP 40[013]/);
      expect(e.message).not.toContain('sk-wrong-key-0000099999');
    });
  });
}
