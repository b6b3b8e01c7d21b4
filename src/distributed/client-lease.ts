/**
 * How a handle tells the workers it is still held: a sorted set per submission (member: the
 * handle's holder id, score: the expiry of its lease in epoch ms), renewed while the handle is
 * reachable. The worker that owns the session closes it once it is idle and no lease is current:
 * nobody can send it anything any more, so its slot is freed soon after its last result instead
 * of after the worker's whole idle time.
 */
export interface HolderLeases {
  /** Sets (or renews) `holder`'s lease to expire `ms` from now. */
  renew(holder: string, ms: number): Promise<void>;
  /** Removes `holder`'s lease (the handle was released). */
  drop(holder: string): Promise<void>;
}

/**
 * Keeps one handle's lease while the handle is reachable: the timer holds the handle only weakly
 * (a handle nobody references any more is collected, and its lease lapses), renews every third
 * of `leaseMs`, and never keeps the process alive. A failed renewal is retried at the next tick.
 */
export class LeaseKeeper {
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  constructor(
    handle: object,
    private readonly leases: HolderLeases,
    private readonly holder: string,
    private readonly leaseMs: number,
    /** True while the handle wants its session kept (not ended, not released). */
    wanted: (handle: object) => boolean,
  ) {
    const ref = new WeakRef(handle);
    const tick = (): void => {
      const h = ref.deref();
      if (h === undefined || !wanted(h)) return void this.stop();
      void leases.renew(holder, leaseMs).catch(() => undefined);
    };
    this.timer = setInterval(tick, Math.max(1, Math.floor(leaseMs / 3)));
    this.timer.unref();
    tick();
  }

  /** Stops renewing and removes the lease. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    await this.leases.drop(this.holder).catch(() => undefined);
  }
}
