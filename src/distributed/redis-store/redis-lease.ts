import { AgentRxError } from '../../core/errors.js';
import type { StoreLease } from '../../core/store/session-store.js';

/**
 * A `StoreLease` that can be lost: what this engine proposes for the contract (see
 * `RedisSessionStore.acquire`). `lost` resolves (never rejects) with the `store_error` that says
 * why, once the lease is known lost; it never settles while the lease is held or after `release`.
 */
export interface LosableStoreLease extends StoreLease {
  readonly lost: Promise<AgentRxError>;
}

/** What a lease needs from its store. */
export interface LeaseDriver {
  /** 'ok' when renewed, else the owner holding it now ('' when nobody does: it expired). Throws on connection errors. */
  renew(token: string): Promise<'ok' | { owner: string }>;
  release(token: string): Promise<void>;
  /** Called once the lease is released (or its release failed): the store forgets it. */
  forget(lease: RedisLease): void;
}

/**
 * The lease of one session held by this store instance, with its fencing epoch. Renewed every
 * third of `leaseMs` while held (an unref'd timer: it never keeps the process alive). It is lost
 * when a renewal finds another owner or no lease, or when no renewal succeeded for `leaseMs`
 * (a partitioned or paused process: Redis has let the key expire by then). Once lost, every write
 * of this instance for the session is refused locally; writes already on their way are refused by
 * Redis when another owner has taken a higher epoch.
 */
export class RedisLease implements LosableStoreLease {
  readonly lost: Promise<AgentRxError>;
  private lostError: AgentRxError | undefined;
  private resolveLost!: (e: AgentRxError) => void;
  private lastRenewed = Date.now();
  private renewing = false;
  private released = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly sessionId: string,
    /** The fencing epoch this holder writes with. */
    readonly epoch: number,
    readonly token: string,
    private readonly leaseMs: number,
    private readonly driver: LeaseDriver,
  ) {
    this.lost = new Promise<AgentRxError>((resolve) => (this.resolveLost = resolve));
    this.timer = setInterval(() => this.tick(), Math.max(1, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  /**
   * The error a write gets once the lease is known lost; undefined while held. Checked at each
   * write, so a process resumed after a pause longer than `leaseMs` refuses its writes before its
   * renewal timer has even run.
   */
  get lostReason(): AgentRxError | undefined {
    if (!this.lostError && !this.released && Date.now() - this.lastRenewed >= this.leaseMs) this.markLost(`not renewed within ${this.leaseMs} ms`);
    return this.lostError;
  }

  /** Marks the lease lost (a renewal or a fenced write found out) and settles `lost`. */
  markLost(why: string, details: Record<string, unknown> = {}): AgentRxError {
    if (this.lostError) return this.lostError;
    clearInterval(this.timer);
    this.lostError = new AgentRxError(
      'store_error',
      `the lease of session '${this.sessionId}' was lost (${why}); this process must stop running it: another owner may have taken it over`,
      { sessionId: this.sessionId, epoch: this.epoch, ...details },
    );
    if (!this.released) this.resolveLost(this.lostError);
    return this.lostError;
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    try {
      // Also when lost: the key is deleted only while it is still this holder's.
      await this.driver.release(this.token);
    } finally {
      this.driver.forget(this);
    }
  }

  /** Stops renewing without releasing (the store closes): the lease expires on its own. */
  abandon(): void {
    this.released = true;
    clearInterval(this.timer);
  }

  private tick(): void {
    if (this.released || this.lostError) return;
    if (Date.now() - this.lastRenewed >= this.leaseMs) {
      this.markLost(`not renewed within ${this.leaseMs} ms`);
      return;
    }
    if (this.renewing) return;
    this.renewing = true;
    const sentAt = Date.now();
    this.driver
      .renew(this.token)
      .then(
        (r) => {
          if (r === 'ok') this.lastRenewed = Math.max(this.lastRenewed, sentAt);
          else if (!this.released) this.markLost(r.owner ? `now held by ${r.owner}` : 'it expired before it was renewed', { owner: r.owner || undefined });
        },
        () => undefined, // retried at the next tick; lost once leaseMs passed without a renewal
      )
      .finally(() => {
        this.renewing = false;
      });
  }
}
