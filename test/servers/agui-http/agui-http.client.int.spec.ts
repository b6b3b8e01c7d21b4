import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import type { BaseEvent, Message } from '@ag-ui/core';
import { AGUI_MEDIA_TYPE } from '@ag-ui/encoder';
import { AddToolHandler, EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';
import { ProtoHttpAgent, startStack, type SessionLog, type Stack } from './agui-http.fixtures.js';

/** What a client run saw: every event after the client's own enforcement and verification. */
interface ClientRun {
  readonly events: BaseEvent[];
  readonly failures: unknown[];
  readonly runErrors: { message: string; code?: string }[];
}

async function runClient(agent: HttpAgent, runId: string, extra: AgentSubscriber = {}): Promise<ClientRun> {
  const run: ClientRun = { events: [], failures: [], runErrors: [] };
  await agent.runAgent(
    { runId },
    {
      ...extra,
      onEvent: ({ event }) => {
        run.events.push(event);
      },
      onRunErrorEvent: ({ event }) => {
        run.runErrors.push({ message: event.message, ...(event.code !== undefined ? { code: event.code } : {}) });
      },
      onRunFailed: ({ error }) => {
        run.failures.push(error);
      },
    },
  );
  return run;
}

/** The conversation as the client rebuilt it: text per message id, tool calls, tool results. */
function clientView(messages: readonly Message[]): {
  texts: Map<string, string>;
  toolCalls: { id: string; name: string; args: string }[];
  toolResults: Map<string, string>;
} {
  const texts = new Map<string, string>();
  const toolCalls: { id: string; name: string; args: string }[] = [];
  const toolResults = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'assistant') {
      if (typeof m.content === 'string' && m.content !== '') texts.set(m.id, m.content);
      for (const c of m.toolCalls ?? []) toolCalls.push({ id: c.id, name: c.function.name, args: c.function.arguments });
    }
    if (m.role === 'tool') toolResults.set(m.toolCallId, typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
  }
  return { texts, toolCalls, toolResults };
}

function sessionView(log: SessionLog): ReturnType<typeof clientView> {
  return {
    texts: log.texts,
    toolCalls: log.toolCalls.map((u) => ({ id: u.id, name: u.name, args: JSON.stringify(u.input) })),
    toolResults: log.toolResults,
  };
}

const types = (events: readonly BaseEvent[]): string[] => events.map((e) => String(e.type));
const terminals = (events: readonly BaseEvent[]): string[] => types(events).filter((t) => t === 'RUN_FINISHED' || t === 'RUN_ERROR');

const TWO_TOOLS_SCRIPT = [
  {
    text: 'Let me check both.',
    toolCalls: [
      { id: 'call_echo', name: 'echo', arguments: { text: 'hi' } },
      { id: 'call_add', name: 'add', arguments: { a: 2, b: 3 } },
    ],
  },
  { text: 'Echo said HI and the sum is 5.' },
];

