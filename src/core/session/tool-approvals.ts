import { AgentRxError, toAgentRxError } from '../errors.js';
import type { AgentRxEvent } from '../events/session-event.js';
import type { Logger } from '../logger.js';
import type { ToolConfirmation, ToolResult, ToolUse } from '../model.js';
import type { ClientAnswerBook } from '../tools/client-answers.js';
import type { ToolDispatcher } from '../tools/tool-dispatcher.js';
import type { ToolLedger } from '../tools/tool-ledger.js';
import { abortReason, abortable } from '../util/async.js';
import type { ConfirmTool, ToolDecision } from './session-options.js';

/** What the approvals of a session need from its ToolAnswerer. */
export interface ToolApprovalsDeps {
  readonly dispatcher: ToolDispatcher;
  readonly logger: Logger;
  /** Publishes one of the session's events. */
  emit(ev: AgentRxEvent): void;
  /** The session's ledger now (a resume replaces it). */
  ledger(): ToolLedger;
  /** Stores the ledger's changes (a wait for a decision is synced before it is announced). */
  persist(): Promise<void>;
  /** The client's decisions a resume brought (`SessionOptions.clientAnswers`). */
  readonly answers: ClientAnswerBook;
}

/** The approval policy of a session. */
export interface ToolApprovalsOptions {
  readonly confirmTool: ConfirmTool | undefined;
  /** A live session announces what it cannot decide and waits; a run fails. */
  readonly live: boolean;
  /** The run timeout (ms), which bounds a wait for the caller's decision: the recorded wait's deadline. */
  readonly timeoutMs?: number | undefined;
}

/**
 * The caller's approvals of local tool uses that need them (`requireApproval`). A live session
 * without `confirmTool` records each use it asks about as `awaiting_client` (`confirmation`) in
 * the ledger before it announces `agentrx.confirmation_required`, so a session resumed after the
 * process went away finds the question still open: it takes the client's decision the resume
 * brought (`clientAnswers.confirmations`), else asks again.
 */
export class ToolApprovals {
  /** Local tool uses waiting for the caller's decision (`sendEvent`), by id. */
  private readonly waiting = new Map<string, (decision: ToolConfirmation) => void>();

  constructor(
    private readonly deps: ToolApprovalsDeps,
    private readonly opts: ToolApprovalsOptions,
  ) {}

  /** The caller's decision on a use that waits for it; false when none waits on that id. */
  approve(decision: ToolConfirmation): boolean {
    const settle = this.waiting.get(decision.toolUseId);
    if (!settle) return false;
    this.waiting.delete(decision.toolUseId);
    settle(decision);
    return true;
  }

  /**
   * Asks the caller about the uses of tools that need approval (`requireApproval`, e.g. an MCP
   * server's): the client's decisions a resume brought first, then `confirmTool`; without it a
   * live session records and announces the wait and waits for `sendEvent({ type:
   * 'user.tool_confirmation', … })`; a run fails before anything runs. A denied use gets an
   * `is_error` result (recorded in the ledger, so it is never asked again) and is not run.
   * Returns the denied ones' results by id.
   */
  async approveLocal(uses: readonly ToolUse[], signal: AbortSignal): Promise<Map<string, ToolResult>> {
    const ledger = this.deps.ledger();
    const open = (u: ToolUse): boolean => {
      const entry = ledger.get(u.id);
      return entry === undefined || (entry.state === 'awaiting_client' && entry.awaits === 'confirmation');
    };
    const asking = uses.filter((u) => this.deps.dispatcher.requiresApproval?.(u.name) === true && open(u));
    const denied = new Map<string, ToolResult>();
    if (asking.length === 0) return denied;
    const given = new Map<string, ToolConfirmation>();
    for (const u of asking) {
      const d = this.deps.answers.takeDecision(u.id);
      if (d) given.set(u.id, d);
    }
    const undecided = asking.filter((u) => !given.has(u.id));
    const decided = undecided.length > 0 ? await this.ask(undecided, signal) : [];
    undecided.forEach((u, i) => given.set(u.id, decided[i]!));
    for (const toolUse of asking) {
      const d = given.get(toolUse.id)!;
      this.deps.emit({ type: 'agentrx.tool_confirmation', toolUse, allow: d.allow, ...(d.denyMessage !== undefined ? { denyMessage: d.denyMessage } : {}) });
      if (d.allow) continue;
      const result: ToolResult = {
        toolUseId: toolUse.id,
        content: `the caller did not allow tool '${toolUse.name}' to run${d.denyMessage ? `: ${d.denyMessage}` : ''}`,
        isError: true,
      };
      ledger.record(toolUse.id, toolUse.name, result);
      denied.set(toolUse.id, result);
      this.deps.emit({ type: 'agentrx.tool_result', toolUse, result, replayed: false, durationMs: 0 });
    }
    if (denied.size > 0) await this.deps.persist();
    return denied;
  }

