import { AgentRxError } from '../core/errors.js';
import type { SessionStore } from '../core/store/session-store.js';
import type { RedisLocation } from './distributed-keys.js';
import type { RemoteSessions } from './distributed-placement.js';
import type { RemoteSession } from './remote-session.js';
import type { OpenRemoteOptions, SessionQueue } from './session-queue.js';
import type { SubmitOptions } from './submit-options.js';

/**
 * The worker pool's queue of one instance (`rx.submit`, `rx.remote` and the distributed placement
 * share it), connected at first use: BullMQ and ioredis are loaded only then, and a failed
 * connect is not kept (the next call tries again).
 */
export class QueueLink implements RemoteSessions {
  private queue: Promise<SessionQueue> | undefined;
  private closed = false;

  constructor(
    private readonly redis: RedisLocation,
    private readonly store: SessionStore,
    private readonly queueName: string | undefined,
    /** See `SessionQueueOptions.clientLeaseMs`. */
    private readonly clientLeaseMs?: number,
  ) {}

  /** Enqueues a session request for the workers (see `SessionQueue.submit`). */
  async submit(opts: SubmitOptions): Promise<RemoteSession> {
    return (await this.connected()).submit(opts);
  }

  /** A handle on a submitted session by its submission id, from any process. */
  async open(submissionId: string, opts: OpenRemoteOptions = {}): Promise<RemoteSession> {
    return (await this.connected()).open(submissionId, opts);
  }

  /** Stops every handle's reading and closes the connections (the sessions go on in the workers). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const queue = this.queue;
    this.queue = undefined;
    await queue?.then((q) => q.close()).catch(() => undefined);
  }

  private connected(): Promise<SessionQueue> {
    if (this.closed) return Promise.reject(new AgentRxError('session_closed', 'this instance is stopped; create a new one'));
    this.queue ??= import('./session-queue.js').then(({ SessionQueue }) =>
      SessionQueue.connect({
        redis: this.redis,
        store: this.store,
        queueName: this.queueName,
        ...(this.clientLeaseMs !== undefined ? { clientLeaseMs: this.clientLeaseMs } : {}),
      }),
    );
    this.queue.catch(() => (this.queue = undefined));
    return this.queue;
  }
}
