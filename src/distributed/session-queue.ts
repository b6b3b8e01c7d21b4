import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { loadBullmq } from './bullmq.js';
import type { Redis } from 'ioredis';
import { AgentRxError } from '../core/errors.js';
import type { SessionStore } from '../core/store/session-store.js';
import { redisStoreError } from './redis-store/redis-connection.js';
import { DEFAULT_KEY_PREFIX, DEFAULT_QUEUE_NAME, DistributedKeys } from './distributed-keys.js';
import { MESSAGE_FIELD, type InputMessage } from './distributed-messages.js';
import { openRedis, StreamFollower } from './redis-link.js';
import type { RedisLocation } from './distributed-keys.js';
import { RemoteSession } from './remote-session.js';
import { checkSubmitOptions, type SessionJobData, type SubmitOptions } from './submit-options.js';

/** Options of `SessionQueue.connect`. */
export interface SessionQueueOptions {
  /** The Redis the workers use (queue, streams) and its key prefix. */
  readonly redis: RedisLocation;
  /** The session store the workers write to (the Redis engine on the same Redis): handles tail its logs. */
  readonly store: SessionStore;
  /** BullMQ queue name (default `agentrx-sessions`); workers must use the same. */
  readonly queueName?: string;
  /**
   * How long a handle's lease lasts (ms, renewed every third of it while the handle is
   * referenced): once no handle holds a submission, its worker closes the idle session after
   * this long instead of after its whole idle time. Default 30 000.
   */
  readonly clientLeaseMs?: number;
}

/** Default of `SessionQueueOptions.clientLeaseMs`. */
export const DEFAULT_CLIENT_LEASE_MS = 30_000;

/** Options of `SessionQueue.open`. */
export interface OpenRemoteOptions {
  /** `events$`/`agui$` start after this `seq` (default 0: from the start of the log). */
  readonly afterSeq?: number;
}

/**
 * The client side of the worker pool: `submit` enqueues a session request as a BullMQ job and
 * returns a {@link RemoteSession}; `open` re-opens a handle by its submission id, from any process.
 *
 * Keys: the submission id (`sub-<uuid>`) is made here, before any worker saw the job; it is the
 * BullMQ job id and names the submission's input stream, output stream and state hash (see
 * {@link DistributedKeys}). The store's key (the provider-side session id) is known only once a
 * worker opened the session: the worker publishes it as the first entry (`opened`) of the output
 * stream and in the state hash, and a handle's `events$` waits for it before tailing the log.
 */
export class SessionQueue {
  private readonly keys: DistributedKeys;
  private readonly followers = new Set<StreamFollower>();
  private closed = false;
  /** Resolves when `close` begins: the handles' log reads end then. */
  private markStopped!: () => void;
  private readonly stopped = new Promise<void>((resolve) => (this.markStopped = resolve));

  private constructor(
    private readonly url: string,
    private readonly queue: Queue,
    private readonly commands: Redis,
    private readonly store: SessionStore,
    prefix: string,
    private readonly clientLeaseMs: number,
  ) {
    this.keys = new DistributedKeys(prefix);
  }

  /** Connects to Redis (a failure is a `store_error` naming the URL with its credentials redacted). */
  static async connect(opts: SessionQueueOptions): Promise<SessionQueue> {
    const { Queue } = await loadBullmq();
    const prefix = opts.redis.keyPrefix ?? DEFAULT_KEY_PREFIX;
    const commands = await openRedis(opts.redis.url, 'agentrx-queue');
    const keys = new DistributedKeys(prefix);
    const queue = new Queue(opts.queueName ?? DEFAULT_QUEUE_NAME, { connection: commands, prefix: keys.bullPrefix });
    queue.on('error', () => undefined);
    const leaseMs = opts.clientLeaseMs ?? DEFAULT_CLIENT_LEASE_MS;
    if (!Number.isInteger(leaseMs) || leaseMs < 100)
      throw new AgentRxError('invalid_options', `clientLeaseMs must be a whole number of ms ≥ 100; got ${JSON.stringify(opts.clientLeaseMs)}`);
    return new SessionQueue(opts.redis.url, queue, commands, opts.store, prefix, leaseMs);
  }

  /**
   * Enqueues a session request: the options of `rx.start` that can travel as JSON (functions and
   * signals are refused with `invalid_options` saying why). Resolves once the job is in the queue.
   */
  async submit(opts: SubmitOptions = {}): Promise<RemoteSession> {
    this.checkOpen();
    const options = checkSubmitOptions(opts);
    const submissionId = `sub-${randomUUID()}`;
    const data: SessionJobData = { v: 1, submissionId, options, clientLeaseMs: this.clientLeaseMs };
    try {
      // One attempt: a request that fails is reported to its handle, never run again blindly.
      await this.queue.add('session', data, { jobId: submissionId, attempts: 1, removeOnComplete: true, removeOnFail: 1_000 });
    } catch (e) {
      throw redisStoreError(this.url, 'cannot enqueue the session request', e);
    }
    return this.open(submissionId);
  }

  /** A handle on submission `submissionId` (from `submit`, here or in another process). */
  open(submissionId: string, opts: OpenRemoteOptions = {}): RemoteSession {
    this.checkOpen();
    if (typeof submissionId !== 'string' || submissionId.length === 0)
      throw new AgentRxError('invalid_options', 'open(submissionId): submissionId must be a non-empty string');
    const afterSeq = opts.afterSeq ?? 0;
    if (!Number.isInteger(afterSeq) || afterSeq < 0)
      throw new AgentRxError('invalid_options', `open: afterSeq must be an integer ≥ 0; got ${JSON.stringify(opts.afterSeq)}`);
    const keys = this.keys.of(submissionId);
    return new RemoteSession(
      submissionId,
      {
        store: this.store,
        keys,
        follow: (key, after, onEntries, alive) => {
          const follower = new StreamFollower(() => openRedis(this.url, 'agentrx-handle'), key, after, onEntries, undefined, undefined, alive);
          this.followers.add(follower);
          // A follower whose handle was collected ends by itself.
          void follower.done.then(() => this.followers.delete(follower));
          return async () => {
            this.followers.delete(follower);
            await follower.stop();
          };
        },
        send: (key, message) => this.send(key, message),
        stopped: this.stopped,
        leases: {
          ms: this.clientLeaseMs,
          holders: {
            renew: async (holder, ms) => {
              if (this.closed) return;
              await this.commands
                .multi()
                .zadd(keys.holders, Date.now() + ms, holder)
                .pexpire(keys.holders, ms * 4)
                .exec();
            },
            drop: async (holder) => {
              if (this.closed) return;
              await this.commands.zrem(keys.holders, holder);
            },
          },
        },
      },
      afterSeq,
    );
  }

  /** Stops every handle's reading and closes the connections (sessions go on in the workers). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.markStopped();
    await Promise.all([...this.followers].map((f) => f.stop()));
    this.followers.clear();
    await this.queue.close().catch(() => undefined);
    await this.commands.quit().catch(() => this.commands.disconnect());
  }

  private async send(key: string, message: InputMessage): Promise<string> {
    this.checkOpen();
    try {
      return (await this.commands.xadd(key, '*', MESSAGE_FIELD, JSON.stringify(message)))!;
    } catch (e) {
      throw redisStoreError(this.url, `cannot send ${message.kind} to the session`, e);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new AgentRxError('session_closed', 'this SessionQueue is closed; connect a new one');
  }
}
