import { PassThrough } from 'node:stream';
import { AgentRx } from '../../src/agentrx.js';
import { TerminalConsumer } from '../../src/consumers/terminal/terminal.consumer.js';
import { ContainerModule } from '../../src/core/util/inversify.js';
import type { AgUiEvent } from '../../src/core/events/agui-event.js';
import type { SessionEvent } from '../../src/core/events/session-event.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { startOpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { RecordingConsumer } from '../../src/testing/recording-consumer.js';
import { EchoToolHandler } from '../fakes/fake-tools.js';

/** One session recorded into a store, and what its consumers saw live. */
export interface RecordedSession {
  readonly sessionId: string;
  readonly envelopes: readonly SessionEvent[];
  readonly agui: readonly AgUiEvent[];
  /** What the non-TTY terminal renderer printed live (NO_COLOR). */
  readonly terminal: string;
}

/**
 * Runs a real Local session against the OpenAI emulator (one `echo` call, then an answer) with
 * `store` bound as the SessionStore, which the Session fills with its record and log.
 */
export async function recordSession(store: SessionStore): Promise<RecordedSession> {
  const emu = await startOpenAiEmulator({
    script: [{ text: 'Checking.', toolCalls: [{ id: 'call_1', name: 'echo', arguments: { text: 'hi' } }] }, { text: 'It says HI.' }],
  });
  const rec = new RecordingConsumer();
  const out = new PassThrough();
  let terminal = '';
  out.on('data', (c: Buffer) => (terminal += c.toString()));
  const rx = await AgentRx.create({
    config: { provider: 'local', logLevel: 'silent', providers: { local: { baseUrl: emu.baseUrl, model: 'scripted' } } },
    modules: [new ContainerModule((o) => void o.bind(SessionStore).toConstantValue(store))],
    tools: [EchoToolHandler],
    consumers: [rec, new TerminalConsumer({ out, live: false, env: { NO_COLOR: '1' } })],
  });
  try {
    const session = rx.start({ prompt: 'What does echo say to hi?' });
    const envelopes: SessionEvent[] = [];
    session.events$.subscribe((e) => envelopes.push(e));
    const result = await session.result;
    session.close();
    await session.closed;
    const sessionId = result.sessionId!;
    return { sessionId, envelopes, agui: rec.events, terminal };
  } finally {
    await rx.stop();
    await emu.close();
  }
}
