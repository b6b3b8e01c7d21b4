/**
 * Structured output (`outputSchema`) and per-session model settings (`model`, `instructions`,
 * sampling), through AgentRx on every host's emulator: Local sends the schema as
 * `response_format` and the settings as chat-completion fields; AgentCore sends the settings on
 * each invoke and the schema in the prompt; Claude Managed Agents takes the schema in the prompt
 * and refuses per-session settings (its agent fixes them). The answer is validated on every host,
 * sent back once when it does not match, then the run fails with `output_invalid`.
 */
import 'reflect-metadata';
import { IsInt, IsString } from 'class-validator';
import { z } from 'zod';
import { AgentRx } from '../../../src/agentrx.js';
import type { SessionEvent } from '../../../src/core/events/session-event.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { SessionStore } from '../../../src/core/store/session-store.js';
import { ContainerModule } from '../../../src/core/util/inversify.js';
import { loggedResults } from '../../../src/distributed/logged-results.js';
import { agentCoreProviderModule } from '../../../src/plugins/providers/bedrock-agentcore/agentcore.module.js';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../../src/testing/agentcore-emulator.js';
import { startCmaEmulator, type CmaEmulator } from '../../../src/testing/cma-emulator.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { RecordingConsumer } from '../../../src/testing/recording-consumer.js';
import { emulatorSection } from '../../plugins/providers/bedrock-agentcore/helpers.js';
import { createCmaRx } from '../../plugins/providers/claude-managed-agents/cma-fixtures.js';
import { rejectedWith } from '../../support/agentrx-errors.js';

class Sum {
  @IsString()
  expression!: string;

  @IsInt()
  total!: number;
}

const SumSchema = z.object({ expression: z.string(), total: z.number().int() });
const SUM_JSON = { type: 'object', properties: { expression: { type: 'string' }, total: { type: 'integer' } }, required: ['expression', 'total'] };
const ANSWER = '{"expression":"(17 + 25) * 3","total":126}';

type Body = Record<string, unknown> & { messages: { role: string; content: string }[] };

