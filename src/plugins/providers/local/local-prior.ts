import type { PriorMessage } from '../../../core/model.js';

/** A chat-completions wire message. */
type WireMessage = Record<string, unknown>;

/**
 * A client's earlier conversation as chat-completions messages, in order: system, user,
 * assistant (with `tool_calls`) and tool messages (with `tool_call_id`), as the model would have
 * seen them had this process run the conversation.
 */
export function priorWireMessages(messages: readonly PriorMessage[]): WireMessage[] {
  return messages.map((m): WireMessage => {
    switch (m.role) {
      case 'assistant': {
        const calls = m.toolCalls ?? [];
        if (calls.length === 0) return { role: 'assistant', content: m.content };
        return {
          role: 'assistant',
          content: m.content === '' ? null : m.content,
          tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
        };
      }
      case 'tool':
        return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.content };
      default:
        return { role: m.role, content: m.content };
    }
  });
}
