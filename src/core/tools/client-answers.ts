import { AgentRxError } from '../errors.js';
import type { ToolConfirmation, ToolResult } from '../model.js';
import type { ClientAnswers } from '../plugin/session-options.js';
import type { ToolHandler, ToolOutcome } from '../plugin/tool-handler.js';
import type { ClientWaitKind, LedgerEntry } from './tool-ledger.js';

/**
 * A tool handler whose calls a client answers (an AG-UI page's frontend tool): `handle` waits for
 * the client's result, it runs nothing here. The dispatcher records such a call as
 * `awaiting_client` (synced) instead of `executing`, with the handler's `timeoutMs` as the wait's
 * own deadline; a session that ends meanwhile (cancelled, shut down, crashed) leaves it waiting, so
 * a resume can take the client's answer (`SessionOptions.clientAnswers`).
 */
export interface ClientToolHandler extends ToolHandler {
  readonly awaitsClient: true;
  /** True while tool use `id` of this tool waits for the client's answer (handlers of `ClientCalls`). */
  readonly isWaiting?: (id: string) => boolean;
  /**
   * Hands the client's answer to tool use `id` while it waits (`LiveSession.answerClient`); false
   * when no call of this tool waits with that id. Synchronous; never throws.
   */
  readonly giveAnswer?: (id: string, outcome: ToolOutcome) => boolean;
}

/** True when `handler` is a {@link ClientToolHandler}. */
export function awaitsClient(handler: ToolHandler | undefined): handler is ClientToolHandler {
  return handler !== undefined && (handler as Partial<ClientToolHandler>).awaitsClient === true;
}

/**
 * What is wrong with `answers` against a stored ledger (`now`: the time the waits are checked
 * at): an answer that names no waiting use, one that waits for the other kind of answer, or one
 * whose wait has timed out, and an id answered twice. Empty when every answer fits.
 */
export function clientAnswerProblems(ledger: readonly LedgerEntry[], answers: ClientAnswers, now: number): string[] {
  const waiting = new Map(ledger.filter((e) => e.state === 'awaiting_client').map((e) => [e.toolUseId, e]));
  const problems: string[] = [];
  const seen = new Set<string>();
  const check = (id: string, kind: ClientWaitKind): void => {
    if (seen.has(id)) return void problems.push(`${id} is answered twice`);
    seen.add(id);
    const entry = waiting.get(id);
    const state = ledger.find((e) => e.toolUseId === id)?.state;
    if (!entry) problems.push(`${id}: no tool use waits on the client with that id${state ? ` (it is ${state})` : ''}`);
    else if ((entry.awaits ?? 'tool') !== kind)
      problems.push(
        `${id}: '${entry.name}' waits for ${entry.awaits === 'confirmation' ? 'a decision to run it' : "the client's tool result"}, not for ${kind === 'confirmation' ? 'a decision' : 'a tool result'}`,
      );
    else if (entry.deadline !== undefined && entry.deadline <= now)
      problems.push(`${id}: the wait for the client's answer to '${entry.name}' timed out at ${new Date(entry.deadline).toISOString()}`);
  };
  for (const r of answers.toolResults ?? []) check(r.toolUseId, 'tool');
  for (const c of answers.confirmations ?? []) check(c.toolUseId, 'confirmation');
  return problems;
}

/**
 * Throws `invalid_options` listing {@link clientAnswerProblems}, with the ids that do wait, for
 * the stored session `sessionId`.
 */
export function checkClientAnswers(sessionId: string, ledger: readonly LedgerEntry[], answers: ClientAnswers, now: number): void {
  const problems = clientAnswerProblems(ledger, answers, now);
  if (problems.length === 0) return;
  const waiting = ledger.filter((e) => e.state === 'awaiting_client').map((e) => `${e.toolUseId} ('${e.name}', ${e.awaits ?? 'tool'})`);
  throw new AgentRxError(
    'invalid_options',
    `clientAnswers: session '${sessionId}' cannot take these answers: ${problems.join('; ')} (waiting on the client: ${waiting.join(', ') || 'nothing'})`,
    { sessionId, problems },
  );
}

/** The client's answers a resumed session hands out once each, as it redrives the uses they answer. */
export class ClientAnswerBook {
  private readonly results: Map<string, ToolResult>;
  private readonly decisions: Map<string, ToolConfirmation>;

  constructor(answers: ClientAnswers | undefined) {
    this.results = new Map((answers?.toolResults ?? []).map((r) => [r.toolUseId, { toolUseId: r.toolUseId, content: r.content, isError: r.isError === true }]));
    this.decisions = new Map((answers?.confirmations ?? []).map((c) => [c.toolUseId, c]));
  }

  /** The client's result of tool use `id`, once. */
  takeResult(id: string): ToolResult | undefined {
    const result = this.results.get(id);
    this.results.delete(id);
    return result;
  }

  /** The client's decision on running tool use `id`, once. */
  takeDecision(id: string): ToolConfirmation | undefined {
    const decision = this.decisions.get(id);
    this.decisions.delete(id);
    return decision;
  }

  /** True while some answer has not been handed out. */
  get pending(): boolean {
    return this.results.size > 0 || this.decisions.size > 0;
  }
}
