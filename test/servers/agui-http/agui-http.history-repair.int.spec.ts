import { NO_RESULT_CONTENT } from '../../../src/servers/agui-http/agui-http.history-repair.js';
import { postJson, runInput, sseEvents, startStack, type Stack } from './agui-http.fixtures.js';

type WireMessage = { role: string; content?: string | null; tool_calls?: { id: string }[]; tool_call_id?: string };

/** The messages of the emulator's last chat-completion request the emulator served. */
function lastModelRequest(stack: Stack): WireMessage[] {
  const last = stack.emulator.requests.filter((r) => r.completion !== undefined && r.status === 200).at(-1);
  return (last?.body as { messages: WireMessage[] } | undefined)?.messages ?? [];
}

/** A conversation whose assistant message called a tool the client holds no result for (it was stopped). */
const QUESTION = 'What time is it in Paris?';
const FOLLOW_UP = 'Never mind, just say hi.';
const WITH_LOST_CALL = [
  { id: 'u1', role: 'user', content: QUESTION },
  {
    id: 'a1',
    role: 'assistant',
    content: 'Checking.',
    toolCalls: [{ id: 'call_lost', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } }],
  },
  { id: 'u2', role: 'user', content: FOLLOW_UP },
];

const ASK_USER = { name: 'ask_user', description: 'Ask the user.', parameters: { type: 'object', properties: { question: { type: 'string' } } } };

describe('AG-UI endpoint: the client history repaired before the model sees it', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe("when the client's messages hold a tool call no tool message answers", () => {
    it('should close it with a "no result" tool message, which the strict model server accepts and the raw history it refuses', async () => {
      stack = await startStack({ script: [{ text: 'Hi.' }] });
      // The emulator validates as OpenAI does: the history as the client holds it is refused.
      const raw = await postJson(`${stack.emulator.baseUrl}/chat/completions`, {
        model: 'scripted',
        messages: [
          { role: 'user', content: QUESTION },
          { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_lost', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
          { role: 'user', content: FOLLOW_UP },
        ],
      });
      expect(raw.status).toBe(400);
      expect(JSON.stringify(raw.json)).toMatch(/must be followed by tool messages/);

      const reply = await postJson(stack.endpoint, runInput({ threadId: 'lost-call', messages: WITH_LOST_CALL }));

      const events = sseEvents(reply.text);
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', threadId: 'lost-call' });
      expect(events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e['delta'])).toEqual(['Hi.']);
      const messages = lastModelRequest(stack);
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
      expect(messages[1]?.tool_calls).toEqual([expect.objectContaining({ id: 'call_lost' })]);
      expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_lost', content: NO_RESULT_CONTENT });
      // The client's own conversation is not rewritten: its snapshot holds what it sent.
      const snapshot = events.find((e) => e.type === 'MESSAGES_SNAPSHOT')!['messages'] as { id: string }[];
      expect(snapshot.map((m) => m.id).slice(0, 3)).toEqual(['u1', 'a1', 'u2']);
    });
  });

  describe('when the open call is the frontend tool the thread waits on', () => {
    it('should give the model the client\'s answer to it, not a "no result"', async () => {
      stack = await startStack({ script: [{ toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship it?' } }] }, { text: 'Shipping.' }] });
      const first = await postJson(stack.endpoint, runInput({ threadId: 'waiting', runId: 'r1', tools: [ASK_USER], protocolVersion: '1.0' }, 'Ship?'));
      expect(sseEvents(first.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { pendingToolCallIds: ['call_ask'] } });

      const answer = await postJson(
        stack.endpoint,
        runInput({
          threadId: 'waiting',
          runId: 'r2',
          tools: [ASK_USER],
          messages: [
            { id: 'u1', role: 'user', content: 'Ship?' },
            {
              id: 'a1',
              role: 'assistant',
              toolCalls: [{ id: 'call_ask', type: 'function', function: { name: 'ask_user', arguments: '{"question":"Ship it?"}' } }],
            },
            { id: 't1', role: 'tool', toolCallId: 'call_ask', content: 'yes' },
          ],
        }),
      );

      expect(sseEvents(answer.text).at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'r2' });
      const messages = lastModelRequest(stack);
      expect(messages.filter((m) => m.role === 'tool')).toEqual([{ role: 'tool', tool_call_id: 'call_ask', content: 'yes' }]);
    });
  });
});
