import type { AgentProvider } from '../plugin/agent-provider.js';
import { withPriorConversation } from './prior-conversation.js';
import type { ResolvedSessionOptions } from './session-options.js';

/**
 * Input of a session's first request, once `conn` is open: the kickoff on a fresh session, the
 * prompt on a resume; `undefined` when a resume has no prompt (the session waits for a message).
 *
 * @param provider The session's provider.
 * @param conn What the provider's `open` returned.
 * @param opts The session's options.
 * @returns The provider input, or `undefined` to wait.
 */
export function firstInput(provider: AgentProvider, conn: unknown, opts: ResolvedSessionOptions): unknown {
  if (provider.resumed(conn)) return opts.prompt !== undefined ? provider.userInput(opts.prompt) : undefined;
  // A resume that found no history (taken over before its first turn ended) starts from freshPrompt.
  const asked = opts.prompt ?? (opts.sessionId !== undefined ? opts.freshPrompt : undefined);
  // Prior messages the host cannot take as history go before the prompt, as one delimited block.
  const prompt = opts.history && !provider.acceptsPriorMessages && opts.sessionId === undefined ? withPriorConversation(asked, opts.history) : asked;
  // No prompt stays undefined: the provider picks its default (or, with an outcome, sends none).
  return provider.kickoffInput({ prompt, outcome: opts.outcome });
}
