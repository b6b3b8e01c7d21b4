/* What the worker pool reports about itself: types only, so the public declarations need no Redis or BullMQ types. */

/** One session a worker runs, as its heartbeat reports it. */
export interface WorkerSessionStatus {
  /** The submission (BullMQ job) id. */
  readonly submissionId: string;
  /** The store's session id, once the session opened. */
  readonly sessionId?: string;
  /** How long this worker has held the session (since it took the job and its lease), at the heartbeat. */
  readonly leaseAgeMs: number;
}

/** What a worker announces in Redis at every heartbeat (a key that expires unless renewed). */
export interface WorkerHeartbeat {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly queue: string;
  /** Epoch ms the worker started. */
  readonly startedAt: number;
  /** Epoch ms of this heartbeat. */
  readonly heartbeatAt: number;
  /** Sessions it runs at once at most. */
  readonly concurrency: number;
  readonly sessions: readonly WorkerSessionStatus[];
}

/** A live worker as `agentrx workers` shows it. */
export interface WorkerStatus extends WorkerHeartbeat {
  /** The oldest of its sessions' lease ages now (0 without sessions). */
  readonly oldestLeaseAgeMs: number;
}

/** Jobs of the queue by state (`waiting` counts prioritized jobs too). */
export interface QueueDepth {
  readonly name: string;
  readonly waiting: number;
  readonly active: number;
  readonly delayed: number;
  readonly failed: number;
}

/** The pool at one moment: its live workers (by id) and its queue's depth. */
export interface PoolStatus {
  readonly at: number;
  readonly queue: QueueDepth;
  readonly workers: readonly WorkerStatus[];
}
