import { PassThrough } from 'node:stream';
import { HttpAgent, type RunAgentParameters } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { AgentRx } from '../../../src/agentrx.js';
import { runCli, type CliIo } from '../../../src/cli/cli.js';
import { demoAgUiToolsModule } from '../../../src/plugins/tools/index.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { RecordingConsumer } from '../../../src/testing/recording-consumer.js';
import { waitForOutput } from '../../servers/agui-http/agui-http.fixtures.js';

describe('the demo tools in a session on the demo model', () => {
  let emulator: OpenAiEmulator;
  let rx: AgentRx;
  let recording: RecordingConsumer;
  beforeEach(async () => {
    emulator = await startOpenAiEmulator({ model: 'demo' });
    recording = new RecordingConsumer();
    rx = await AgentRx.create({
      config: { provider: 'local', providers: { local: { baseUrl: emulator.baseUrl, model: 'demo' } } },
      modules: [demoAgUiToolsModule],
      consumers: [recording],
    });
  });
  afterEach(async () => {
    await rx.stop();
    await emulator.close();
  });

  describe('when the user asks to add a todo and the session has a shared state', () => {
    it('should publish the change as a STATE_DELTA and quote the result', async () => {
      const result = await rx.run({ prompt: 'Add a todo: buy milk', state: { todos: [] } });
      expect(result.terminal).toBe('end_turn');
      const deltas = recording.events.flatMap((e) => (e.type === 'STATE_DELTA' ? [e.delta] : []));
      expect(deltas).toEqual([[{ op: 'add', path: '/todos/0', value: { text: 'buy milk', done: false } }]]);
      expect(result.text).toContain('- add_todo returned: "added todo "buy milk"; the shared state now lists 1 todo"');
    });
  });

  describe('when the user asks to send an e-mail and confirmTool allows it', () => {
    it('should ask first, then run the tool, which only pretends', async () => {
      const asked: string[] = [];
      const result = await rx.run({ prompt: 'send an email to bob@example.com about lunch', confirmTool: (use) => (asked.push(use.name), true) });
      expect(asked).toEqual(['send_email']);
      expect(result.text).toContain('- send_email returned: "pretended to send an e-mail to bob@example.com with the subject "lunch"; nothing was sent');
    });
  });

  describe('when the user asks to send an e-mail and confirmTool denies it', () => {
    it('should quote the denial', async () => {
      const result = await rx.run({ prompt: 'send an email', confirmTool: () => ({ allow: false, denyMessage: 'not today' }) });
      expect(result.text).toContain(`- send_email failed: "the caller did not allow tool 'send_email' to run: not today"`);
    });
  });
});

/** What one AG-UI client run saw. */
interface ClientRun {
  readonly events: BaseEvent[];
  readonly failures: unknown[];
}

async function runClient(agent: HttpAgent, params: RunAgentParameters = {}): Promise<ClientRun> {
  const run: ClientRun = { events: [], failures: [] };
  await agent.runAgent(params, { onEvent: ({ event }) => void run.events.push(event), onRunFailed: ({ error }) => void run.failures.push(error) });
  return run;
}

/** The interrupts a RUN_FINISHED carries (the wire's `outcome`). */
function interruptsOf(events: readonly BaseEvent[]): { readonly id: string; readonly reason?: string }[] {
  const finished = events.find((e) => e.type === 'RUN_FINISHED') as { outcome?: { interrupts?: { id: string; reason?: string }[] } } | undefined;
  return finished?.outcome?.interrupts ?? [];
}

/** The content of each tool message the client holds. */
const toolMessages = (agent: HttpAgent): string[] =>
  agent.messages.flatMap((m) => (m.role === 'tool' ? [typeof m.content === 'string' ? m.content : JSON.stringify(m.content)] : []));

describe('agentrx serve --demo with an AG-UI client', () => {
  let stop: AbortController;
  let exit: Promise<number>;
  let base: string;
  beforeEach(async () => {
    stop = new AbortController();
    const out = new PassThrough();
    const io: CliIo = { out, err: new PassThrough(), env: {}, cwd: process.cwd(), signal: stop.signal };
    const url = waitForOutput(out, /^(http:\/\/127\.0\.0\.1:\d+\/)$/m);
    exit = runCli(['node', 'agentrx', 'serve', '--demo', '--port', '0'], io);
    base = (await url)[1]!;
  });
  afterEach(async () => {
    stop.abort();
    expect(await exit).toBe(0);
  });

  describe('when the user asks to add a todo', () => {
    it("should change the client's state through a STATE_DELTA", async () => {
      const agent = new HttpAgent({ url: `${base}agent`, threadId: 'todo-thread', initialState: { todos: [{ text: 'water the plants', done: true }] } });
      agent.addMessage({ id: 'u1', role: 'user', content: 'Add a todo: buy milk' });
      const run = await runClient(agent);
      expect(run.failures).toEqual([]);
      expect(run.events.map((e) => e.type)).toContain('STATE_DELTA');
      expect(agent.state).toEqual({
        todos: [
          { text: 'water the plants', done: true },
          { text: 'buy milk', done: false },
        ],
      });
      expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: expect.stringContaining('the shared state now lists 2 todos') });
    });
  });

  describe('when the user asks to send an e-mail and approves it', () => {
    it('should interrupt the run for approval, then run the tool once resumed with allow', async () => {
      const agent = new HttpAgent({ url: `${base}agent`, threadId: 'mail-thread' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'Send an email to bob@example.com about the launch' });
      const first = await runClient(agent);
      expect(first.failures).toEqual([]);
      const [interrupt] = interruptsOf(first.events);
      expect(interrupt).toMatchObject({ reason: 'tool_confirmation' });
      expect(toolMessages(agent)).toEqual([]);

      const second = await runClient(agent, { resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { allow: true } }] });
      expect(second.failures).toEqual([]);
      expect(toolMessages(agent)).toEqual([
        'pretended to send an e-mail to bob@example.com with the subject "the launch"; nothing was sent (send_email is a demo tool)',
      ]);
      expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: expect.stringContaining('- send_email returned:') });
    });
  });

  describe('when the user asks to send an e-mail and cancels the approval', () => {
    it('should not run the tool, and the model should quote the refusal', async () => {
      const agent = new HttpAgent({ url: `${base}agent`, threadId: 'mail-thread-2' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'send an email' });
      const [interrupt] = interruptsOf((await runClient(agent)).events);
      const second = await runClient(agent, { resume: [{ interruptId: interrupt!.id, status: 'cancelled' }] });
      expect(second.failures).toEqual([]);
      expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: expect.stringContaining('- send_email failed:') });
      expect(JSON.stringify(agent.messages)).not.toContain('pretended');
    });
  });
});
