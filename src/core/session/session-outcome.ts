import { ReplaySubject, type Observable } from '../util/rxjs.js';
import { AgentRxError } from '../errors.js';
import type { SessionResult } from '../model.js';

/**
 * What a Session tells its callers of how it went: a result per request on `results$`, the first
 * request's `result`, and `closed`. Each settles once, in the order the Session reports.
 */
export class SessionOutcome {
  /** A SessionResult at each terminal; completes when the session closes, errors when it fails. */
  readonly results$: Observable<SessionResult>;
  /** The first request's result; rejects with a typed AgentRxError. */
  readonly result: Promise<SessionResult>;
  /** Resolves once the session has fully closed. */
  readonly closed: Promise<void>;
  private readonly results = new ReplaySubject<SessionResult>(1);
  private settle: { resolve(r: SessionResult): void; reject(e: AgentRxError): void } = { resolve: () => undefined, reject: () => undefined };
  private markClosed: () => void = () => undefined;
  /** `result` has settled (its error is made only when it has not: every session ends). */
  private settled = false;

  constructor() {
    this.results$ = this.results.asObservable();
    this.result = new Promise<SessionResult>((resolve, reject) => (this.settle = { resolve, reject }));
    this.closed = new Promise<void>((resolve) => (this.markClosed = resolve));
    // The caller may never await `result` (live sessions use results$); do not crash the process.
    this.result.catch(() => undefined);
  }

  /** A request reached its terminal. */
  resulted(result: SessionResult): void {
    this.results.next(result);
    this.settled = true;
    this.settle.resolve(result);
  }

  /**
   * The session ends: `result` rejects when the first request never finished (with `failure`,
   * else `session_closed`); `results$` errors with a failure, except a shutdown's (`by: 'stop'`),
   * on which it completes, as on a clean end.
   */
  ended(failure: AgentRxError | undefined): void {
    if (!this.settled) this.settle.reject(failure ?? new AgentRxError('session_closed', 'the session closed before its first request finished'));
    this.settled = true;
    if (failure && failure.details?.['by'] !== 'stop') this.results.error(failure);
    else this.results.complete();
  }

  /** Everything is released: `closed` resolves. */
  close(): void {
    this.markClosed();
  }
}
