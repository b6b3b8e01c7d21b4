import 'reflect-metadata';
import { AgentRx } from '../../src/agentrx.js';
import { exportCassette, type Cassette } from '../../src/core/store/cassette.js';
import { ContainerModule } from '../../src/core/util/inversify.js';
import { injectable } from '../../src/core/util/inversify.js';
import type { AgUiEvent } from '../../src/core/events/agui-event.js';
import type { SessionEvent } from '../../src/core/events/session-event.js';
import { MemoryLogger } from '../../src/core/logger.js';
import type { ToolHandler } from '../../src/core/plugin/tool-handler.js';
import { MemorySessionStore } from '../../src/core/store/memory/memory-session-store.js';
import { SESSION_LOG_VERSION, SessionStore } from '../../src/core/store/session-store.js';
import { startAgentCoreEmulator } from '../../src/testing/agentcore-emulator.js';
import { startCmaEmulator } from '../../src/testing/cma-emulator.js';
import { startOpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { RecordingConsumer } from '../../src/testing/recording-consumer.js';
import { ReplayProvider } from '../../src/testing/replay-provider.js';
import { EchoInput, EchoToolHandler, resetFakeTools } from '../fakes/fake-tools.js';
import { CREDS, emulatorSection } from '../plugins/providers/bedrock-agentcore/helpers.js';

/** An `echo` whose answer changed since the recording (lower case instead of upper case). */
@injectable()
class ChangedEchoToolHandler implements ToolHandler<EchoInput> {
  readonly name = 'echo';
  readonly description = 'Echoes text back in upper case.';
  readonly inputType = EchoInput;
  handle(input: EchoInput): string {
    return input.text.toLowerCase();
  }
}

interface Host {
  /** The config of a recording AgentRx against the host's emulator. */
  readonly config: Record<string, unknown>;
  close(): Promise<void>;
}

/** The three emulators, each scripted with one turn that calls `echo`, then an answer. */
const hosts: Record<string, () => Promise<Host>> = {
  local: async () => {
    const emu = await startOpenAiEmulator({
      script: [{ text: 'Checking.', toolCalls: [{ id: 'call_1', name: 'echo', arguments: { text: 'hi' } }] }, { text: 'It says HI.' }],
    });
    return { config: { provider: 'local', providers: { local: { baseUrl: emu.baseUrl, model: 'scripted' } } }, close: () => emu.close() };
  },
  'claude-managed-agents': async () => {
    const emu = await startCmaEmulator({
      script: [{ text: 'Let me check.', toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'hi' } }] }, { text: 'It says HI.' }],
    });
    return {
      config: {
        provider: 'claude-managed-agents',
        providers: { 'claude-managed-agents': { apiKey: 'sk-ant-test-0123456789-secret', baseUrl: emu.baseUrl, retryBaseMs: 1 } },
      },
      close: () => emu.close(),
    };
  },
  'bedrock-agentcore': async () => {
    const emu = await startAgentCoreEmulator({
      credentials: CREDS,
      script: [{ text: 'Working on it.', toolUses: [{ id: 'tooluse_1', name: 'echo', input: { text: 'hi' } }] }, { text: 'It says HI.' }],
    });
    return { config: { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': emulatorSection(emu) } }, close: () => emu.close() };
  },
};

/** What legitimately differs between a recording and its replay: clock readings and tool durations. */
function comparable(events: readonly AgUiEvent[]): unknown[] {
  return events.map((e) => {
    const { timestamp: _t, ...rest } = e as AgUiEvent & { timestamp?: number; rawEvent?: Record<string, unknown> };
    if (e.type === 'TOOL_CALL_RESULT' && rest.rawEvent) {
      const { durationMs: _d, ...raw } = rest.rawEvent;
      return { ...rest, rawEvent: raw };
    }
    return rest;
  });
}

interface Recording {
  readonly cassette: Cassette;
  readonly agui: AgUiEvent[];
  /** The envelopes the session published on `events$` (what the store's log must hold). */
  readonly envelopes: SessionEvent[];
  readonly text: string;
}

/** Runs one real session against the host into a MemorySessionStore and exports its cassette. */
async function record(host: Host): Promise<Recording> {
  const store = new MemorySessionStore();
  const rec = new RecordingConsumer();
  const rx = await AgentRx.create({
    config: { ...host.config, logLevel: 'silent', consumers: { terminal: false } },
    modules: [new ContainerModule((o) => void o.bind(SessionStore).toConstantValue(store))],
    tools: [EchoToolHandler],
    consumers: [rec],
  });
  try {
    const session = rx.start({ prompt: 'What does echo say to hi?' });
    const envelopes: SessionEvent[] = [];
    session.events$.subscribe((e) => envelopes.push(e));
    const result = await session.result;
    session.close();
    await session.closed;
    const cassette = await exportCassette(store, result.sessionId!);
    return { cassette, agui: rec.events, envelopes, text: result.text };
  } finally {
    await rx.stop();
  }
}

/** Replays `cassette` in a fresh AgentRx with only the replay provider and `tool`. */
async function replay(
  cassette: Cassette,
  tool: typeof EchoToolHandler | typeof ChangedEchoToolHandler,
  strict = false,
): Promise<{ replay: ReplayProvider; rec: RecordingConsumer; logger: MemoryLogger; run: Promise<{ text: string }> }> {
  const logger = new MemoryLogger();
  const provider = new ReplayProvider(JSON.parse(JSON.stringify(cassette)) as Cassette, { strict, logger });
  const rec = new RecordingConsumer();
  const rx = await AgentRx.create({
    defaults: false,
    providers: [provider],
    tools: [tool],
    consumers: [rec],
    config: { provider: provider.id, logLevel: 'silent', consumers: { terminal: false } },
  });
  const run = rx.run({ prompt: 'What does echo say to hi?' }).finally(() => rx.stop());
  return { replay: provider, rec, logger, run };
}

describe('ReplayProvider', () => {
  beforeEach(() => resetFakeTools());

  describe.each(Object.keys(hosts))('over a cassette recorded from the %s emulator', (id) => {
    let host: Host;
    let recording: Recording;
    beforeAll(async () => {
      host = await hosts[id]!();
      recording = await record(host);
    });
    afterAll(async () => {
      await host?.close();
    });

    describe('when replayed with the same tools', () => {
      it('should produce the same AG-UI stream (timestamps and tool durations aside), run the tool again and report no mismatch', async () => {
        const { replay: provider, rec, run } = await replay(recording.cassette, EchoToolHandler);
        const result = await run;

        expect(provider.id).toBe(id);
        // The store's log is what the session published, and its record says how it ended.
        expect(recording.cassette.envelopes).toEqual(recording.envelopes);
        expect(recording.cassette.record).toMatchObject({ provider: id, status: expect.stringMatching(/^(idle|completed)$/) });
        expect(recording.agui.some((e) => e.type === 'TOOL_CALL_RESULT')).toBe(true);
        expect(comparable(rec.events)).toEqual(comparable(recording.agui));
        expect(result.text).toBe(recording.text);
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['hi']);
        expect(provider.mismatches).toEqual([]);
      });
    });

    describe('when a tool now returns something else', () => {
      it('should report the mismatch with both values and still finish', async () => {
        const { replay: provider, rec, logger, run } = await replay(recording.cassette, ChangedEchoToolHandler);
        await run;

        expect(provider.mismatches).toEqual([
          {
            toolUseId: expect.any(String),
            name: 'echo',
            recorded: expect.objectContaining({ content: 'HI', isError: false }),
            actual: expect.objectContaining({ content: 'hi', isError: false }),
          },
        ]);
        expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
          expect.stringMatching(/replay mismatch: tool 'echo' \(.+\) returned "hi" but the cassette recorded "HI"/),
        ]);
        expect(rec.events.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ content: 'hi' });
      });
    });

    describe('when a tool now returns something else, with strict', () => {
      it('should fail the run with a provider_error naming both values', async () => {
        const { run } = await replay(recording.cassette, ChangedEchoToolHandler, true);
        await expect(run).rejects.toMatchObject({ code: 'provider_error', message: expect.stringMatching(/returned "hi" but the cassette recorded "HI"/) });
      });
    });
  });

  describe('.pollTurn', () => {
    describe('when the replayed session asks for more turns than were recorded', () => {
      it('should fail with a provider_error saying the replay went further', async () => {
        const cassette: Cassette = {
          version: SESSION_LOG_VERSION,
          record: {
            version: SESSION_LOG_VERSION,
            sessionId: 's1',
            provider: 'local',
            threadId: 's1',
            status: 'completed',
            createdAt: 1,
            updatedAt: 1,
            ledger: [],
          },
          envelopes: [],
        };
        const { run } = await replay(cassette, EchoToolHandler);
        await expect(run).rejects.toMatchObject({ code: 'provider_error', message: expect.stringContaining('went further than the recorded one') });
      });
    });
  });
});
