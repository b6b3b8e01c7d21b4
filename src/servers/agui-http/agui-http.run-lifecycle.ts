import type { SessionPlacement } from '../../core/plugin/session-placement.js';
import type { RunAdmission } from './agui-http.admission.js';
import type { AgUiHttpOptions } from './agui-http.config.js';
import type { Run } from './agui-http.run.js';
import type { Thread } from './agui-http.thread.js';
import type { ThreadPool } from './agui-http.thread-pool.js';
import { clientRunError } from './agui-http.wire-errors.js';

/**
 * How a run ends: at its terminal event (the session stays for the thread's next run), when its
 * session ends first (a RUN_ERROR), or when its client leaves: at once, or with
 * `reconnectGraceMs` once that long has passed with no reconnected reader following the run (on
 * this endpoint, or on any sharing the placement), the session is cancelled.
 */
export class RunLifecycle {
  /** Set once the endpoint is closing: a client leaving then cancels at once (no grace). */
  closing = false;

  constructor(
    private readonly placement: SessionPlacement,
    private readonly pool: ThreadPool,
    private readonly admission: RunAdmission,
    private readonly options: AgUiHttpOptions,
  ) {}

  /** The run reached its end: end the response; the thread idles until its next run. */
  endRun(thread: Thread, run: Run): void {
    if (run.done) return;
    run.done = true;
    clearTimeout(run.graceTimer);
    this.admission.uncount(run);
    if (thread.run === run) thread.run = undefined;
    run.end();
    if (!thread.ended) this.pool.armIdle(thread);
    this.pool.trimIdle();
  }

  /**
   * The session completed, errored or closed: end an open run with a RUN_ERROR (the session's
   * error in the client's terms, see `clientRunError`), forget the thread.
   */
  sessionEnded(thread: Thread): void {
    if (thread.ended) return;
    thread.ended = true;
    clearTimeout(thread.idleTimer);
    const run = thread.run;
    if (run && !run.done) {
      const error = thread.lastError ?? { code: 'session_closed', message: 'the session ended before the run finished' };
      run.write(clientRunError({ type: 'RUN_ERROR', message: error.message, code: error.code, timestamp: Date.now() }));
      this.endRun(thread, run);
    }
    this.pool.forget(thread);
  }

  /**
   * The response closed: if its run has not ended, the client left. With `reconnectGraceMs`, the
   * run goes on that long for the client to reconnect; then (or at once) the session is cancelled.
   */
  clientGone(thread: Thread, run: Run): void {
    if (run.done) return;
    run.stop();
    if (this.options.reconnectGraceMs > 0 && !this.closing) {
      run.detached = true;
      this.armGrace(thread, run);
      return;
    }
    this.abandon(thread, run);
  }

  /** A reconnected reader follows the thread's run: hold off its grace timer until released. */
  hold(thread: Thread): () => void {
    const run = thread.run;
    if (!run || run.done) return () => undefined;
    run.followers++;
    clearTimeout(run.graceTimer);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      run.followers--;
      this.armGrace(thread, run);
    };
  }

  /** Starts the grace timer of a detached run, unless a reconnected reader follows it. */
  private armGrace(thread: Thread, run: Run): void {
    clearTimeout(run.graceTimer);
    if (run.done || !run.detached || run.followers > 0) return;
    run.graceTimer = setTimeout(() => void this.graceOver(thread, run), this.options.reconnectGraceMs);
    run.graceTimer.unref();
  }

  /** The grace of a detached run is over: cancel it, unless a reader (here or on another endpoint) follows it (then wait again). */
  private async graceOver(thread: Thread, run: Run): Promise<void> {
    if (await this.placement.followed(thread.id).catch(() => false)) return this.armGrace(thread, run);
    if (run.followers > 0) return;
    this.abandon(thread, run);
  }

  /** Nobody reads the run any more: cancel its session, forget the thread (its next request starts anew). */
  private abandon(thread: Thread, run: Run): void {
    if (run.done) return;
    run.done = true;
    clearTimeout(run.graceTimer);
    this.admission.uncount(run);
    if (thread.run === run) thread.run = undefined;
    this.pool.letGo(thread, true);
  }
}
