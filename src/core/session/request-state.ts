import { AgentRxError } from '../errors.js';
import { addUsage, emptyUsage, type SessionResult, type ToolUse, type TurnResult, type Usage } from '../model.js';
import type { TurnGuard } from './session-options.js';

/** The limits a request runs under. */
export interface RequestLimits {
  readonly timeoutMs: number;
  readonly maxTurns: number;
  readonly turnGuard: TurnGuard | undefined;
  readonly terminalTool: string | undefined;
  readonly maxReprompts: number;
}

/**
 * The counters of the request in progress and the limits they are checked against: its run id,
 * summed usage, every turn's text and tool uses, whether the terminal tool was called, reprompts,
 * and the run timeout.
 */
export class RequestState {
  /** `<threadId>:run-<n>` of the request in progress. */
  runId = '';
  usage: Usage = emptyUsage();
  reprompts = 0;
  /** Answers sent back for not matching `outputSchema` (at most one per request). */
  outputRetries = 0;
  private runNo = 0;
  private terminalToolCalled = false;
  private texts: string[] = [];
  private customToolUses: ToolUse[] = [];
  private serverToolUses: ToolUse[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The run timeout was started before the first request (a run times from the call). */
  private armedEarly = false;
  /** When the run times out (epoch ms) and what it then calls, while its timer is armed. */
  private armed: { readonly at: number; readonly onTimeout: (error: AgentRxError) => void } | undefined;
  /** Waits on the client holding the run timeout, and the time it had left when the first began. */
  private holds = 0;
  private heldLeftMs = 0;

  constructor(private readonly limits: RequestLimits) {}

  /**
   * Starts the first request's timeout now: a run's `timeoutMs` covers it from the call (opening,
   * resuming and waiting for what the host asks included), not only from its first request.
   */
  armFromCall(onTimeout: (error: AgentRxError) => void): void {
    this.arm(onTimeout);
    this.armedEarly = true;
  }

  /** Starts a request on `threadId`; `onTimeout` fires if it has not ended within `timeoutMs`. */
  begin(threadId: string, onTimeout: (error: AgentRxError) => void): void {
    this.usage = emptyUsage();
    this.terminalToolCalled = false;
    this.reprompts = 0;
    this.outputRetries = 0;
    this.texts = [];
    this.customToolUses = [];
    this.serverToolUses = [];
    this.runNo++;
    this.runId = `${threadId}:run-${this.runNo}`;
    if (this.armedEarly) this.armedEarly = false;
    else this.arm(onTimeout);
  }

  private arm(onTimeout: (error: AgentRxError) => void, afterMs = this.limits.timeoutMs): void {
    clearTimeout(this.timer);
    const { timeoutMs } = this.limits;
    this.holds = 0;
    this.armed = { at: Date.now() + afterMs, onTimeout };
    this.timer = setTimeout(() => onTimeout(new AgentRxError('timeout', `the run did not finish within ${timeoutMs} ms`, { timeoutMs })), afterMs);
  }

  /**
   * A tool use waits on the client (which has its own timeout): the run timeout stops until every
   * such wait released it, then goes on with the time it had left. Returns the release (idempotent).
   */
  hold(): () => void {
    const armed = this.armed;
    if (!armed) return () => undefined;
    if (this.holds++ === 0) {
      clearTimeout(this.timer);
      this.heldLeftMs = Math.max(0, armed.at - Date.now());
    }
    let released = false;
    return () => {
      if (released || this.armed !== armed) return;
      released = true;
      if (--this.holds === 0) this.arm(armed.onTimeout, this.heldLeftMs);
    };
  }

  /** Stops the run timeout (a terminal, or the session's end). */
  end(): void {
    clearTimeout(this.timer);
    this.armed = undefined;
  }

  /** Adds a closed turn's usage, text and tool uses, and notes a call of the terminal tool. */
  count(turn: TurnResult): void {
    this.usage = addUsage(this.usage, turn.usage);
    this.texts.push(turn.text);
    this.customToolUses.push(...turn.customToolUses);
    this.serverToolUses.push(...turn.serverToolUses);
    if (turn.customToolUses.some((u) => u.name === this.limits.terminalTool)) this.terminalToolCalled = true;
  }

  /** `requireTerminalTool`: the request ended its turn without calling the terminal tool. */
  get missingTerminalTool(): boolean {
    return this.limits.terminalTool !== undefined && !this.terminalToolCalled;
  }

  /** True while another reprompt is allowed. */
  get mayReprompt(): boolean {
    return this.reprompts < this.limits.maxReprompts;
  }

  /** Throws `halted` when the turn guard says so, else `max_turns_exceeded` at the turn limit. */
  checkLimits(turns: number): void {
    const verdict = this.limits.turnGuard?.(this.usage, turns);
    if (verdict) {
      throw new AgentRxError('halted', typeof verdict === 'string' ? `halted by turnGuard: ${verdict}` : 'halted by turnGuard', { turns, usage: this.usage });
    }
    if (turns >= this.limits.maxTurns) {
      throw new AgentRxError('max_turns_exceeded', `the run reached maxTurns (${this.limits.maxTurns}) without finishing`, { turns, usage: this.usage });
    }
  }

  /** The SessionResult of a request that ended on `turn` (counted, or a verdict on the last counted one). */
  result(turn: TurnResult, session: Pick<SessionResult, 'sessionId' | 'provider' | 'turns' | 'transcript' | 'events' | 'output'>): SessionResult {
    return {
      terminal: turn.terminal,
      stopReason: turn.stopReason,
      text: turn.text,
      texts: [...this.texts],
      customToolUses: [...this.customToolUses],
      serverToolUses: [...this.serverToolUses],
      ...(turn.continueWithoutTools ? { continueWithoutTools: true } : {}),
      ...session,
      usage: this.usage,
    };
  }
}
