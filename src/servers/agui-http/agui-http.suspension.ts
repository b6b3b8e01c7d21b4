import { toAgentRxError } from '../../core/errors.js';
import type { RunFinishedEvent } from '../../core/events/agui-event.js';
import type { ToolUse } from '../../core/model.js';
import type { AgUiRunRequest } from './agui-http.input.js';
import type { Run } from './agui-http.run.js';
import type { RunLifecycle } from './agui-http.run-lifecycle.js';
import { quietly, type Thread } from './agui-http.thread.js';
import type { ThreadPool } from './agui-http.thread-pool.js';

/**
 * The runs that end waiting on the client (AG-UI human in the loop) and the runs that answer
 * them. A run ends with RUN_FINISHED `success` and `pendingToolCallIds` once every tool the
 * session runs waits on the client's frontend tools, or with the interrupt outcome when the host
 * asks to confirm tools; the session's request waits meanwhile, and the thread's next run brings
 * the tool results or the `resume` answers, which are handed to the session once its stream is
 * open. A host asking to confirm with no tool named, or an answer the session cannot take, ends
 * the run with a RUN_ERROR and cancels the session.
 */
export class Suspensions {
  constructor(
    private readonly runs: RunLifecycle,
    private readonly pool: ThreadPool,
  ) {}

  /**
   * `run` answers what the thread's suspended run left waiting. Checked now (a mismatch throws
   * `invalid_options`, answered 400, and the thread keeps waiting); handed to the session by
   * `run.continueWith` once the stream is open.
   */
  continueRun(thread: Thread, run: Run, request: AgUiRunRequest): Thread {
    const session = thread.session;
    const answer = thread.wait.answer(
      request,
      thread.clientTools,
      (events) => {
        for (const ev of events) session.sendEvent(ev).catch((e: unknown) => this.answerFailed(thread, e));
      },
      (toolResults) => void session.answerClient({ toolResults }).catch((e: unknown) => this.answerFailed(thread, e)),
    );
    // The client's state is the agent's: what it changed meanwhile replaces the session's (the
    // next delta is then taken against an empty snapshot, which applies to any client state).
    const state = request.state;
    if (state !== undefined) quietly(() => session.setState(state));
    thread.run = run;
    run.continueWith = answer;
    return thread;
  }

  /** Every tool the session runs now waits on the client's frontend tools: end the client's run; its next run brings the results. */
  maybeSuspend(thread: Thread): void {
    const outcome = thread.wait.waitForTools(thread.clientTools?.waiting ?? []);
    if (outcome) this.suspend(thread, outcome);
  }

  /** The session waits for tool confirmations: end the client's run with the interrupt outcome; its next run answers them in `resume`. */
  askToConfirm(thread: Thread, toolUses: readonly ToolUse[]): void {
    if (toolUses.length === 0) return this.cannotConfirm(thread, toolUses);
    this.suspend(thread, thread.wait.waitForConfirmations(toolUses));
  }

  /** Posting an answer to the session failed: the run cannot go on. */
  answerFailed(thread: Thread, e: unknown): void {
    const run = thread.run;
    const err = toAgentRxError(e);
    if (run && !run.done) {
      run.write({ type: 'RUN_ERROR', message: `could not hand the answer to the agent: ${err.message}`, code: err.code, timestamp: Date.now() });
      this.runs.endRun(thread, run);
    }
    this.pool.letGo(thread, true);
  }

  /**
   * The host waits for a tool confirmation the endpoint cannot ask its client about: end the run
   * with a RUN_ERROR that says what to configure, cancel the session.
   */
  private cannotConfirm(thread: Thread, toolUses: readonly ToolUse[]): void {
    const names = toolUses.map((u) => `'${u.name}' (${u.id})`).join(', ');
    const run = thread.run;
    if (run && !run.done) {
      const message = `the agent asks to confirm ${names || 'a tool'} before running it; this endpoint answers no confirmations (pass confirmTool to createAgUiHandler, or agentrx serve --confirm allow|deny)`;
      run.write({ type: 'RUN_ERROR', message, code: 'unresolved_requires_action', timestamp: Date.now() });
      this.runs.endRun(thread, run);
    }
    this.pool.letGo(thread, true);
  }

  /** Ends the client's run with `outcome` while the session's request waits for the client's next run. */
  private suspend(thread: Thread, outcome: NonNullable<RunFinishedEvent['outcome']>): void {
    thread.wait.endedAt(thread.lastSeq, outcome);
    const run = thread.run;
    if (!run || run.done) return;
    const now = Date.now();
    if (run.started)
      run.writeGroup([run.messages.snapshot(now), { type: 'RUN_FINISHED', threadId: thread.id, runId: run.runId, outcome, timestamp: now }], undefined);
    this.runs.endRun(thread, run);
  }
}
