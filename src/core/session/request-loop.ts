import { AgentRxError } from '../errors.js';
import type { RawEvent, TurnResult } from '../model.js';
import type { AgentProvider } from '../plugin/agent-provider.js';
import type { AsyncQueue } from '../util/async.js';
import type { AgentState } from './agent-state.js';
import type { HostLink } from './host-link.js';
import type { Ingestion } from './ingestion.js';
import type { RequestState } from './request-state.js';
import { notMessage, type InboxItem, type RequestRun, type RequestStep } from './request-step.js';
import type { SessionJournal } from './session-journal.js';
import type { SessionOutcome } from './session-outcome.js';
import type { ResolvedSessionOptions } from './session-options.js';
import { outputRetryText } from './structured-output.js';
import { Answer, type Asked, type ToolAnswerer } from './tool-answerer.js';

/** The text sent when `requireTerminalTool` re-prompts after an `end_turn` without the tool. */
export const REPROMPT_TEXT = (tool: string): string =>
  `You ended your turn without calling the \`${tool}\` tool. The task is complete only when you call \`${tool}\`. Call it now.`;

/** What a {@link RequestLoop} drives: the parts of its Session. */
export interface RequestLoopContext {
  readonly provider: AgentProvider;
  readonly inbox: AsyncQueue<InboxItem>;
  readonly link: HostLink;
  readonly answerer: ToolAnswerer;
  readonly ingestion: Ingestion;
  readonly state: RequestState;
  readonly agentState: AgentState;
  readonly journal: SessionJournal;
  readonly outcome: SessionOutcome;
  readonly opts: Pick<ResolvedSessionOptions, 'terminalTool' | 'retainEvents' | 'output'>;
  /** A live session syncs its record at each terminal (a run syncs it when it closes). */
  readonly live: boolean;
  conn(): unknown;
  sessionId(): string | undefined;
  threadId(): string;
  /** Ends the session with `error` (the run timeout). */
  abort(error: AgentRxError): void;
}

/**
 * The request loop of one Session: runs a request to its terminal as a state machine over
 * {@link RequestStep}s (each step yields the next; the step union is checked exhaustively). All
 * of a session's requests run here, one at a time.
 */
export class RequestLoop {
  constructor(private readonly ctx: RequestLoopContext) {}

  /**
   * Runs one request to its terminal, as a run loop over {@link RequestStep}s. The inbox is handled
   * in arrival order: turns that closed before the request (missed during a gap, or found on a
   * resume) come first, then redrives, then `input`. Only one input waits for a turn at a time;
   * tool results and redrives are sent as soon as they are ready.
   */
  async run(input: unknown, signal: AbortSignal): Promise<void> {
    this.beginRequest();
    const run: RequestRun = { toSend: input !== undefined ? [input] : [], awaiting: false };
    let step: RequestStep = this.nextStep(run);
    for (;;) {
      switch (step.kind) {
        case 'send':
          await this.ctx.link.send(step.input instanceof Answer ? step.input.input : step.input, signal);
          run.awaiting = true;
          if (step.input instanceof Answer) await this.ctx.answerer.posted(step.input);
          step = this.nextStep(run);
          break;
        case 'await':
          step = stepOf(await this.ctx.inbox.take(signal, notMessage)) ?? this.nextStep(run);
          break;
        case 'redrive':
          step = await this.redrive(step.asked, run, signal);
          break;
        case 'turn':
          step = await this.turnClosed(step.events, run, signal);
          break;
        case 'finish':
          return this.finish(step.turn, step.output);
        default: {
          const _never: never = step;
          throw new AgentRxError('provider_error', `unknown request step ${JSON.stringify(_never)}`);
        }
      }
    }
  }

  /** What the request does next: an inbox item first, else the next queued input, else wait. */
  private nextStep(run: RequestRun): RequestStep {
    const item = this.ctx.inbox.tryTake(notMessage);
    if (item) return stepOf(item) ?? this.nextStep(run);
    if (!run.awaiting && run.toSend.length > 0) {
      if (!this.ctx.link.hostMidTurn) return { kind: 'send', input: run.toSend.shift() };
      this.ctx.ingestion.emit({ type: 'agentrx.diagnostic', message: 'the host is still running a turn; the input is sent once that turn ends' });
    }
    if (!this.ctx.link.unprompted)
      throw new AgentRxError('provider_error', 'nothing to send: every unanswered tool use was already answered and no prompt was given');
    return { kind: 'await' };
  }

  /** Answers what a resume or a re-attach found unanswered (confirmations left to the caller: its next turn follows sendEvent). */
  private async redrive(asked: Asked, run: RequestRun, signal: AbortSignal): Promise<RequestStep> {
    const open = this.ctx.answerer.unanswered(asked);
    const answer = open.uses.length > 0 || open.confirmations.length > 0 ? await this.ctx.answerer.answer(open, signal) : undefined;
    if (answer !== undefined) return { kind: 'send', input: answer };
    if (this.ctx.answerer.waitsForCaller(asked.confirmations)) run.awaiting = true;
    return this.nextStep(run);
  }

