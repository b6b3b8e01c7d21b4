import type { AgUiEvent } from '../../core/events/agui-event.js';
import { isTerminal, type FrameGroup } from './agui-http.frames.js';
import type { ClientFrame } from './agui-http.messages.js';
import type { RunLifecycle } from './agui-http.run-lifecycle.js';
import type { Suspensions } from './agui-http.suspension.js';
import type { Thread } from './agui-http.thread.js';
import type { ThreadPool } from './agui-http.thread-pool.js';
import type { TranslatedEnvelope } from './agui-http.translation.js';
import { clientRunError } from './agui-http.wire-errors.js';

/**
 * What the thread's session emits, on its way to the client: each envelope's side effects on the
 * thread (its log id, its last error, the tools it runs and their answers, the waits on the
 * client), then its client frames, written to the thread's current run in one chunk with the
 * envelope's `seq` as the SSE id of the last frame. A terminal event ends the run; a RUN_ERROR
 * also ends the thread's session for the endpoint (its next request starts another), and tells
 * the client what failed in its own terms (`clientRunError`: the session's message, which may
 * name the model server, goes to the request log only).
 */
export class Forwarding {
  constructor(
    private readonly runs: RunLifecycle,
    private readonly pool: ThreadPool,
    private readonly suspensions: Suspensions,
  ) {}

  /** One translated envelope of the thread's session (or, with no envelope, what its end adds). */
  envelope(thread: Thread, translated: TranslatedEnvelope): void {
    const env = translated.envelope;
    if (env === undefined) return this.forward(thread, thread.frames.push(translated));
    thread.lastSeq = env.seq;
    let waitsOnClient = false;
    if (env.source === 'agentrx') {
      const ev = env.raw;
      switch (ev.type) {
        case 'agentrx.run_started':
          // The Session keys its log by its provider-side id, else by its own thread id.
          thread.logId ??= env.sessionId ?? ev.threadId;
          break;
        case 'agentrx.run_error':
          thread.lastError = { code: ev.code, message: ev.message };
          break;
        case 'agentrx.turn_end':
          thread.wait.turnEnded(ev.customToolUses.map((u) => u.id));
          break;
        case 'agentrx.tool_started':
          thread.wait.toolStarted(ev.toolUse.id);
          // A frontend tool call waits for the client from now on (one of a session elsewhere, the
          // worker pool, is known from here). Checked here, in the log's order, so that every tool
          // use of its batch that comes before it in the log is counted.
          waitsOnClient = thread.clientTools?.started(ev.toolUse) === true || thread.clientTools?.waitsFor(ev.toolUse.id) === true;
          break;
        case 'agentrx.tool_result':
          thread.wait.toolAnswered(ev.toolUse.id);
          thread.clientTools?.settled(ev.toolUse.id);
          break;
        default:
          break;
      }
    }
    this.forward(thread, thread.frames.push(translated));
    if (env.source !== 'agentrx') return;
    if (env.raw.type === 'agentrx.tool_result' || waitsOnClient) this.suspensions.maybeSuspend(thread);
    else if (env.raw.type === 'agentrx.confirmation_required') this.suspensions.askToConfirm(thread, env.raw.toolUses);
  }

  /** Writes one envelope's client frames to the thread's current run, in one chunk (the end's frames carry no id). */
  private forward(thread: Thread, group: FrameGroup): void {
    const run = thread.run;
    if (!run || run.done) return;
    const out: ClientFrame[] = [];
    let terminal: AgUiEvent | undefined;
    for (const sessionEvent of group.events) {
      const ev = sessionEvent.type === 'RUN_ERROR' ? clientRunError(sessionEvent) : sessionEvent;
      if (ev.type === 'RUN_STARTED') {
        if (run.started) continue;
        run.started = true;
      }
      // AG-UI: a stream starts with RUN_STARTED (or is a lone RUN_ERROR).
      if (!run.started && ev.type !== 'RUN_ERROR') continue;
      // The client sent this frontend tool's result itself.
      if (ev.type === 'TOOL_CALL_RESULT' && thread.clientTools?.clientAnswered(ev.toolCallId)) continue;
      // The run's conversation goes out whole before it finishes (AG-UI MESSAGES_SNAPSHOT).
      if (ev.type === 'RUN_FINISHED') out.push(run.messages.snapshot(ev.timestamp ?? Date.now()));
      run.messages.apply(ev);
      out.push(ev);
      if (isTerminal(ev)) {
        terminal = ev;
        break;
      }
    }
    run.writeGroup(out, group.seq);
    if (terminal?.type === 'RUN_FINISHED') this.runs.endRun(thread, run);
    if (terminal?.type === 'RUN_ERROR') {
      // A failed request ends a live session: the thread's next request starts a new one.
      this.runs.endRun(thread, run);
      this.pool.forget(thread);
    }
  }
}