describe('structured output and per-session settings', () => {
  let emu: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;
  afterEach(async () => {
    await rx?.stop();
    await emu?.close();
    rx = undefined;
    emu = undefined;
  });

  let store: MemorySessionStore;
  let rec: RecordingConsumer;

  async function local(texts: readonly string[], agent: Record<string, unknown> = {}): Promise<{ emu: OpenAiEmulator; rx: AgentRx }> {
    emu = await startOpenAiEmulator({ script: texts.map((text) => ({ text })) });
    store = new MemorySessionStore();
    rec = new RecordingConsumer();
    rx = await AgentRx.create({
      modules: [new ContainerModule((o) => void o.bind(SessionStore).toConstantValue(store))],
      consumers: [rec],
      config: {
        provider: 'local',
        logLevel: 'silent',
        consumers: { terminal: false },
        agent: { name: 'calc', ...agent },
        providers: { local: { baseUrl: emu.baseUrl, model: 'configured-model' } },
      },
    });
    return { emu, rx };
  }

  const bodies = (e: OpenAiEmulator): Body[] => e.requests.filter((r) => r.completion !== undefined).map((r) => r.body as Body);

  describe('on the Local loop', () => {
    it('should send the schema as response_format and return the output typed from a Standard Schema', async () => {
      const { emu, rx } = await local([ANSWER]);
      const result = await rx.run({ prompt: 'what is (17 + 25) * 3', outputSchema: SumSchema });
      // Typed: a number, not unknown.
      const total: number = result.output!.total;
      expect(total).toBe(126);
      expect(result.output).toEqual({ expression: '(17 + 25) * 3', total: 126 });
      const [body] = bodies(emu);
      expect(body!['response_format']).toEqual({
        type: 'json_schema',
        json_schema: { name: 'output', strict: false, schema: expect.objectContaining({ type: 'object', required: ['expression', 'total'] }) },
      });
      // The host constrains the answer itself: the prompt is the user's alone.
      expect(body!.messages.at(-1)).toEqual({ role: 'user', content: 'what is (17 + 25) * 3' });
      // An AG-UI client reads it in RUN_FINISHED's result; a reader of the log (a handle after a takeover) in the logged result.
      expect(rec.events.find((e) => e.type === 'RUN_FINISHED')).toMatchObject({ result: { terminal: 'end_turn', output: { total: 126 } } });
      expect((await loggedResults(store, result.sessionId!)).results).toEqual([
        expect.objectContaining({ output: { expression: '(17 + 25) * 3', total: 126 } }),
      ]);
    });

    it('should return a DTO instance for a class, and accept a JSON answer in a ```json fence', async () => {
      const { rx } = await local(['```json\n' + ANSWER + '\n```']);
      const result = await rx.run({ prompt: 'sum', outputSchema: Sum });
      expect(result.output).toBeInstanceOf(Sum);
      expect(result.output!.total).toBe(126);
    });

    it('should send an invalid answer back once with what was wrong, then return the corrected output', async () => {
      const { emu, rx } = await local(['{"expression":"(17 + 25) * 3","total":"126"}', ANSWER]);
      const session = rx.start({ prompt: 'sum', outputSchema: SUM_JSON });
      const envs: SessionEvent[] = [];
      session.events$.subscribe((e) => envs.push(e));
      const result = await session.result;
      session.close();
      await session.closed;
      expect(result.output).toEqual({ expression: '(17 + 25) * 3', total: 126 });
      const sent = bodies(emu);
      expect(sent).toHaveLength(2);
      const retry = sent[1]!.messages.at(-1)!;
      expect(retry.role).toBe('user');
      expect(retry.content).toMatch(/^Your answer does not match the required JSON Schema:\n- total: must be integer/);
      const reprompts = envs.filter((e) => e.source === 'agentrx' && e.raw.type === 'agentrx.reprompt');
      expect(reprompts.map((e) => (e.raw as { attempt: number }).attempt)).toEqual([1]);
      expect(result.turns).toBe(2);
    });

    it('should fail with output_invalid, naming the problems, when the answer after the retry is still invalid', async () => {
      const { emu, rx } = await local(['The total is 126.', '{"total": 126}']);
      const e = await rejectedWith('output_invalid', rx.run({ prompt: 'sum', outputSchema: SumSchema }));
      expect(e.message).toContain('the final answer does not match outputSchema');
      expect(e.details?.['problems']).toEqual([expect.stringMatching(/^expression: /)]);
      expect(bodies(emu)[1]!.messages.at(-1)!.content).toContain('the answer is not JSON');
      expect(bodies(emu)).toHaveLength(2);
    });

    it('should send the session model, instructions and sampling with every call, over the agent and the config', async () => {
      const { emu, rx } = await local(['hello', 'hello again'], { model: 'agent-model', systemPrompt: 'You are the agent.' });
      await rx.run({ prompt: 'hi', model: 'session-model', instructions: 'Answer tersely.', temperature: 0.2, topP: 0.9, maxOutputTokens: 64 });
      const [body] = bodies(emu);
      expect(body).toMatchObject({ model: 'session-model', temperature: 0.2, top_p: 0.9, max_tokens: 64 });
      expect(body!.messages[0]).toEqual({ role: 'system', content: 'Answer tersely.' });
      expect(body!['response_format']).toBeUndefined();
      // Without them: the agent's model and prompt, no sampling fields.
      await rx.run({ prompt: 'hi' });
      const plain = bodies(emu)[1]!;
      expect(plain.model).toBe('agent-model');
      expect(plain.messages[0]).toEqual({ role: 'system', content: 'You are the agent.' });
      expect(Object.keys(plain).filter((k) => ['temperature', 'top_p', 'max_tokens'].includes(k))).toEqual([]);
    });

    it('should refuse bad settings and an unusable schema before anything is sent, listing every problem', async () => {
      const { emu, rx } = await local(['never']);
      const e = await rejectedWith(
        'invalid_options',
        rx.run({ prompt: 'x', model: ' ', temperature: 3, topP: 0, maxOutputTokens: 1.5, outputSchema: { type: 'string' } as never }),
      );
      expect(e.details?.['problems']).toEqual([
        'model: must be a non-empty string (a model id of the host)',
        'temperature: must be a number from 0 to 2; got 3',
        'topP: must be a number above 0 and at most 1; got 0',
        'maxOutputTokens: must be a number that is a whole number of at least 1; got 1.5',
        expect.stringMatching(/^outputSchema: /),
      ]);
      expect(emu.requests.filter((r) => r.completion !== undefined)).toHaveLength(0);
    });
  });

  describe('on Bedrock AgentCore', () => {
    let ac: AgentCoreEmulator | undefined;
    afterEach(async () => {
      await ac?.close();
      ac = undefined;
    });

    it('should send the settings on every invoke and ask for the schema in the prompt, then validate the answer', async () => {
      ac = await startAgentCoreEmulator({ script: [{ text: 'not json' }, { text: ANSWER }] });
      rx = await AgentRx.create({
        config: { provider: 'bedrock-agentcore', logLevel: 'silent', consumers: { terminal: false }, providers: { 'bedrock-agentcore': emulatorSection(ac) } },
        modules: [agentCoreProviderModule],
      });
      const result = await rx.run({
        prompt: 'sum',
        outputSchema: SumSchema,
        model: 'anthropic.claude-x',
        instructions: 'Be exact.',
        temperature: 0,
        maxOutputTokens: 200,
      });
      expect(result.output).toEqual({ expression: '(17 + 25) * 3', total: 126 });
      const invokes = ac.invokes().map((r) => r.body as Record<string, unknown> & { messages: { content: { text?: string }[] }[] });
      expect(invokes).toHaveLength(2);
      for (const b of invokes) {
        expect(b).toMatchObject({
          model: { bedrockModelConfig: { modelId: 'anthropic.claude-x', temperature: 0 } },
          systemPrompt: [{ text: 'Be exact.' }],
          maxTokens: 200,
        });
      }
      const prompt = invokes[0]!.messages[0]!.content[0]!.text!;
      expect(prompt).toMatch(/^sum\n\nAnswer with only a JSON object, without any other text, that matches this JSON Schema:\n\{/);
      expect(invokes[1]!.messages[0]!.content[0]!.text).toMatch(/^Your answer does not match the required JSON Schema:\n- the answer is not JSON/);
    });

    it('should refuse sampling settings when no model id is known', async () => {
      ac = await startAgentCoreEmulator({ script: [{ text: 'never' }] });
      rx = await AgentRx.create({
        config: { provider: 'bedrock-agentcore', logLevel: 'silent', consumers: { terminal: false }, providers: { 'bedrock-agentcore': emulatorSection(ac) } },
        modules: [agentCoreProviderModule],
      });
      const e = await rejectedWith('invalid_options', rx.run({ prompt: 'x', temperature: 0.5 }));
      expect(e.message).toContain('temperature and topP go with a model id');
      expect(ac.invokes()).toHaveLength(0);
    });
  });

  describe('on Claude Managed Agents', () => {
    let cma: CmaEmulator | undefined;
    afterEach(async () => {
      await cma?.close();
      cma = undefined;
    });

    it('should ask for the schema in the prompt and return the validated output', async () => {
      cma = await startCmaEmulator({ script: [{ text: ANSWER }] });
      rx = await createCmaRx(cma);
      const result = await rx.run({ prompt: 'sum', outputSchema: Sum });
      expect(result.output).toBeInstanceOf(Sum);
      expect(result.output).toMatchObject({ total: 126 });
    });

    it('should refuse per-session settings with unsupported, naming the provider and the settings, before a session is created', async () => {
      cma = await startCmaEmulator({ script: [{ text: 'never' }] });
      rx = await createCmaRx(cma);
      const e = await rejectedWith('unsupported', rx.run({ prompt: 'x', model: 'claude-other', instructions: 'Be brief.' }));
      expect(e.message).toMatch(
        /^provider 'claude-managed-agents' does not take model, instructions per session: its host fixes them when the agent is provisioned/,
      );
      expect(e.details).toEqual({ provider: 'claude-managed-agents', settings: ['model', 'instructions'] });
      expect(cma.sessions.size).toBe(0);
    });
  });
});