  /** The decisions on `asking`: `confirmTool`'s, else (live) the caller's after a recorded wait, else the run fails. */
  private async ask(asking: readonly ToolUse[], signal: AbortSignal): Promise<ToolConfirmation[]> {
    const decide = this.opts.confirmTool;
    if (decide) {
      const decisions: ToolConfirmation[] = [];
      for (const use of asking) decisions.push(await decideWith(decide, use, signal, this.deps.logger));
      return decisions;
    }
    if (!this.opts.live) {
      const names = asking.map((u) => `'${u.name}' (${u.id})`).join(', ');
      throw new AgentRxError(
        'unresolved_requires_action',
        `${names} need the caller's approval before running (requireApproval); pass confirmTool in the session options (agentrx run: --confirm allow|deny), or use rx.start() and answer with session.sendEvent({ type: 'user.tool_confirmation', tool_use_id, result: 'allow' | 'deny' })`,
        { toolUses: asking },
      );
    }
    // The question is durable before it is asked: a restart finds it open (a resume re-asks it, keeping its deadline).
    const ledger = this.deps.ledger();
    const deadline = this.opts.timeoutMs === undefined ? undefined : Date.now() + this.opts.timeoutMs;
    for (const u of asking) ledger.awaitClient(u.id, u.name, 'confirmation', deadline);
    await this.deps.persist();
    this.deps.emit({ type: 'agentrx.confirmation_required', toolUses: asking });
    try {
      return await abortable(Promise.all(asking.map((u) => new Promise<ToolConfirmation>((resolve) => this.waiting.set(u.id, resolve)))), signal);
    } finally {
      for (const u of asking) this.waiting.delete(u.id);
    }
  }
}

/** Calls `confirmTool`; a throw, a rejection or a malformed answer denies the tool. */
export async function decideWith(decide: ConfirmTool, toolUse: ToolUse, signal: AbortSignal, logger: Logger): Promise<ToolConfirmation> {
  try {
    const d: unknown = await abortable(
      Promise.resolve().then(() => decide(toolUse)),
      signal,
    );
    if (typeof d === 'boolean') return { toolUseId: toolUse.id, allow: d };
    if (typeof d === 'object' && d !== null && typeof (d as ToolDecision).allow === 'boolean') {
      const { allow, denyMessage } = d as ToolDecision;
      return { toolUseId: toolUse.id, allow, ...(!allow && typeof denyMessage === 'string' ? { denyMessage } : {}) };
    }
    return { toolUseId: toolUse.id, allow: false, denyMessage: 'confirmTool returned no decision' };
  } catch (e) {
    if (signal.aborted) throw abortReason(signal);
    logger.warn('confirmTool failed; the tool use is denied', { toolUseId: toolUse.id, error: toAgentRxError(e).message });
    return { toolUseId: toolUse.id, allow: false, denyMessage: 'the confirmation failed' };
  }
}
