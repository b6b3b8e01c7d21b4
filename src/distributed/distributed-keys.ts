/** Default prefix of every key agentrx writes in Redis (the session store uses the same one). */
export const DEFAULT_KEY_PREFIX = 'agentrx:';
/** Default BullMQ queue name of session requests. */
export const DEFAULT_QUEUE_NAME = 'agentrx-sessions';

/** The Redis keys of one submission: all under the hash tag `{<encoded id>}`, so they share a cluster slot. */
export interface SubmissionKeys {
  /**
   * Stream of inputs from the handles (`message`, `sendEvent`, `cancel`, `close`), read by the
   * worker that owns the session from its saved cursor. Keyed by submission, not by the store's
   * session id, because a handle may send inputs before any worker opened the session.
   */
  readonly inputs: string;
  /**
   * Stream of what the owner worker publishes (`opened` with the store's session id, each
   * request's `result`, input `ack`s, `closed`): every handle reads it from the start.
   */
  readonly outputs: string;
  /**
   * Hash of the placement state: `sessionId` (the store key, once opened), `cursor` (the last
   * input applied), `closed` ('1' once the session ended for good), `worker` (the last owner),
   * `epoch` (grows at each worker's claim: the owner's writes here and on `outputs` carry it and
   * are refused once another worker claimed the submission; see `SubmissionWriter`).
   */
  readonly state: string;
  /**
   * Sorted set of the handles holding the submission (member: a holder id, score: its lease's
   * expiry in ms; see `HolderLeases`): the owner closes an idle session once none is current.
   */
  readonly holders: string;
}

/**
 * Key naming of the distributed runtime under a prefix: the submissions' streams and state next to
 * the session store's keys (same prefix), and BullMQ's keys under `<prefix>bull`.
 */
export class DistributedKeys {
  /** The `prefix` option of BullMQ's Queue and Worker (BullMQ adds `:<queue>:…`). */
  readonly bullPrefix: string;

  constructor(readonly prefix: string = DEFAULT_KEY_PREFIX) {
    this.bullPrefix = `${prefix}bull`;
  }

  /** The submission id of the live session the AG-UI endpoints opened for `threadId` (a string, with an expiry). */
  thread(threadId: string): string {
    return `${this.prefix}dist:thread:{${encodeURIComponent(threadId)}}`;
  }

  /**
   * Sorted set of the readers following `threadId`'s run from an AG-UI endpoint (reconnects):
   * member a reader id, score its expiry (ms). An endpoint whose client left checks it before
   * cancelling the run at the end of its reconnect grace.
   */
  followers(threadId: string): string {
    return `${this.prefix}dist:followers:{${encodeURIComponent(threadId)}}`;
  }

  /** Sorted set of the workers of `queueName` that announced themselves: member the worker id, score its heartbeat's expiry (ms). */
  workers(queueName: string): string {
    return `${this.prefix}dist:workers:${queueName}`;
  }

  /** One worker's heartbeat (JSON of a `WorkerHeartbeat`), expiring unless renewed. */
  worker(queueName: string, workerId: string): string {
    return `${this.prefix}dist:worker:${queueName}:${encodeURIComponent(workerId)}`;
  }

  of(submissionId: string): SubmissionKeys {
    const tag = `${this.prefix}dist:{${encodeURIComponent(submissionId)}}`;
    return { inputs: `${tag}:in`, outputs: `${tag}:out`, state: `${tag}:state`, holders: `${tag}:holders` };
  }
}

/** Where the distributed runtime's Redis is, and the prefix of its keys. */
export interface RedisLocation {
  /** `redis://[user:pass@]host[:port][/db]` (or `rediss://`). Credentials never appear in errors or logs. */
  readonly url: string;
  /** Prefix of every key (default `agentrx:`, the session store's default). */
  readonly keyPrefix?: string;
}

/** One entry of a stream: its id and fields. */
export type StreamEntry = readonly [id: string, fields: string[]];
