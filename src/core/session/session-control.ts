import { AgentRxError } from '../errors.js';

/**
 * How a Session is stopped: the abort signal all its work follows, and the `close()`/`cancel()`
 * bookkeeping. Kept apart from the Session so that it reads as its run loop; the Session decides
 * what each state allows.
 */
export class SessionControl {
  private readonly ctrl = new AbortController();
  /** `close()` was called: no request starts once the running one and the queued messages are done. */
  private closingValue = false;
  /** The loop waits for input between requests (nothing runs). */
  private idle = false;
  private closedValue = false;

  /** Aborted on cancel, timeout, failure, or `close()` while idle; its reason is why. */
  get signal(): AbortSignal {
    return this.ctrl.signal;
  }

  /** `close()` was called. */
  get closing(): boolean {
    return this.closingValue;
  }

  /** The session has ended (it is shutting down or shut down). */
  get closed(): boolean {
    return this.closedValue;
  }

  /** Aborts all the session's work with `error` as the reason (a later abort is a no-op). */
  abort(error: unknown): void {
    this.ctrl.abort(error);
  }

  /** Aborts with `cancelled`, unless already aborted. */
  cancel(): void {
    if (!this.ctrl.signal.aborted) this.ctrl.abort(new AgentRxError('cancelled', 'the session was cancelled'));
  }

  /** Aborts with `cancelled` marked `by: 'stop'` (a shutdown, not a failure), unless already aborted. */
  cancelForShutdown(): void {
    if (!this.ctrl.signal.aborted) this.ctrl.abort(new AgentRxError('cancelled', 'the session was cancelled: AgentRx.stop() ended it', { by: 'stop' }));
  }

  /** Marks the session closing; a loop waiting for input is woken by a {@link SessionClosing} abort. */
  close(): void {
    if (this.closingValue || this.ctrl.signal.aborted) return;
    this.closingValue = true;
    if (this.idle) this.ctrl.abort(new SessionClosing());
  }

  /** Input was queued: a waiting loop has just taken it, so a `close()` in the same tick must not abort that request. */
  busy(): void {
    this.idle = false;
  }

  /** Runs `wait` (the loop's wait for its next input) as idle time, which `close()` ends. */
  async whileIdle<T>(wait: () => Promise<T>): Promise<T> {
    this.idle = true;
    try {
      return await wait();
    } finally {
      this.idle = false;
    }
  }

  /** The session has ended: nothing more is accepted. */
  markClosed(): void {
    this.closedValue = true;
  }

  /** Whether `e`, thrown by the loop, is the end `close()` asked for rather than a failure. */
  isClosingEnd(e: unknown): boolean {
    return e instanceof SessionClosing || (this.ctrl.signal.aborted && this.ctrl.signal.reason instanceof SessionClosing);
  }
}

/** The abort reason of `close()` while the loop waits for input: not a failure. */
class SessionClosing extends Error {}
