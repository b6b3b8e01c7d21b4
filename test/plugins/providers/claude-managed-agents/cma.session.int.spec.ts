import type { AgentRx } from '../../../../src/agentrx.js';
import { isAgentRxEvent, type SessionEvent } from '../../../../src/core/events/session-event.js';
import { startCmaEmulator, type CmaEmulator, type CmaEmulatorOptions } from '../../../../src/testing/cma-emulator.js';
import { RecordingConsumer } from '../../../../src/testing/recording-consumer.js';
import { EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';
import { createCmaRx, received, sends } from './cma-fixtures.js';

describe('CmaAgentProvider through AgentRx', () => {
  let emu: CmaEmulator | undefined;
  let rx: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await rx?.stop();
    await emu?.close();
    rx = undefined;
    emu = undefined;
  });

  async function setup(o: CmaEmulatorOptions, cfg: Parameters<typeof createCmaRx>[1] = {}): Promise<{ emu: CmaEmulator; rx: AgentRx }> {
    emu = await startCmaEmulator(o);
    rx = await createCmaRx(emu, cfg);
    return { emu, rx };
  }

  /** Runs a live session to its first result, collecting envelopes; closes it. */
  async function runCollecting(
    r: AgentRx,
    opts: Parameters<AgentRx['start']>[0],
  ): Promise<{ envs: SessionEvent[]; result: Awaited<ReturnType<AgentRx['run']>> }> {
    const s = r.start(opts);
    const envs: SessionEvent[] = [];
    s.events$.subscribe((e) => envs.push(e));
    try {
      const result = await s.result;
      return { envs, result };
    } finally {
      s.close();
      await s.closed;
    }
  }

  describe('.run', () => {
    describe('when the agent asks for custom tools and then answers', () => {
      it('should post exactly one user.custom_tool_result per tool (right id, is_error as returned), then end_turn', async () => {
        const rec = new RecordingConsumer();
        const { emu, rx } = await setup(
          {
            script: [
              {
                text: 'Let me check.',
                toolUses: [
                  { id: 'toolu_1', name: 'echo', input: { text: 'hi' } },
                  { id: 'toolu_2', name: 'throws' },
                ],
                usage: { input_tokens: 7, output_tokens: 3 },
              },
              { text: 'Done.', usage: { input_tokens: 11, output_tokens: 2 } },
            ],
          },
          { consumers: [rec] },
        );
        const result = await rx.run({ prompt: 'go' });

        expect(result).toMatchObject({
          terminal: 'end_turn',
          stopReason: { type: 'end_turn' },
          text: 'Done.',
          turns: 2,
          usage: { inputTokens: 18, outputTokens: 5 },
        });
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['hi']);
        const results = received(emu, result.sessionId, 'user.custom_tool_result');
        expect(results.map((r) => [r['custom_tool_use_id'], r['is_error']])).toEqual([
          ['toolu_1', false],
          ['toolu_2', true],
        ]);
        expect(results[0]!['content']).toEqual([{ type: 'text', text: 'HI' }]);
        expect(sends(emu).map((s) => s.events.map((e) => e['type']))).toEqual([['user.message'], ['user.custom_tool_result', 'user.custom_tool_result']]);
        expect(received(emu, result.sessionId, 'user.message')).toEqual([expect.objectContaining({ content: [{ type: 'text', text: 'go' }] })]);
        expect(rec.text).toBe('Let me check.Done.');
      });
    });

    describe('when the first requires_action names only one of two tool uses (split batch)', () => {
      it('should run each tool once and post each result once', async () => {
        const { emu, rx } = await setup({
          script: [
            {
              toolUses: [
                { id: 'toolu_1', name: 'echo', input: { text: 'a' } },
                { id: 'toolu_2', name: 'echo', input: { text: 'b' } },
              ],
            },
            { text: 'both' },
          ],
          faults: { splitBatchTurns: [0] },
        });
        const result = await rx.run({ prompt: 'go' });
        expect(result).toMatchObject({ terminal: 'end_turn', text: 'both', turns: 3 });
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['a', 'b']);
        expect(received(emu, result.sessionId, 'user.custom_tool_result').map((r) => r['custom_tool_use_id'])).toEqual(['toolu_1', 'toolu_2']);
      });
    });

    describe('when a stale idle re-names a tool use whose result is in flight', () => {
      it('should run the tool once and re-post its recorded result at most once', async () => {
        const { emu, rx } = await setup({
          script: [{ toolUses: [{ id: 'toolu_s', name: 'echo', input: { text: 'x' } }] }, { text: 'done' }],
          faults: { staleIdleTurns: [0] },
        });
        const { envs, result } = await runCollecting(rx, { prompt: 'go' });
        expect(result).toMatchObject({ terminal: 'end_turn', text: 'done' });
        expect(EchoToolHandler.calls).toHaveLength(1);
        const posted = received(emu, result.sessionId, 'user.custom_tool_result');
        expect(posted.length).toBeLessThanOrEqual(2);
        expect(posted).toHaveLength(2);
        expect(posted.map((p) => [p['custom_tool_use_id'], p['content']])).toEqual([
          ['toolu_s', [{ type: 'text', text: 'X' }]],
          ['toolu_s', [{ type: 'text', text: 'X' }]],
        ]);
        const toolResults = envs.filter((e) => isAgentRxEvent(e, 'agentrx.tool_result')).map((e) => e.raw['replayed']);
        expect(toolResults).toEqual([false, true]);
      });
    });

    describe('when results are echoed late (after the next idle)', () => {
      it('should run every tool once and post every result once', async () => {
        const { emu, rx } = await setup({
          script: [
            { toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'a' } }] },
            { toolUses: [{ id: 'toolu_2', name: 'echo', input: { text: 'b' } }] },
            { text: 'end' },
          ],
          faults: { lateEcho: true },
        });
        const result = await rx.run({ prompt: 'go' });
        expect(result).toMatchObject({ terminal: 'end_turn', text: 'end', turns: 3 });
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['a', 'b']);
        expect(received(emu, result.sessionId, 'user.custom_tool_result').map((r) => r['custom_tool_use_id'])).toEqual(['toolu_1', 'toolu_2']);
      });
    });

    describe('when resuming a session whose unanswered tool use is on page 2 of the history', () => {
      it('should redrive the tool use first, then send the prompt, without replaying settled turns', async () => {
        const { emu, rx } = await setup(
          { script: [{ text: 'tool noted' }, { text: 'answer' }], faults: { duplicateOnReattach: 4 } },
          { section: { listPageSize: 4 } },
        );
        const sessionId = emu.seedSession([
          { type: 'user.message', content: [{ type: 'text', text: 'first' }] },
          { type: 'session.status_running' },
          { type: 'agent.message', content: [{ type: 'text', text: 'Working on it' }] },
          { type: 'span.model_request_end', model_usage: { input_tokens: 1, output_tokens: 1 } },
          { type: 'agent.custom_tool_use', id: 'toolu_r', name: 'echo', input: { text: 'resumed' } },
          { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: ['toolu_r'] } },
        ]);
        const seeded = new Set(emu.sessions.get(sessionId)!.history.map((e) => e['id']));
        const { envs, result } = await runCollecting(rx, { sessionId, prompt: 'next' });

        expect(result).toMatchObject({ sessionId, terminal: 'end_turn', text: 'answer', turns: 2 });
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['resumed']);
        const posted = sends(emu).map((s) => s.events.map((e) => [e['type'], e['custom_tool_use_id'] ?? (e['content'] as { text: string }[])[0]!.text]));
        expect(posted).toEqual([[['user.custom_tool_result', 'toolu_r']], [['user.message', 'next']]]);
        const pages = emu.requests.filter((r) => r.method === 'GET' && r.path === `/v1/sessions/${sessionId}/events`).map((r) => r.query['page'] ?? null);
        expect(pages).toEqual([null, 'page_4']);
        expect(envs.filter((e) => e.source === 'provider' && seeded.has(e.id))).toEqual([]);
        expect(emu.sessions.get(sessionId)!.attachments).toBe(1);
      });
    });

    describe('when the stream stalls (no bytes, no heartbeats)', () => {
      it('should fire the idle timeout, reconnect and finish', async () => {
        const { emu, rx } = await setup(
          {
            script: [{ text: 'a', toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'x' } }] }, { text: 'b' }],
            faults: { stallAfter: 3 },
            heartbeatMs: 0,
          },
          { section: { streamIdleTimeoutMs: 150 } },
        );
        const { envs, result } = await runCollecting(rx, { prompt: 'go' });
        expect(result).toMatchObject({ terminal: 'end_turn', text: 'b', turns: 2 });
        expect(EchoToolHandler.calls).toHaveLength(1);
        expect(emu.sessions.get(result.sessionId!)!.attachments).toBe(2);
        const reconnecting = envs.filter((e) => isAgentRxEvent(e, 'agentrx.reconnecting'));
        expect(reconnecting.map((e) => e.raw['reason'])).toEqual([expect.stringMatching(/idle for more than 150 ms/)]);
      });
    });

    describe('when heartbeats arrive while the agent thinks longer than the idle timeout', () => {
      it('should keep the stream (heartbeats reset the idle timer)', async () => {
        const { emu, rx } = await setup({ script: [{ text: 'slow', thinkMs: 900 }], heartbeatMs: 20 }, { section: { streamIdleTimeoutMs: 300 } });
        const result = await rx.run({ prompt: 'go' });
        expect(result.text).toBe('slow');
        expect(emu.sessions.get(result.sessionId!)!.attachments).toBe(1);
      });

      it('should reconnect when there are no heartbeats (control)', async () => {
        const { emu, rx } = await setup({ script: [{ text: 'slow', thinkMs: 900 }], heartbeatMs: 0 }, { section: { streamIdleTimeoutMs: 300 } });
        const result = await rx.run({ prompt: 'go' });
        expect(result.text).toBe('slow');
        expect(emu.sessions.get(result.sessionId!)!.attachments).toBeGreaterThan(1);
      });
    });

    describe('when an outcome is given', () => {
      it('should kick off with user.define_outcome and end end_turn with the raw satisfied stop reason', async () => {
        const { emu, rx } = await setup({ script: [{ text: 'A haiku.', outcome: { verdicts: ['needs_revision', 'satisfied'] } }] });
        const result = await rx.run({ outcome: { description: 'Write a haiku', rubric: '# 5-7-5', maxIterations: 3 } });
        expect(result).toMatchObject({ terminal: 'end_turn', stopReason: { type: 'satisfied' }, turns: 1, text: 'A haiku.' });
        expect(sends(emu)[0]!.events).toEqual([
          { type: 'user.define_outcome', description: 'Write a haiku', rubric: { type: 'text', content: '# 5-7-5' }, max_iterations: 3 },
        ]);
        expect(result.events.filter((e) => e['type'] === 'span.outcome_evaluation_end').map((e) => e['result'])).toEqual(['needs_revision', 'satisfied']);
      });

      it('should send a given prompt before the outcome and omit an absent max_iterations', async () => {
        const { emu, rx } = await setup({ script: [{ text: 'ok', outcome: { verdicts: ['max_iterations_reached'] } }] });
        const result = await rx.run({ prompt: 'Context first.', outcome: { description: 'd', rubric: 'r' } });
        expect(result).toMatchObject({ terminal: 'end_turn', stopReason: { type: 'max_iterations_reached' } });
        expect(sends(emu)[0]!.events).toEqual([
          { type: 'user.message', content: [{ type: 'text', text: 'Context first.' }] },
          { type: 'user.define_outcome', description: 'd', rubric: { type: 'text', content: 'r' } },
        ]);
      });

      it('should terminate when the grader fails the outcome (end_turn idle after a failed verdict)', async () => {
        const { rx } = await setup({ script: [{ text: 'nope', outcome: { verdicts: ['failed'], idle: 'end_turn' } }] });
        const result = await rx.run({ outcome: { description: 'd', rubric: 'r' } });
        expect(result).toMatchObject({ terminal: 'terminated', stopReason: { type: 'end_turn' } });
      });
    });

    describe('when a frame is not JSON', () => {
      it('should report a diagnostic, skip the frame and finish', async () => {
        const { rx } = await setup({ script: [{ text: 'fine' }], faults: { malformedFrameBefore: 3 } });
        const { envs, result } = await runCollecting(rx, { prompt: 'go' });
        expect(result.text).toBe('fine');
        expect(envs.filter((e) => isAgentRxEvent(e, 'agentrx.diagnostic')).map((e) => e.raw['message'])).toEqual([expect.stringContaining('not JSON')]);
      });
    });

    describe('when the turn has server tool uses, a retrying session.error and unknown event types', () => {
      it('should report server tool uses, keep going past the retrying error and keep unknown events verbatim', async () => {
        const unknown = { type: 'brand.new_event', payload: { nested: [1, 2] } };
        const retrying = { type: 'session.error', error: { type: 'model_overloaded_error', message: 'busy', retry_status: { type: 'retrying' } } };
        const { emu, rx } = await setup({
          script: [
            {
              text: 'searched',
              serverToolUses: [{ id: 'srv_1', name: 'web_search', input: { q: 'x' } }],
              extra: [retrying, unknown, { type: 'agent.thinking' }],
            },
          ],
        });
        const result = await rx.run({ prompt: 'go' });
        expect(result).toMatchObject({
          terminal: 'end_turn',
          turns: 1,
          serverToolUses: [{ id: 'srv_1', name: 'web_search', input: { q: 'x' } }],
          customToolUses: [],
        });
        const history = emu.sessions.get(result.sessionId!)!.history;
        expect(result.events).toEqual(history);
        expect(result.events.find((e) => e['type'] === 'brand.new_event')).toMatchObject(unknown);
      });
    });

    describe('when the host runs a server tool and an MCP tool itself', () => {
      it('should report both with their results to consumer hooks (hostRun) and on the AG-UI stream', async () => {
        const hooks: unknown[][] = [];
        const consumer = {
          id: 'hooks',
          onToolStart: (id: string, name: string) => void hooks.push(['start', id, name]),
          onToolResult: (id: string, r: { content: string; isError: boolean; hostRun: boolean }) =>
            void hooks.push(['result', id, r.content, r.isError, r.hostRun]),
          onToolEnd: (id: string) => void hooks.push(['end', id]),
        };
        const { rx } = await setup(
          {
            script: [
              {
                text: 'looked',
                serverToolUses: [
                  { id: 'srv_1', name: 'web_search', input: { q: 'x' }, result: 'found it' },
                  { id: 'mcp_1', name: 'read', mcpServer: 'files', result: 'file text' },
                ],
              },
            ],
          },
          { consumers: [consumer] },
        );
        const { envs, result } = await runCollecting(rx, { prompt: 'go' });
        expect(result.serverToolUses.map((u) => u.name)).toEqual(['web_search', 'files/read']);
        const hostResults = envs.flatMap((e) => (isAgentRxEvent(e, 'agentrx.host_tool_result') ? [[e.raw.toolUse.id, e.raw.result.content]] : []));
        expect(hostResults).toEqual([
          ['srv_1', 'found it'],
          ['mcp_1', 'file text'],
        ]);
        expect(hooks).toEqual([
          ['start', 'srv_1', 'web_search'],
          ['result', 'srv_1', 'found it', false, true],
          ['end', 'srv_1'],
          ['start', 'mcp_1', 'files/read'],
          ['result', 'mcp_1', 'file text', false, true],
          ['end', 'mcp_1'],
        ]);
      });
    });

    describe('when event_deltas previews are enabled', () => {
      it('should stream the text once (previews, then nothing twice from the final message)', async () => {
        const rec = new RecordingConsumer();
        const { emu, rx } = await setup({ script: [{ text: 'Hello brave new world', previews: true }] }, { section: { eventDeltas: true }, consumers: [rec] });
        const { envs, result } = await runCollecting(rx, { prompt: 'go' });
        expect(result.text).toBe('Hello brave new world');
        expect(rec.text).toBe('Hello brave new world');
        expect(envs.filter((e) => e.raw['type'] === 'event_delta').length).toBeGreaterThan(1);
        expect(emu.requests.find((r) => r.path.endsWith('/events/stream'))!.query['event_deltas']).toBe('agent.message');
      });

      it('should not receive previews when disabled', async () => {
        const { rx } = await setup({ script: [{ text: 'Hello there', previews: true }] });
        const { envs } = await runCollecting(rx, { prompt: 'go' });
        expect(envs.filter((e) => e.raw['type'] === 'event_delta')).toEqual([]);
      });
    });
  });

  describe('HTTP failures of sends', () => {
    const toolScript = { script: [{ toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'x' } }] }, { text: 'ok' }] };

    it('should retry a tool-result POST answered 429 (not processed) and run the tool once', async () => {
      const { emu, rx } = await setup({ ...toolScript, faults: { sendFaults: { 1: { kind: 'status', status: 429, retryAfter: 0 } } } });
      const result = await rx.run({ prompt: 'go' });
      expect(result.text).toBe('ok');
      expect(EchoToolHandler.calls).toHaveLength(1);
      expect(sends(emu).map((s) => s.status)).toEqual([200, 429, 200]);
      expect(received(emu, result.sessionId, 'user.custom_tool_result')).toHaveLength(1);
    });

    it('should reconcile a tool-result POST whose outcome is unknown (accepted, then the connection dropped) without posting twice', async () => {
      const { emu, rx } = await setup({ ...toolScript, faults: { sendFaults: { 1: { kind: 'drop_after_accept' } } } });
      const result = await rx.run({ prompt: 'go' });
      expect(result.text).toBe('ok');
      expect(received(emu, result.sessionId, 'user.custom_tool_result')).toHaveLength(1);
      expect(sends(emu)).toHaveLength(2);
    });

    it('should retry a kickoff answered 503', async () => {
      const { emu, rx } = await setup({ script: [{ text: 'ok' }], faults: { sendFaults: { 0: { kind: 'status', status: 503 } } } });
      const result = await rx.run({ prompt: 'go' });
      expect(result.text).toBe('ok');
      expect(sends(emu).map((s) => s.status)).toEqual([503, 200]);
    });

    it('should not replay a kickoff whose failure is ambiguous (500)', async () => {
      const { emu, rx } = await setup({ script: [{ text: 'ok' }], faults: { sendFaults: { 0: { kind: 'status', status: 500 } } } });
      await expect(rx.run({ prompt: 'go' })).rejects.toMatchObject({ code: 'http_error', details: expect.objectContaining({ status: 500 }) });
      expect(sends(emu)).toHaveLength(1);
    });

    it('should not replay a kickoff that was accepted before the connection dropped', async () => {
      const { emu, rx } = await setup({ script: [{ text: 'ok' }], faults: { sendFaults: { 0: { kind: 'drop_after_accept' } } } });
      await expect(rx.run({ prompt: 'go' })).rejects.toMatchObject({ code: 'http_error' });
      expect(sends(emu)).toHaveLength(1);
      expect([...emu.sessions.values()][0]!.received).toHaveLength(1);
    });
  });

  describe('reconnect', () => {
    it('should give up a run after the configured attempts with a typed stream_error', async () => {
      const down = { kind: 'status', status: 503 } as const;
      const { emu, rx } = await setup(
        {
          script: [{ text: 'a', toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'x' } }] }],
          faults: { drops: [{ after: 2, kind: 'error' }], streamFaults: { 1: down, 2: down, 3: down, 4: down } },
        },
        { limits: { reconnectAttempts: 3 } },
      );
      await expect(rx.run({ prompt: 'go' })).rejects.toMatchObject({
        code: 'stream_error',
        message: expect.stringMatching(/3 reconnect attempts failed: .*503/),
      });
      expect(emu.requests.filter((r) => r.path.endsWith('/events/stream'))).toHaveLength(4);
    });

    it('should report each attempt of a live session as an event and recover', async () => {
      const down = { kind: 'status', status: 502 } as const;
      const { rx } = await setup({
        script: [{ text: 'a', toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'x' } }] }, { text: 'b' }],
        faults: { drops: [{ after: 2, kind: 'close' }], streamFaults: { 1: down, 2: down } },
      });
      const { envs, result } = await runCollecting(rx, { prompt: 'go' });
      expect(result.text).toBe('b');
      expect(envs.filter((e) => isAgentRxEvent(e, 'agentrx.reconnecting')).map((e) => e.raw['attempt'])).toEqual([1, 2, 3]);
      expect(envs.filter((e) => isAgentRxEvent(e, 'agentrx.reconnected')).map((e) => e.raw['attempt'])).toEqual([3]);
    });
  });

  describe('.sendEvent', () => {
    it('should post a raw user event verbatim (a tool confirmation) while the session runs', async () => {
      const { emu, rx } = await setup({
        script: [{ serverToolUses: [{ id: 'sevt_tool', name: 'web_search', ask: true }] }, { text: 'waiting', thinkMs: 60_000 }],
      });
      const s = rx.start({ prompt: 'go' });
      const asking = (e: Record<string, unknown>): boolean => e['type'] === 'session.status_idle' && JSON.stringify(e['stop_reason']).includes('sevt_tool');
      await emu.waitFor(() => [...emu.sessions.values()].some((x) => x.history.some(asking)));
      await s.sendEvent({ type: 'user.tool_confirmation', tool_use_id: 'sevt_tool', result: 'allow' });
      const session = [...emu.sessions.values()][0]!;
      expect(sends(emu).at(-1)!.events).toEqual([{ type: 'user.tool_confirmation', tool_use_id: 'sevt_tool', result: 'allow' }]);
      expect(received(emu, session.id, 'user.tool_confirmation')).toHaveLength(1);
      s.cancel();
      await s.closed;
    });
  });

  describe('.cancel', () => {
    it('should send user.interrupt and close the stream', async () => {
      const rec = new RecordingConsumer();
      const { emu, rx } = await setup({ script: [{ text: 'never', thinkMs: 60_000 }] }, { consumers: [rec] });
      const s = rx.start({ prompt: 'go' });
      await emu.waitFor(() => [...emu.sessions.values()].some((x) => x.received.length === 1 && x.openStreams === 1));
      s.cancel();
      await expect(s.result).rejects.toMatchObject({ code: 'cancelled' });
      await s.closed;
      const session = [...emu.sessions.values()][0]!;
      await emu.waitFor(() => session.interrupts === 1 && session.openStreams === 0);
      expect(received(emu, session.id, 'user.interrupt')).toHaveLength(1);
      const stream = emu.requests.find((r) => r.path.endsWith('/events/stream'))!;
      expect(stream).toMatchObject({ closed: true, clientAborted: true });
      expect(rec.stops).toEqual(['cancelled']);
    });

    it('should also interrupt and close the stream when the run times out', async () => {
      const { emu, rx } = await setup({ script: [{ text: 'never', thinkMs: 60_000 }] });
      await expect(rx.run({ prompt: 'go', timeoutMs: 300 })).rejects.toMatchObject({ code: 'timeout' });
      const session = [...emu.sessions.values()][0]!;
      await emu.waitFor(() => session.interrupts === 1 && session.openStreams === 0);
      expect(received(emu, session.id, 'user.interrupt')).toHaveLength(1);
    });
  });

  describe('when the agent asks to confirm tools of its own (always_ask)', () => {
    const askingScript = [
      {
        text: 'Checking.',
        serverToolUses: [
          { id: 'sevt_ws', name: 'web_search', input: { query: 'x' }, ask: true, result: 'found' },
          { id: 'sevt_mcp', name: 'delete_repo', mcpServer: 'github', ask: true },
        ],
        toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'hi' } }],
      },
      { text: 'Done.' },
    ];

    it('should ask confirmTool for each, post the decisions with the tool result in one request, and finish', async () => {
      const { emu, rx } = await setup({ script: askingScript });
      const asked: string[] = [];
      const { envs, result } = await runCollecting(rx, {
        prompt: 'go',
        confirmTool: async (use) => {
          asked.push(use.name);
          return use.name === 'web_search' ? true : { allow: false, denyMessage: 'not this one' };
        },
      });

      expect(result).toMatchObject({ terminal: 'end_turn', text: 'Done.' });
      expect(asked).toEqual(['web_search', 'github/delete_repo']);
      expect(EchoToolHandler.calls).toHaveLength(1);
      const answers = sends(emu).filter((p) => p.events.some((e) => e['type'] !== 'user.message'));
      expect(answers).toEqual([
        {
          status: 200,
          events: [
            expect.objectContaining({ type: 'user.custom_tool_result', custom_tool_use_id: 'toolu_1' }),
            { type: 'user.tool_confirmation', tool_use_id: 'sevt_ws', result: 'allow' },
            { type: 'user.tool_confirmation', tool_use_id: 'sevt_mcp', result: 'deny', deny_message: 'not this one' },
          ],
        },
      ]);
      const decisions = envs.filter((e) => isAgentRxEvent(e, 'agentrx.tool_confirmation')).map((e) => [e.raw['toolUse']['id'], e.raw['allow']]);
      expect(decisions).toEqual([
        ['sevt_ws', true],
        ['sevt_mcp', false],
      ]);
    });

    it('should stop waiting for a confirmTool that never answers when the session is cancelled, and post nothing', async () => {
      const { emu, rx } = await setup({ script: [{ serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }] }, { text: 'Done.' }] });
      let asked!: () => void;
      const askedOnce = new Promise<void>((resolve) => (asked = resolve));
      const s = rx.start({
        prompt: 'go',
        confirmTool: () => {
          asked();
          return new Promise<boolean>(() => undefined);
        },
      });
      await askedOnce;
      s.cancel();
      await expect(s.result).rejects.toMatchObject({ code: 'cancelled' });
      await s.closed;
      expect(
        sends(emu)
          .flatMap((p) => p.events)
          .filter((e) => e['type'] === 'user.tool_confirmation'),
      ).toEqual([]);
    });

    it('should deny a tool whose confirmTool throws, and still finish', async () => {
      const { emu, rx } = await setup({ script: [{ serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }] }, { text: 'Done.' }] });
      const result = await rx.run({
        prompt: 'go',
        confirmTool: () => {
          throw new Error('no one to ask');
        },
      });
      expect(result.text).toBe('Done.');
      expect(received(emu, result.sessionId, 'user.tool_confirmation')).toEqual([expect.objectContaining({ tool_use_id: 'sevt_ws', result: 'deny' })]);
    });

    it('should post the tool result alone in a live session without confirmTool, and ask again when the host re-names the rest', async () => {
      const { emu, rx } = await setup({
        script: [
          { serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }], toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'hi' } }] },
          { text: 'Done.' },
        ],
      });
      const s = rx.start({ prompt: 'go' });
      const announced: string[][] = [];
      s.events$.subscribe((e) => {
        if (!isAgentRxEvent(e, 'agentrx.confirmation_required')) return;
        const ids = e.raw.toolUses.map((u) => u.id);
        announced.push(ids);
        // Answer only the second announcement, which comes from the idle re-naming what is left.
        if (announced.length === 2) for (const id of ids) void s.sendEvent({ type: 'user.tool_confirmation', tool_use_id: id, result: 'allow' });
      });
      const result = await s.result;
      s.close();
      await s.closed;
      expect(result.text).toBe('Done.');
      expect(announced).toEqual([['sevt_ws'], ['sevt_ws']]);
      expect(sends(emu).map((p) => p.events.map((e) => e['type']))).toEqual([['user.message'], ['user.custom_tool_result'], ['user.tool_confirmation']]);
    });

    describe('when resuming a session the host keeps blocked on a confirmation', () => {
      const blocked = [
        { type: 'user.message', content: [{ type: 'text', text: 'first' }] },
        { type: 'session.status_running' },
        { type: 'agent.tool_use', id: 'sevt_ask', name: 'web_search', input: {}, evaluated_permission: 'ask' },
        { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: ['sevt_ask'] } },
      ];

      it('should answer it with confirmTool before sending the prompt', async () => {
        const { emu, rx } = await setup({ script: [{ text: 'searched' }, { text: 'answer' }] });
        const sessionId = emu.seedSession(blocked);
        const { result } = await runCollecting(rx, { sessionId, prompt: 'next', confirmTool: () => true });

        expect(result).toMatchObject({ terminal: 'end_turn', text: 'answer' });
        expect(sends(emu).map((p) => p.events.map((e) => e['type']))).toEqual([['user.tool_confirmation'], ['user.message']]);
        expect(received(emu, sessionId, 'user.tool_confirmation')).toEqual([expect.objectContaining({ tool_use_id: 'sevt_ask', result: 'allow' })]);
      });

      it('should fail run() without confirmTool, naming the tool, and send nothing', async () => {
        const { emu, rx } = await setup({ script: [{ text: 'searched' }] });
        const sessionId = emu.seedSession(blocked);
        await expect(rx.run({ sessionId, prompt: 'next' })).rejects.toMatchObject({
          code: 'unresolved_requires_action',
          message: expect.stringContaining("'web_search' (sevt_ask)"),
        });
        expect(sends(emu)).toEqual([]);
      });
    });

    it("should reject a confirmation of a tool use that awaits none with the host's 400", async () => {
      const { emu, rx } = await setup({ script: [{ text: 'waiting', thinkMs: 60_000 }] });
      const s = rx.start({ prompt: 'go' });
      await emu.waitFor(() => [...emu.sessions.values()].some((x) => x.received.length === 1));
      await expect(s.sendEvent({ type: 'user.tool_confirmation', tool_use_id: 'sevt_none', result: 'allow' })).rejects.toMatchObject({
        code: 'http_error',
        details: { status: 400 },
      });
      s.cancel();
      await s.closed;
    });

    it('should fail run() without confirmTool with unresolved_requires_action naming the tool and the fix, running no tool', async () => {
      const { emu, rx } = await setup({
        script: [
          { serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }], toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'hi' } }] },
          { text: 'Done.' },
        ],
      });
      const err = await rx.run({ prompt: 'go' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'unresolved_requires_action', message: expect.stringContaining("'web_search' (sevt_ws)") });
      expect(String((err as Error).message)).toContain('confirmTool');
      expect(EchoToolHandler.calls).toHaveLength(0);
      expect(
        sends(emu)
          .flatMap((p) => p.events)
          .filter((e) => e['type'] !== 'user.message'),
      ).toEqual([]);
    });

    it('should let a live session without confirmTool announce the request and continue after sendEvent', async () => {
      const { emu, rx } = await setup({ script: [{ serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }] }, { text: 'Done.' }] });
      const s = rx.start({ prompt: 'go' });
      s.events$.subscribe((e) => {
        if (isAgentRxEvent(e, 'agentrx.confirmation_required')) {
          const ids = e.raw.toolUses.map((u) => u.id);
          for (const id of ids) void s.sendEvent({ type: 'user.tool_confirmation', tool_use_id: id, result: 'allow' });
        }
      });
      const result = await s.result;
      s.close();
      await s.closed;
      expect(result).toMatchObject({ terminal: 'end_turn', text: 'Done.' });
      expect(received(emu, result.sessionId, 'user.tool_confirmation')).toEqual([expect.objectContaining({ tool_use_id: 'sevt_ws', result: 'allow' })]);
    });
  });

  describe('rx.teardown', () => {
    it('should archive the agent and environment this instance created, once, and leave adopted ones alone', async () => {
      const { emu, rx } = await setup({ script: [{ text: 'one' }, { text: 'two' }] });
      await rx.run({ prompt: 'go' });
      const [agent] = [...emu.agents.values()];
      const [environment] = [...emu.environments.values()];

      // A second instance adopts the same content-addressed agent and environment.
      const other = await createCmaRx(emu);
      await other.run({ prompt: 'again' });
      await other.teardown();
      expect([agent!['archived_at'], environment!['archived_at']]).toEqual([null, null]);
      await other.stop();

      await rx.teardown();
      expect(agent!['archived_at']).not.toBeNull();
      expect(environment!['archived_at']).not.toBeNull();
      const archives = emu.requests.filter((r) => r.path.endsWith('/archive'));
      await rx.teardown();
      expect(emu.requests.filter((r) => r.path.endsWith('/archive'))).toHaveLength(archives.length);
    });
  });
});
