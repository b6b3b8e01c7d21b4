import { AgentRxError } from '../errors.js';
import type { AgentProvider } from '../plugin/agent-provider.js';
import type { SessionRecord } from '../store/session-store.js';
import { withPriorConversation } from './prior-conversation.js';
import type { ResolvedSessionOptions } from './session-options.js';
import { outputInstruction } from './structured-output.js';

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
  if (provider.resumed(conn)) return opts.prompt !== undefined ? provider.userInput(withOutputInstruction(provider, opts, opts.prompt)) : undefined;
  // A resume that found no history (taken over before its first turn ended) starts from freshPrompt.
  const given = opts.prompt ?? (opts.sessionId !== undefined ? opts.freshPrompt : undefined);
  const asked = given !== undefined ? withOutputInstruction(provider, opts, given) : given;
  // Prior messages the host cannot take as history go before the prompt, as one delimited block.
  const prompt = opts.history && !provider.acceptsPriorMessages && opts.sessionId === undefined ? withPriorConversation(asked, opts.history) : asked;
  // No prompt stays undefined: the provider picks its default (or, with an outcome, sends none).
  return provider.kickoffInput({ prompt, outcome: opts.outcome });
}

/** `prompt`, followed by the output schema for a host that does not take it natively. */
function withOutputInstruction(provider: AgentProvider, opts: ResolvedSessionOptions, prompt: string): string {
  return opts.output && !provider.nativeOutputSchema ? `${prompt}\n\n${outputInstruction(opts.output.schema)}` : prompt;
}

/**
 * Refuses a resume of a session that nothing knows: the store has no record of `opts.sessionId`
 * and the provider keeps the conversation in the store (Local), so resuming would silently start
 * a fresh session under a mistyped id. Hosts that keep the history themselves (Claude Managed
 * Agents, AgentCore) are asked instead, and answer for their own ids. A takeover that carries the
 * submitted prompt (`freshPrompt`) may find nothing stored yet and starts from it. With
 * `keepsClosed` false (a store that forgets closed sessions) the hint says so.
 */
export function checkResumable(provider: AgentProvider, opts: ResolvedSessionOptions, prior: SessionRecord | undefined, keepsClosed = true): void {
  if (opts.sessionId === undefined || prior !== undefined || opts.freshPrompt !== undefined || provider.transcript === undefined) return;
  const hint = keepsClosed
    ? "List the stored ones with 'agentrx sessions ls' (with the same store), or leave out the session id to start a new session"
    : "This store keeps no closed session (the memory store with store.memoryKeep: 'none'): set memoryKeep to 'recent' or use the file or Redis store to resume sessions, or leave out the session id to start a new session";
  throw new AgentRxError(
    'invalid_options',
    `cannot resume session '${opts.sessionId}': the session store has no session of that id (provider '${provider.id}' keeps its conversation there). ${hint}`,
    { sessionId: opts.sessionId },
  );
}

/** The end of a run resumed without a prompt on a request/response host with nothing pending (no tool call, no confirmation). */
export function nothingToResume(sessionId: string): AgentRxError {
  return new AgentRxError(
    'invalid_options',
    `session '${sessionId}' was resumed without a prompt, but it waits on nothing (no tool call is pending, and its host answers only to input): pass a prompt to continue it`,
    { sessionId },
  );
}
