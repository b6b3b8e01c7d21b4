import 'reflect-metadata';
import { AgentRx } from '../../../../src/agentrx.js';
import { MemoryLogger, Logger } from '../../../../src/core/logger.js';
import { ContainerModule } from '../../../../src/core/util/inversify.js';
import { agentCoreProviderModule } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore.module.js';
import { ATTEMPT_FAILED } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore.provider.js';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../../../src/testing/agentcore-emulator.js';
import { RecordingConsumer } from '../../../../src/testing/recording-consumer.js';
import { AddToolHandler, EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';
import { CREDS, emulatorSection } from './helpers.js';
import { rejectedWith } from '../../../support/agentrx-errors.js';

type Body = {
  messages: { role: string; content: { toolUse?: { toolUseId: string }; toolResult?: { toolUseId: string; content: { text: string }[]; status: string } }[] }[];
};

describe('AgentCoreAgentProvider through AgentRx', () => {
  let emulator: AgentCoreEmulator;
  let rx: AgentRx | undefined;
  let logger: MemoryLogger;

  const section = (extra: Record<string, unknown> = {}): Record<string, unknown> => emulatorSection(emulator, extra);
  const loggerModule = (): ContainerModule => new ContainerModule((o) => void o.bind(Logger).toConstantValue(logger));

  beforeEach(() => {
    resetFakeTools();
    logger = new MemoryLogger();
  });
  afterEach(async () => {
    await rx?.stop();
    rx = undefined;
    await emulator?.close();
  });

  describe('.run', () => {
    describe('when the model makes two parallel tool uses split across frames and TCP writes', () => {
      it('should run each tool once, have the resume pair accepted, and end with summed usage', async () => {
        emulator = await startAgentCoreEmulator({
          credentials: CREDS,
          chunkBytes: 11,
          script: [
            {
              text: 'Working on it.',
              toolUses: [
                { id: 'tooluse_echo1', name: 'echo', input: { text: 'agent' }, pieces: 4 },
                { id: 'tooluse_add1', name: 'add', input: { a: 2, b: 40 }, pieces: 5 },
              ],
              interleave: true,
              usage: { inputTokens: 50, outputTokens: 10 },
            },
            { text: 'AGENT, and the sum is 42.', usage: { inputTokens: 80, outputTokens: 9 } },
          ],
        });
        const rec = new RecordingConsumer();
        rx = await AgentRx.create({
          config: { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': section() } },
          modules: [agentCoreProviderModule, loggerModule()],
          tools: [EchoToolHandler, AddToolHandler],
          consumers: [rec],
        });
        const result = await rx.run({ prompt: 'Use both tools.' });

        expect(result).toMatchObject({
          provider: 'bedrock-agentcore',
          terminal: 'end_turn',
          stopReason: 'end_turn',
          turns: 2,
          text: 'AGENT, and the sum is 42.',
        });
        expect(result.usage).toEqual({ inputTokens: 130, outputTokens: 19 });
        expect(result.sessionId).toMatch(/^agentrx-/);
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['agent']);
        expect(EchoToolHandler.calls[0]!.ctx.toolUseId).toBe('tooluse_echo1');
        expect(AddToolHandler.calls).toBe(1);

        const invokes = emulator.invokes();
        expect(invokes.map((r) => r.outcome)).toEqual(['completed', 'completed']);
        expect(invokes[0]!.writes).toBeGreaterThan(invokes[0]!.framesSent);
        const resume = (invokes[1]!.body as Body).messages;
        expect(resume.map((m) => m.role)).toEqual(['assistant', 'user']);
        expect(resume[1]!.content.map((c) => [c.toolResult!.toolUseId, c.toolResult!.content[0]!.text, c.toolResult!.status])).toEqual([
          ['tooluse_echo1', 'AGENT', 'success'],
          ['tooluse_add1', '{"sum":42}', 'success'],
        ]);
        expect(emulator.history(result.sessionId!).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
        expect(rec.text).toBe('Working on it.AGENT, and the sum is 42.');
        expect(rec.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => (e as { toolCallId: string }).toolCallId)).toEqual([
          'tooluse_echo1',
          'tooluse_add1',
        ]);
      });
    });

    describe('when the first invoke is truncated', () => {
      it('should retry it and count only the successful attempt', async () => {
        emulator = await startAgentCoreEmulator({
          credentials: CREDS,
          script: [{ text: 'Complete answer.', usage: { inputTokens: 12, outputTokens: 3 } }],
          faults: { 0: { kind: 'truncate', afterFrames: 2 } },
        });
        rx = await AgentRx.create({
          config: { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': section() } },
          modules: [agentCoreProviderModule, loggerModule()],
        });
        const result = await rx.run({ prompt: 'hi', retainEvents: true });
        expect(result).toMatchObject({ terminal: 'end_turn', turns: 1, text: 'Complete answer.', usage: { inputTokens: 12, outputTokens: 3 } });
        expect(emulator.invokes()).toHaveLength(2);
        expect(result.events.filter((e) => e['type'] === ATTEMPT_FAILED)).toHaveLength(1);
        expect(result.events.filter((e) => e['messageStart'] !== undefined)).toHaveLength(2);
      });
    });

    describe('when an idle session is resumed with no prompt and no timeoutMs', () => {
      it('should end at once with invalid_options saying there is nothing to do, invoking nothing (not wait runTimeoutMs)', async () => {
        emulator = await startAgentCoreEmulator({ credentials: CREDS, script: [{ text: 'Done.' }] });
        rx = await AgentRx.create({
          // A run timeout far past the test's own: reaching it would fail the test by its timeout.
          config: { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': section() }, limits: { runTimeoutMs: 600_000 } },
          modules: [agentCoreProviderModule, loggerModule()],
        });
        const first = await rx.run({ prompt: 'hi' });
        expect(emulator.invokes()).toHaveLength(1);
        const e = await rejectedWith('invalid_options', rx.run({ sessionId: first.sessionId }));
        expect(e.message).toBe(
          `session '${first.sessionId}' was resumed without a prompt, but it waits on nothing (no tool call is pending, and its host answers only to input): pass a prompt to continue it`,
        );
        expect(emulator.invokes()).toHaveLength(1);
      });
    });

    describe('when the model sends tool input that is not valid JSON', () => {
      it('should answer with an is_error result without running the tool', async () => {
        emulator = await startAgentCoreEmulator({
          credentials: CREDS,
          script: [{ toolUses: [{ id: 'tu-bad', name: 'echo', input: '{"text": "oops' }] }, { text: 'Sorry.' }],
        });
        rx = await AgentRx.create({
          config: { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': section() } },
          modules: [agentCoreProviderModule, loggerModule()],
          tools: [EchoToolHandler],
        });
        const result = await rx.run({ prompt: 'go' });
        expect(result.text).toBe('Sorry.');
        expect(EchoToolHandler.calls).toHaveLength(0);
        const answer = (emulator.invokes()[1]!.body as Body).messages[1]!.content[0]!.toolResult!;
        expect(answer).toMatchObject({ toolUseId: 'tu-bad', status: 'error' });
        expect(answer.content[0]!.text).toContain("invalid arguments for tool 'echo'");
      });
    });

    describe('when an exception frame arrives', () => {
      it('should reject the run with harness_stream_error', async () => {
        emulator = await startAgentCoreEmulator({
          credentials: CREDS,
          script: [{ text: 'x y z' }],
          faults: { 0: { kind: 'exception', afterFrames: 1, exceptionType: 'runtimeClientError', message: 'microVM crashed' } },
        });
        rx = await AgentRx.create({
          config: { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': section() } },
          modules: [agentCoreProviderModule, loggerModule()],
        });
        await expect(rx.run({ prompt: 'go' })).rejects.toMatchObject({
          code: 'harness_stream_error',
          details: { exceptionType: 'RuntimeClientError', message: 'microVM crashed' },
        });
        expect(emulator.invokes()).toHaveLength(1);
      });
    });

    describe('when the session is cancelled while the harness streams', () => {
      it('should abort the invoke (the emulator sees the socket close) and reject with cancelled', async () => {
        emulator = await startAgentCoreEmulator({
          credentials: CREDS,
          script: [{ text: 'one two three four' }],
          faults: { 0: { kind: 'stall', afterFrames: 2 } },
        });
        const rec = new RecordingConsumer();
        rx = await AgentRx.create({
          config: { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': section() } },
          modules: [agentCoreProviderModule, loggerModule()],
          consumers: [rec],
        });
        const session = rx.start({ prompt: 'go' });
        let sawText!: () => void;
        const textSeen = new Promise<void>((r) => (sawText = r));
        session.events$.subscribe((e) => e.raw['type'] === 'agentrx.text_delta' && sawText());
        await textSeen;
        session.cancel();
        await expect(session.result).rejects.toMatchObject({ code: 'cancelled' });
        const closed = await emulator.waitForClose(0);
        expect(closed.finished).toBe(false);
        await session.closed;
        expect(rec.stops).toEqual(['cancelled']);
      });
    });

    describe('when no harnessArn is configured but executionRoleArn is', () => {
      it('should provision the harness through the control plane and invoke it', async () => {
        emulator = await startAgentCoreEmulator({
          credentials: CREDS,
          script: [{ text: 'Provisioned and running.' }],
          control: { statusSequence: ['CREATING', 'READY'] },
        });
        rx = await AgentRx.create({
          config: {
            provider: 'bedrock-agentcore',
            agent: { name: 'demo-agent', systemPrompt: 'Be brief.' },
            providers: { 'bedrock-agentcore': section({ harnessArn: undefined, executionRoleArn: 'arn:aws:iam::123456789012:role/exec', pollIntervalMs: 1 }) },
          },
          modules: [agentCoreProviderModule, loggerModule()],
          tools: [EchoToolHandler],
        });
        const result = await rx.run({ prompt: 'hi' });
        expect(result.text).toBe('Provisioned and running.');
        const [harness] = emulator.harnesses();
        expect(emulator.requests.map((r) => r.operation)).toEqual(['CreateHarness', 'GetHarness', 'GetHarness', 'InvokeHarness']);
        expect(emulator.invokes()[0]!.query['harnessArn']).toBe(harness!.arn);
        expect(harness!.harnessName).toMatch(/^agentrx_demo_agent_[0-9a-f]{8}$/);
      });
    });

    describe('when the provider is selected without a harness', () => {
      it('should reject the run with invalid_config', async () => {
        emulator = await startAgentCoreEmulator({ credentials: CREDS });
        rx = await AgentRx.create({
          config: { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': section({ harnessArn: undefined }) } },
          modules: [agentCoreProviderModule, loggerModule()],
        });
        await expect(rx.run({ prompt: 'hi' })).rejects.toMatchObject({ code: 'invalid_config' });
        expect(emulator.requests).toHaveLength(0);
      });
    });
  });

  describe('AgentRx.create', () => {
    it('should load the module without breaking a config that selects another provider', async () => {
      rx = await AgentRx.create({ config: { provider: 'local' }, modules: [agentCoreProviderModule, loggerModule()] });
      expect(rx.pluginIds.providers).toEqual(expect.arrayContaining(['local', 'bedrock-agentcore']));
    });

    it('should report invalid section values when the provider is selected', async () => {
      await expect(
        AgentRx.create({
          config: { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': { region: 'nowhere', accessKeyId: 'AKID' } } },
          modules: [agentCoreProviderModule, loggerModule()],
        }),
      ).rejects.toMatchObject({
        code: 'invalid_config',
        message: expect.stringMatching(
          /bedrock-agentcore\.region[\s\S]*bedrock-agentcore\.secretAccessKey|bedrock-agentcore\.secretAccessKey[\s\S]*bedrock-agentcore\.region/,
        ),
      });
    });
  });
});
