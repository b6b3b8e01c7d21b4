import { AgentRx } from '../../../src/agentrx.js';
import { startAgUiServer } from '../../../src/servers/agui-http/agui-http.server.js';
import type { ConfirmTool } from '../../../src/core/session/session-options.js';
import { cmaProviderModule } from '../../../src/plugins/providers/claude-managed-agents/cma.module.js';
import { startCmaEmulator } from '../../../src/testing/cma-emulator.js';
import { AddToolHandler, EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';
import { openStream, postJson, runInput, sseEvents, startStack, type Stack, type WireEvent } from './agui-http.fixtures.js';

const isStarted = (e: { type: string }): boolean => e.type === 'RUN_STARTED';

describe('AgUiThreads (over HTTP)', () => {
  beforeEach(() => resetFakeTools());
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('POST /agent when the host asks to confirm a tool of its own', () => {
    /** One run against a CMA emulator whose agent asks to confirm web_search; returns the AG-UI events. */
    async function runAsking(confirmTool?: ConfirmTool): Promise<WireEvent[]> {
      const emu = await startCmaEmulator({
        apiKey: 'sk-ant-agui-test-key',
        script: [{ serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }] }, { text: 'Done.' }],
      });
      const rx = await AgentRx.create({
        modules: [cmaProviderModule],
        config: {
          provider: 'claude-managed-agents',
          consumers: { terminal: false },
          providers: { 'claude-managed-agents': { apiKey: 'sk-ant-agui-test-key', baseUrl: emu.baseUrl } },
        },
      });
      const server = await startAgUiServer({ rx, port: 0, ...(confirmTool ? { confirmTool } : {}) });
      try {
        return sseEvents((await postJson(`${server.url}agent`, runInput({ threadId: 't-confirm' }, 'search'))).text);
      } finally {
        await server.close();
        await rx.stop();
        await emu.close();
      }
    }

    it('should end the run with an interrupt the client answers (AG-UI 1.0), without confirmTool', async () => {
      const events = await runAsking();
      expect(events.at(-1)).toMatchObject({
        type: 'RUN_FINISHED',
        outcome: { type: 'interrupt', interrupts: [{ id: 'sevt_ws', reason: 'tool_confirmation', toolCallId: 'sevt_ws' }] },
      });
      expect(events.filter((e) => e.type === 'RUN_ERROR' || e.type === 'RUN_FINISHED')).toHaveLength(1);
    });

    it("should answer with the endpoint's confirmTool and finish", async () => {
      const events = await runAsking(() => true);
      expect(events.at(-1)!.type).toBe('RUN_FINISHED');
      expect(
        events
          .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
          .map((e) => e.delta)
          .join(''),
      ).toBe('Done.');
    });
  });

  describe('POST /agent beyond maxConcurrentRuns', () => {
    it('should answer 429 with Retry-After while the limit is reached, and accept again once a run ended', async () => {
      stack = await startStack({
        script: [{ text: 'Now there is room.' }],
        faults: { 0: { kind: 'hang' } },
        handler: { maxConcurrentRuns: 1, retryAfterSeconds: 3 },
      });
      const first = await openStream(stack.endpoint, runInput({ threadId: 'a', runId: 'a1' }), isStarted);
      await stack.emulator.waitForRequest(0);
      expect(stack.server.handler.activeRuns).toBe(1);

      const refused = await postJson(stack.endpoint, runInput({ threadId: 'b', runId: 'b1' }));
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('3');
      expect(refused.json).toMatchObject({ error: 'too_many_runs', retryAfterSeconds: 3 });
      expect(stack.sessions).toHaveLength(1);

      first.abort();
      await stack.sessions[0]!.session.closed;
      const accepted = await postJson(stack.endpoint, runInput({ threadId: 'b', runId: 'b2' }));
      expect(accepted.status).toBe(200);
      expect(
        sseEvents(accepted.text)
          .map((e) => e.type)
          .at(-1),
      ).toBe('RUN_FINISHED');
    });
  });

  describe('POST /agent on a thread whose run is still streaming', () => {
    it('should answer 409 and leave the running run alone', async () => {
      stack = await startStack({ script: [{ text: 'Finally.' }], faults: { 0: { kind: 'stall', afterChunks: 2 } } });
      const first = await openStream(stack.endpoint, runInput({ runId: 'r1' }), isStarted);
      const busy = await postJson(stack.endpoint, runInput({ runId: 'r2' }));
      expect(busy.status).toBe(409);
      expect(busy.json.error).toBe('thread_busy');
      expect(stack.server.handler.activeRuns).toBe(1);
      first.abort();
    });
  });

  describe('when the client disconnects mid-run', () => {
    it('should abort the provider request and cancel the session', async () => {
      stack = await startStack({ faults: { 0: { kind: 'hang' } } });
      const stream = await openStream(stack.endpoint, runInput({ threadId: 'gone' }), isStarted);
      await stack.emulator.waitForRequest(0);
      expect(stack.server.handler.activeRuns).toBe(1);

      stream.abort();

      const upstream = await stack.emulator.waitForClose(0);
      expect(upstream.clientAborted).toBe(true);
      const log = stack.sessions[0]!;
      await log.session.closed;
      expect(log.errors.map((e) => e.code)).toEqual(['cancelled']);
      expect(stack.server.handler.activeRuns).toBe(0);
      expect(stack.server.handler.threadCount).toBe(0);
    });

    it('should cancel a run whose tools already ran (mid model call), and continue the thread’s stored conversation next time', async () => {
      stack = await startStack({
        script: [{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x' } }] }, { text: 'The echo said X.' }, { text: 'picked up' }],
        faults: { 1: { kind: 'hang' } },
        tools: [EchoToolHandler, AddToolHandler],
      });
      const stream = await openStream(stack.endpoint, runInput({ threadId: 'tools-gone' }), (e) => e.type === 'TOOL_CALL_RESULT');
      await stack.emulator.waitForRequest(1);
      stream.abort();
      expect((await stack.emulator.waitForClose(1)).clientAborted).toBe(true);
      await stack.sessions[0]!.session.closed;

      const next = await postJson(stack.endpoint, runInput({ threadId: 'tools-gone', runId: 'r2' }, 'and now?'));
      expect(
        sseEvents(next.text)
          .map((e) => e.type)
          .at(-1),
      ).toBe('RUN_FINISHED');
      expect(stack.sessions).toHaveLength(2);
      // The new session resumed the stored one: it first finished the interrupted turn (the model
      // answers the tool result), then sent the new message; the model's last request holds it all.
      const last = stack.emulator.requests.filter((r) => r.completion !== undefined).at(-1)!;
      const messages = (last.body as { messages: { role: string; content?: string; tool_call_id?: string }[] }).messages;
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
      expect(messages[2]!.tool_call_id).toBe('c1');
      expect(messages[3]!.content).toBe('The echo said X.');
      expect(messages.at(-1)!.content).toBe('and now?');
    });
  });

  describe('.close', () => {
    it('should end an open stream with one RUN_ERROR cancelled and refuse new runs', async () => {
      stack = await startStack({ faults: { 0: { kind: 'hang' } } });
      const stream = await openStream(stack.endpoint, runInput(), isStarted);
      await stack.emulator.waitForRequest(0);
      const closing = stack.server.handler.close();
      const events = await stream.readToEnd();
      await closing;
      expect(events.map((e) => e.type)).toEqual(['RUN_STARTED', 'RUN_ERROR']);
      expect(events[1]).toMatchObject({ code: 'cancelled' });
      const refused = await postJson(stack.endpoint, runInput({ threadId: 'later' }));
      expect(refused.status).toBe(503);
    });
  });
});