describe('AG-UI endpoint with the official @ag-ui/client HttpAgent', () => {
  let stack: Stack | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('when the model answers with text only', () => {
    it('should stream one verified run with the client ids, and rebuild the session text', async () => {
      stack = await startStack({ script: [{ text: 'Hello! I am a scripted model, streaming a few words.' }] });
      const agent = new HttpAgent({ url: stack.endpoint, threadId: 'thread-text' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'Say hello' });

      const run = await runClient(agent, 'client-run-1');

      expect(run.failures).toEqual([]);
      expect(types(run.events)[0]).toBe('RUN_STARTED');
      expect(terminals(run.events)).toEqual(['RUN_FINISHED']);
      expect(types(run.events).at(-1)).toBe('RUN_FINISHED');
      expect(run.events[0]).toMatchObject({ threadId: 'thread-text', runId: 'client-run-1' });
      expect(run.events.at(-1)).toMatchObject({ threadId: 'thread-text', runId: 'client-run-1' });
      expect(types(run.events).filter((t) => t === 'TEXT_MESSAGE_CONTENT').length).toBeGreaterThan(1);

      const log = stack.sessions[0]!;
      expect(stack.sessions).toHaveLength(1);
      expect([...log.texts.values()]).toEqual(['Hello! I am a scripted model, streaming a few words.']);
      expect(clientView(agent.messages)).toEqual(sessionView(log));
      expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect((stack.emulator.requests[0]!.body as { messages: { role: string; content: string }[] }).messages.at(-1)).toEqual({
        role: 'user',
        content: 'Say hello',
      });
    });
  });

  describe('when the model calls two tools in parallel', () => {
    it('should stream both calls and results, and the client should rebuild the same calls, results and text', async () => {
      stack = await startStack({ script: TWO_TOOLS_SCRIPT, tools: [EchoToolHandler, AddToolHandler] });
      const agent = new HttpAgent({ url: stack.endpoint, threadId: 'thread-tools' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'Echo hi and add 2 and 3' });

      const run = await runClient(agent, 'client-run-tools');

      expect(run.failures).toEqual([]);
      expect(terminals(run.events)).toEqual(['RUN_FINISHED']);
      const t = types(run.events);
      // Both calls are announced before either result arrives: they ran in parallel.
      expect(t.filter((x) => x === 'TOOL_CALL_START')).toHaveLength(2);
      expect(t.lastIndexOf('TOOL_CALL_END')).toBeLessThan(t.indexOf('TOOL_CALL_RESULT'));
      expect(t.filter((x) => x === 'TOOL_CALL_RESULT')).toHaveLength(2);

      const log = stack.sessions[0]!;
      const view = clientView(agent.messages);
      expect(view).toEqual(sessionView(log));
      expect(view.toolCalls).toEqual([
        { id: 'call_echo', name: 'echo', args: '{"text":"hi"}' },
        { id: 'call_add', name: 'add', args: '{"a":2,"b":3}' },
      ]);
      expect(view.toolResults).toEqual(
        new Map([
          ['call_echo', 'HI'],
          ['call_add', '{"sum":5}'],
        ]),
      );
      expect([...view.texts.values()]).toEqual(['Let me check both.', 'Echo said HI and the sum is 5.']);
      expect(EchoToolHandler.calls).toHaveLength(1);
      expect(AddToolHandler.calls).toBe(1);
    });
  });

  describe('when the provider fails the request', () => {
    it('should end the run with one RUN_ERROR carrying the session error, and start a new session on the next request', async () => {
      stack = await startStack({ script: [{ text: 'Recovered.' }], faults: { 0: { kind: 'status', status: 400 } } });
      const agent = new HttpAgent({ url: stack.endpoint, threadId: 'thread-error' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'fail please' });

      const run = await runClient(agent, 'client-run-error');

      expect(run.failures).toEqual([]);
      expect(types(run.events)).toEqual(['RUN_STARTED', 'RUN_ERROR']);
      const sessionError = stack.sessions[0]!.errors[0]!;
      expect(sessionError.code).toBe('http_error');
      // The client is told what failed in its own terms; the model server's URL and answer stay in the session's error.
      expect(run.runErrors).toEqual([{ message: 'the model server refused the request (HTTP 400)', code: 'http_error' }]);
      expect(sessionError.message).toContain('HTTP 400');
      await stack.sessions[0]!.session.closed;

      agent.addMessage({ id: 'u2', role: 'user', content: 'try again' });
      const again = await runClient(agent, 'client-run-again');
      expect(again.failures).toEqual([]);
      expect(terminals(again.events)).toEqual(['RUN_FINISHED']);
      expect(stack.sessions).toHaveLength(2);
      expect([...stack.sessions[1]!.texts.values()]).toEqual(['Recovered.']);
    });
  });

  describe('when the client aborts the run', () => {
    it('should cancel the session and abort the provider request', async () => {
      stack = await startStack({ faults: { 0: { kind: 'hang' } } });
      const s = stack;
      const agent = new HttpAgent({ url: s.endpoint, threadId: 'thread-abort' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'take your time' });

      const run = await runClient(agent, 'client-run-abort', {
        onRunStartedEvent: async () => {
          // Abort only once the provider request is in flight, so there is provider work to cancel.
          await s.emulator.waitForRequest(0);
          agent.abortRun();
        },
      });

      expect(run.failures).toEqual([]);
      expect(run.runErrors).toEqual([expect.objectContaining({ code: 'abort' })]);
      const upstream = await s.emulator.waitForClose(0);
      expect(upstream.clientAborted).toBe(true);
      const log = s.sessions[0]!;
      await log.session.closed;
      expect(log.errors.map((e) => e.code)).toEqual(['cancelled']);
      expect(s.server.handler.activeRuns).toBe(0);
      expect(s.server.handler.threadCount).toBe(0);
    });
  });

  describe('when a second request arrives on the same threadId', () => {
    it('should continue the same session and stream the next run with the new runId', async () => {
      stack = await startStack({ script: [{ text: 'First answer.' }, { text: 'Second answer.' }] });
      const agent = new HttpAgent({ url: stack.endpoint, threadId: 'thread-twice' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'first question' });
      const first = await runClient(agent, 'client-run-a');
      agent.addMessage({ id: 'u2', role: 'user', content: 'second question' });
      const second = await runClient(agent, 'client-run-b');

      expect(first.failures).toEqual([]);
      expect(second.failures).toEqual([]);
      expect(second.events[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'thread-twice', runId: 'client-run-b' });
      expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', threadId: 'thread-twice', runId: 'client-run-b' });
      expect(stack.sessions).toHaveLength(1);
      expect(stack.sessions[0]!.runs).toBe(2);
      // The model saw one conversation: the second request carries the first exchange.
      const seen = (stack.emulator.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role !== 'system');
      expect(seen).toEqual([
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'First answer.' },
        { role: 'user', content: 'second question' },
      ]);
      expect(agent.messages.map((m) => [m.role, m.content])).toEqual([
        ['user', 'first question'],
        ['assistant', 'First answer.'],
        ['user', 'second question'],
        ['assistant', 'Second answer.'],
      ]);
      expect(clientView(agent.messages)).toEqual(sessionView(stack.sessions[0]!));
    });
  });

  describe('when the client asks for protobuf', () => {
    it('should answer application/vnd.ag-ui.event+proto frames that decode to the same run as SSE', async () => {
      stack = await startStack({ script: [...TWO_TOOLS_SCRIPT, ...TWO_TOOLS_SCRIPT], tools: [EchoToolHandler, AddToolHandler] });
      const sseAgent = new HttpAgent({ url: stack.endpoint, threadId: 'thread-sse' });
      sseAgent.addMessage({ id: 'u1', role: 'user', content: 'go' });
      const viaSse = await runClient(sseAgent, 'run-sse');
      const protoAgent = new ProtoHttpAgent(stack.endpoint, 'thread-proto');
      protoAgent.addMessage({ id: 'u1', role: 'user', content: 'go' });
      const viaProto = await runClient(protoAgent, 'run-proto');

      expect(protoAgent.contentTypes).toEqual([AGUI_MEDIA_TYPE]);
      expect(viaProto.failures).toEqual([]);
      expect(terminals(viaProto.events)).toEqual(['RUN_FINISHED']);
      expect(viaProto.events[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'thread-proto', runId: 'run-proto' });
      expect(types(viaProto.events)).toEqual(types(viaSse.events));
      const strip = (events: readonly BaseEvent[]): unknown[] =>
        events.map((e) => {
          // Message ids (and so the tool calls' parentMessageId) are the emulator's, per run.
          const {
            timestamp: _t,
            threadId: _th,
            runId: _r,
            messageId: _m,
            parentMessageId: _p,
            rawEvent,
            messages,
            ...rest
          } = e as BaseEvent & Record<string, unknown>;
          // A tool's measured duration differs between the two runs.
          const { durationMs: _d, ...raw } = (rawEvent ?? {}) as Record<string, unknown>;
          // MESSAGES_SNAPSHOT: the same conversation, the emulator's message ids aside.
          const snapshot = Array.isArray(messages)
            ? { messages: messages.map((m: Record<string, unknown>) => ({ ...m, id: m['role'] === 'assistant' || m['role'] === 'tool' ? '<id>' : m['id'] })) }
            : {};
          return { ...rest, ...snapshot, raw };
        });
      expect(strip(viaProto.events)).toEqual(strip(viaSse.events));
      expect(clientView(protoAgent.messages)).toEqual(sessionView(stack.sessions[1]!));
    });
  });
});