  /** Folds a closed turn and decides: answer a `requires_action`, re-prompt for the terminal tool, send what is queued, or finish. */
  private async turnClosed(events: readonly RawEvent[], run: RequestRun, signal: AbortSignal): Promise<RequestStep> {
    run.awaiting = false;
    const turn = this.ctx.provider.normalize(events);
    const turnNo = this.ctx.ingestion.closeTurn();
    this.ctx.state.count(turn);
    const { terminal, stopReason, usage, customToolUses, serverToolUses } = turn;
    this.ctx.ingestion.emit({ type: 'agentrx.turn_end', turn: turnNo, terminal, stopReason, usage, customToolUses, serverToolUses });
    if (terminal === 'requires_action') {
      const asked = this.ctx.answerer.asked(turn);
      this.ctx.state.checkLimits(turnNo);
      const answer = await this.ctx.answerer.answer(asked, signal);
      if (answer !== undefined) return { kind: 'send', input: answer };
      // Nothing to post: the caller answers the confirmations with sendEvent; the host's next turn follows.
      run.awaiting = true;
      return this.nextStep(run);
    }
    if (terminal === 'end_turn' && run.toSend.length > 0) return this.nextStep(run);
    if (terminal !== 'end_turn') return { kind: 'finish', turn };
    if (this.ctx.opts.terminalTool && this.ctx.state.missingTerminalTool) {
      if (!this.ctx.state.mayReprompt) return { kind: 'finish', turn: { ...turn, terminal: 'terminated', stopReason: 'no_terminal_tool' } };
      this.ctx.state.checkLimits(turnNo);
      const text = REPROMPT_TEXT(this.ctx.opts.terminalTool);
      this.ctx.ingestion.emit({ type: 'agentrx.reprompt', attempt: ++this.ctx.state.reprompts, text });
      return { kind: 'send', input: this.ctx.provider.userInput(text) };
    }
    return this.ctx.opts.output ? this.checkOutput(turn, turnNo) : { kind: 'finish', turn };
  }

  /**
   * The final answer against `outputSchema`: valid, the request finishes with it as `output`;
   * invalid, the problems go back to the model once, and a second invalid answer fails the
   * request with `output_invalid`.
   */
  private async checkOutput(turn: TurnResult, turnNo: number): Promise<RequestStep> {
    const verdict = await this.ctx.opts.output!.check(turn.text);
    if (verdict.ok) return { kind: 'finish', turn, output: verdict.value };
    if (this.ctx.state.outputRetries >= 1) {
      throw new AgentRxError(
        'output_invalid',
        `the final answer does not match outputSchema, also after the problems were sent back to the model:\n${verdict.problems.map((p) => `- ${p}`).join('\n')}`,
        { problems: verdict.problems, turns: turnNo },
      );
    }
    this.ctx.state.checkLimits(turnNo);
    const text = outputRetryText(verdict.problems);
    this.ctx.ingestion.emit({ type: 'agentrx.reprompt', attempt: ++this.ctx.state.outputRetries, text });
    return { kind: 'send', input: this.ctx.provider.userInput(text) };
  }

  private beginRequest(): void {
    this.ctx.ingestion.beginRequest();
    this.ctx.state.begin(this.ctx.threadId(), this.ctx.abort);
    this.ctx.ingestion.emit({
      type: 'agentrx.run_started',
      runId: this.ctx.state.runId,
      threadId: this.ctx.threadId(),
      resumed: this.ctx.provider.resumed(this.ctx.conn()),
    });
    const snapshot = this.ctx.agentState.snapshot();
    if (snapshot) this.ctx.ingestion.emit({ type: 'agentrx.state_snapshot', snapshot });
  }

  /** A request's terminal: its record checkpoint (log durable, transcript saved), then its result. */
  private async finish(turn: TurnResult, output: unknown): Promise<void> {
    this.ctx.state.end();
    this.ctx.link.terminalReached();
    const p = this.ctx.provider;
    const events = this.ctx.opts.retainEvents ? this.ctx.ingestion.history : [];
    const result = this.ctx.state.result(turn, {
      sessionId: this.ctx.sessionId(),
      provider: p.id,
      turns: this.ctx.ingestion.turn,
      transcript: p.transcript?.(this.ctx.conn()),
      events,
      ...(output !== undefined ? { output } : {}),
    });
    this.ctx.ingestion.emit({
      type: 'agentrx.run_finished',
      runId: this.ctx.state.runId,
      threadId: this.ctx.threadId(),
      terminal: result.terminal,
      stopReason: result.stopReason,
      turns: result.turns,
      usage: result.usage,
      ...(output !== undefined ? { output } : {}),
    });
    // A run closes right after its terminal, and closing syncs the record: this one need not.
    await this.ctx.journal.checkpoint({ status: 'idle', transcript: result.transcript }, { sync: this.ctx.live });
    // An idle live session keeps nothing of the request it no longer needs (recovery is per request).
    this.ctx.ingestion.releaseHistory();
    this.ctx.outcome.resulted(result);
  }
}

/** The step an inbox item starts (a follow-up message starts none: it waits for the next request). */
function stepOf(item: InboxItem): RequestStep | undefined {
  return item.kind === 'message' ? undefined : item;
}
