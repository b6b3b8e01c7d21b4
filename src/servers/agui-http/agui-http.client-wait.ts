import { AgentRxError } from '../../core/errors.js';
import type { RunFinishedEvent } from '../../core/events/agui-event.js';
import type { ToolUse } from '../../core/model.js';
import type { ClientToolResult } from '../../core/plugin/session-options.js';
import type { ClientTools } from './agui-http.client-tools.js';
import type { AgUiRunRequest } from './agui-http.input.js';
import { confirmationAnswers, confirmationInterrupts } from './agui-http.interrupts.js';
import type { ThreadSuspension } from './agui-http.thread-view.js';

type Outcome = NonNullable<RunFinishedEvent['outcome']>;

/** What the thread's session waits for from the client, between two of its runs. */
type Suspension =
  /** Frontend tool calls (`ClientTools.waiting`), by id: those not answered yet. */
  | { readonly kind: 'tools'; readonly calls: Set<string> }
  /** Tool confirmations, by interrupt id (the tool use id). */
  | { readonly kind: 'interrupt'; readonly toolUses: ReadonlyMap<string, ToolUse> };

/**
 * One thread's waits on its client. It follows the tool uses the session runs, in the order of
 * the session's log: a model turn's custom tool uses count as running from its `agentrx.turn_end`
 * (before any of them starts: one still being validated is running too) until their results.
 * Once every one of them waits on the client's frontend tools, or the session asks to confirm
 * tools, the thread is suspended: the client's run ends with the outcome this gives
 * (RUN_FINISHED `success` with `pendingToolCallIds`, or the AG-UI 1.0 interrupt outcome) and the
 * client's next run answers it (`answer`). That end is not in the session log, so reconnected
 * readers learn of it through `onSuspended`.
 */
export class ClientWait {
  /** Tool uses of the last model turn, and tool uses started since, not yet answered. */
  private readonly running = new Set<string>();
  private suspension: Suspension | undefined;
  private at: ThreadSuspension | undefined;
  private readonly watchers = new Set<(s: ThreadSuspension) => void>();

  constructor(private readonly threadId: string) {}

  /** True while the session waits for the client's next run. */
  get suspended(): boolean {
    return this.suspension !== undefined;
  }

  /**
   * A model turn ended asking for these custom tool uses (`agentrx.turn_end`): the batch the
   * session runs next. A new turn starts once the previous batch was answered, so it replaces what
   * was running (uses of a session that ended without answering them included).
   */
  turnEnded(toolUseIds: readonly string[]): void {
    this.running.clear();
    for (const id of toolUseIds) this.running.add(id);
  }

  toolStarted(toolUseId: string): void {
    this.running.add(toolUseId);
  }

  /**
   * A tool use got its result. A frontend call the suspension waits for that gets one without the
   * client (its wait timed out: an error result) is no longer waited for; once none is, the
   * suspension ends (the session goes on with the model; the client's next run is a new one).
   */
  toolAnswered(toolUseId: string): void {
    this.running.delete(toolUseId);
    const s = this.suspension;
    if (s?.kind !== 'tools' || !s.calls.delete(toolUseId) || s.calls.size > 0) return;
    this.suspension = undefined;
    this.at = undefined;
  }

  /** Suspends when every running tool waits on the client's frontend tools (`waiting`): the outcome that ends the run, else undefined. */
  waitForTools(waiting: readonly string[]): Outcome | undefined {
    if (this.suspension || waiting.length === 0 || ![...this.running].every((id) => waiting.includes(id))) return undefined;
    return this.suspend({ kind: 'tools', calls: new Set(waiting) }, { type: 'success', pendingToolCallIds: [...waiting] });
  }

  /** Suspends for the confirmation of `toolUses` (one interrupt each, its id the tool use id): the outcome that ends the run. */
  waitForConfirmations(toolUses: readonly ToolUse[]): Outcome {
    return this.suspend(
      { kind: 'interrupt', toolUses: new Map(toolUses.map((u) => [u.id, u])) },
      { type: 'interrupt', interrupts: confirmationInterrupts(toolUses) },
    );
  }

  /** Marks where (the log's last `seq`) the run ended waiting, for reconnected readers. */
  endedAt(seq: number, outcome: Outcome): void {
    this.at = { seq, outcome };
    for (const watch of [...this.watchers]) watch(this.at);
  }

  /**
   * Takes the client's answer to the suspension (its frontend tool results, or `resume` for the
   * interrupts) and ends it: returns what hands the answer to the session once the new run's
   * stream is open. A mismatch throws `invalid_options` (answered 400) and the thread keeps
   * waiting. `post` sends confirmation events to the session, `toSession` the results of frontend
   * calls of a session that runs elsewhere (`LiveSession.answerClient`).
   */
  answer(
    request: AgUiRunRequest,
    clientTools: ClientTools | undefined,
    post: (events: Record<string, unknown>[]) => void,
    toSession: (results: readonly ClientToolResult[]) => void,
  ): () => void {
    const suspension = this.suspension!;
    let answer: () => void;
    if (suspension.kind === 'tools') {
      if (request.resume.length > 0)
        throw new AgentRxError(
          'invalid_options',
          `resume: thread ${this.threadId} waits for frontend tool results (tool messages for ${clientTools!.waiting.join(', ')}), not for interrupts`,
        );
      answer = clientTools!.prepare(request.toolResults, toSession);
    } else {
      if (request.toolResults.length > 0)
        throw new AgentRxError(
          'invalid_options',
          `messages: thread ${this.threadId} waits for answers to its interrupts (${[...suspension.toolUses.keys()].join(', ')}) in resume, not for tool results`,
        );
      const events = confirmationAnswers(this.threadId, suspension.toolUses, request.resume);
      answer = () => post(events);
    }
    this.suspension = undefined;
    this.at = undefined;
    return answer;
  }

  /** Calls `listener` when a run ends waiting (at once when one has); returns the unsubscribe. */
  onSuspended(listener: (s: ThreadSuspension) => void): () => void {
    if (this.at) listener(this.at);
    this.watchers.add(listener);
    return () => void this.watchers.delete(listener);
  }

  private suspend(suspension: Suspension, outcome: Outcome): Outcome {
    this.suspension = suspension;
    return outcome;
  }
}
