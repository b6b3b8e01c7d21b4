import type { PriorMessage } from '../model.js';

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

/** Most messages `SessionOptions.history` may carry. */
export const MAX_PRIOR_MESSAGES = 10_000;

/**
 * Problems with a `history` session option, each as `history[i].<field>: <what is wrong>` (empty
 * when it is well-formed): an array of at most {@link MAX_PRIOR_MESSAGES} messages, each with a
 * known role and string content; tool calls only on assistant messages, with string `id`, `name`
 * and `arguments`; `toolCallId` (a string) on every tool message.
 */
export function priorMessageProblems(history: unknown): string[] {
  if (!Array.isArray(history)) return [`history: must be an array of messages; got ${history === null ? 'null' : typeof history}`];
  if (history.length > MAX_PRIOR_MESSAGES) return [`history: at most ${MAX_PRIOR_MESSAGES} messages; got ${history.length}`];
  const problems: string[] = [];
  history.forEach((m: unknown, i) => {
    const at = `history[${i}]`;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return void problems.push(`${at}: must be an object { role, content }`);
    const msg = m as Record<string, unknown>;
    if (typeof msg['role'] !== 'string' || !ROLES.has(msg['role']))
      problems.push(`${at}.role: must be one of ${[...ROLES].join(', ')}; got ${JSON.stringify(msg['role'])}`);
    if (typeof msg['content'] !== 'string') problems.push(`${at}.content: must be a string`);
    const calls = msg['toolCalls'];
    if (calls !== undefined) {
      if (msg['role'] !== 'assistant') problems.push(`${at}.toolCalls: only an assistant message calls tools`);
      else if (!Array.isArray(calls)) problems.push(`${at}.toolCalls: must be an array`);
      else {
        calls.forEach((c: unknown, j) => {
          const call = (typeof c === 'object' && c !== null ? c : {}) as Record<string, unknown>;
          for (const key of ['id', 'name', 'arguments']) {
            if (typeof call[key] !== 'string') problems.push(`${at}.toolCalls[${j}].${key}: must be a string`);
          }
        });
      }
    }
    if (msg['role'] === 'tool' && typeof msg['toolCallId'] !== 'string')
      problems.push(`${at}.toolCallId: required on a tool message (the id of the call it answers)`);
  });
  return problems;
}

/**
 * The prompt of a fresh session whose host cannot take prior messages: the earlier conversation
 * as one clearly delimited block, then the prompt. The model reads the block as context, not as
 * instructions from this turn's user.
 */
export function withPriorConversation(prompt: string | undefined, history: readonly PriorMessage[]): string | undefined {
  if (history.length === 0) return prompt;
  const lines = history.map((m) => {
    const calls = (m.toolCalls ?? []).map((c) => `\n  (called tool ${c.name} [${c.id}] with ${c.arguments})`).join('');
    const who = m.role === 'tool' ? `tool result [${m.toolCallId ?? '?'}]` : m.role;
    return `[${who}] ${m.content}${calls}`;
  });
  const block = [
    '<conversation_so_far>',
    'The conversation before this message, carried over from the client, oldest first:',
    ...lines,
    '</conversation_so_far>',
  ].join('\n');
  return prompt === undefined ? block : `${block}\n\n${prompt}`;
}
