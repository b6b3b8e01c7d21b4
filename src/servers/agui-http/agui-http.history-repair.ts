import { NO_RESULT_CONTENT, type PriorMessage } from '../../core/model.js';

// A call left open reads the same to the model whichever way the conversation reached the session.
export { NO_RESULT_CONTENT } from '../../core/model.js';

/**
 * The client's conversation as a model accepts it: each assistant message's tool calls are
 * followed, right after it and in call order, by the tool message answering each (model APIs
 * refuse an assistant message with tool calls that tool messages do not answer right after it).
 * A call no tool message answers gets an explicit "no result" tool message
 * ({@link NO_RESULT_CONTENT}); a tool message that came later (after another message) moves up to
 * its call; a second answer to one call is left out. When `openLast` is set, the calls of the
 * last message stay open (their results are what the run brings: the frontend tool answers the
 * thread waits for). Pure; the input is not changed.
 *
 * @param history Validated prior messages (each tool message answers a call of an earlier assistant message).
 * @param openLast Leave the last message's calls unanswered.
 */
export function repairHistory(history: readonly PriorMessage[], openLast = false): PriorMessage[] {
  // Each call takes the first unused answer with its id (ids a model repeats pair in order).
  const answers = new Map<string, PriorMessage[]>();
  for (const m of history) {
    if (m.role !== 'tool' || m.toolCallId === undefined) continue;
    const queue = answers.get(m.toolCallId);
    if (queue) queue.push(m);
    else answers.set(m.toolCallId, [m]);
  }
  const out: PriorMessage[] = [];
  history.forEach((m, i) => {
    if (m.role === 'tool') return;
    out.push(m);
    const calls = m.role === 'assistant' ? (m.toolCalls ?? []) : [];
    if (calls.length === 0 || (openLast && i === history.length - 1)) return;
    for (const call of calls) {
      const answer = answers.get(call.id)?.shift();
      out.push(answer ?? { role: 'tool', toolCallId: call.id, content: NO_RESULT_CONTENT });
    }
  });
  return out;
}
