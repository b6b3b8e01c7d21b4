import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AgentRxError, toAgentRxError } from '../core/errors.js';
import type { LiveSession } from '../core/plugin/live-session.js';
import type { SessionOptions } from '../core/plugin/session-options.js';
import type { LogReader, PlacementHealth, SessionPlacement } from '../core/plugin/session-placement.js';
import { attachLog } from '../core/session/log-attachment.js';
import { awaitsClient } from '../core/tools/client-answers.js';
import { clientToolDeclaration } from '../core/tools/client-tool.js';
import { loadIoredis } from './redis-store/redis-connection.js';
import type { SessionStore } from '../core/store/session-store.js';
import { DEFAULT_KEY_PREFIX, DistributedKeys, type RedisLocation } from './distributed-keys.js';
import { openRedis, redactUrl, scrubUrl } from './redis-link.js';
import type { RemoteSession } from './remote-session.js';
import type { OpenRemoteOptions } from './session-queue.js';
import type { SubmitOptions } from './submit-options.js';

/** How sessions reach the worker pool: a `SessionQueue` fits, or an `AgentRx`'s `submit` and `remote` (`open`). */
export interface RemoteSessions {
  /** Enqueues a session request for the workers. */
  submit(opts: SubmitOptions): Promise<RemoteSession>;
  /** A handle on a submitted session by its submission id, from any process. */
  open(submissionId: string, opts?: OpenRemoteOptions): RemoteSession | Promise<RemoteSession>;
}

/** What a {@link DistributedPlacement} is built from. */
export interface DistributedPlacementOptions {
  /** Where its sessions are enqueued and re-opened. */
  readonly sessions: RemoteSessions;
  /** The store the workers write the sessions' logs to (the Redis engine on the same Redis). */
  readonly store: SessionStore;
  /** The workers' Redis: the thread entries and the readers' announcements live there. */
  readonly redis: RedisLocation;
  /** How long `health()` waits for Redis to answer PING (default 1,000 ms). */
  readonly healthTimeoutMs?: number;
  /** How long a thread's entry (thread id → submission) is kept after its last run started (default 7 days). */
  readonly threadTtlMs?: number;
  /** How long a reader's announcement (`follow`) lasts without renewal; renewed every third of it (default 15 s). */
  readonly followerTtlMs?: number;
}

/** The options of `start` that cannot travel to a worker, and why (`open` refuses them). */
const CANNOT_TRAVEL: Readonly<Record<string, string>> = {
  confirmTool: 'a function cannot travel to the workers; answer confirmations with sendEvent (an AG-UI client answers them as interrupts) or in the workers',
  turnGuard: 'a function cannot travel to the workers; bound the run with maxTurns and timeoutMs',
  signal: 'an AbortSignal cannot travel to the workers; call cancel() on the session instead',
};

/**
 * Where sessions run in `runtime.mode: 'distributed'`: each one is enqueued for the worker pool and
 * read from Redis. A session opened for a thread is recorded (thread id → submission id, with an
 * expiry) so that any instance sharing the Redis finds it (`find`) and sends the thread's next
 * request to it with `message()` instead of opening another. Readers announce themselves in Redis
 * (`follow`) so that every instance sees them; `health` PINGs Redis.
 */
export class DistributedPlacement implements SessionPlacement {
  private readonly keys: DistributedKeys;
  private readonly url: string;
  private commands: Promise<Redis> | undefined;
  private probe: Promise<Redis> | undefined;
  private closed = false;

  constructor(private readonly opts: DistributedPlacementOptions) {
    const url = opts.redis?.url;
    if (typeof url !== 'string' || url === '') {
      throw new AgentRxError(
        'invalid_config',
        "runtime.mode 'distributed' needs store: { type: 'redis', url } in the config (the workers and every instance share it)",
      );
    }
    this.url = url;
    this.keys = new DistributedKeys(opts.redis.keyPrefix ?? DEFAULT_KEY_PREFIX);
  }

  /**
   * Enqueues the session and, with a `threadId`, records it as the thread's live session. Refuses
   * `confirmTool`, `turnGuard` and `signal` (`invalid_options` naming them). Of `tools`, those its
   * client answers (frontend tools) travel as their declarations: the worker offers them and the
   * client's answers reach their calls through `answerClient`; other handlers are left out (they
   * run in this process, the session in a worker).
   */
  async open(opts: SessionOptions): Promise<LiveSession> {
    this.checkOptions(opts);
    const { confirmTool: _confirm, signal: _signal, turnGuard: _guard, tools, ...travels } = opts;
    const clientTools = (tools ?? []).filter(awaitsClient).map(clientToolDeclaration);
    const handle = await this.opts.sessions.submit({ ...travels, ...(clientTools.length > 0 ? { clientTools } : {}) });
    if (opts.threadId !== undefined) {
      try {
        await (await this.redis()).set(this.keys.thread(opts.threadId), handle.id, 'PX', this.threadTtlMs);
      } catch {
        // The session goes on; only another instance's next request of the thread would miss it (and resume from the store).
      }
    }
    return handle;
  }

  /**
   * Throws `invalid_options` naming the options of `opts` that cannot travel to a worker (the
   * check `open` makes), so that a server configured with one fails when it is created.
   */
  checkOptions(opts: Partial<SessionOptions>): void {
    const refused = Object.keys(CANNOT_TRAVEL).filter((key) => opts[key as keyof SessionOptions] !== undefined);
    if (refused.length === 0) return;
    const why = refused.map((key) => `${key}: ${CANNOT_TRAVEL[key]}`).join('; ');
    throw new AgentRxError(
      'invalid_options',
      `${refused.join(', ')} cannot be used in runtime.mode 'distributed' (${why}); leave ${refused.length > 1 ? 'them' : 'it'} out, or run sessions with runtime.mode 'embedded'`,
      { refused },
    );
  }

  /**
   * The thread's live session opened by any instance: its entry names a submission that has not
   * ended. Its events start after the log's current end (the requests before were read already).
   */
  async find(threadId: string): Promise<LiveSession | undefined> {
    const redis = await this.redis();
    let submissionId: string | null;
    let state: Record<string, string>;
    try {
      submissionId = await redis.get(this.keys.thread(threadId));
      if (submissionId === null) return undefined;
      state = await redis.hgetall(this.keys.of(submissionId).state);
    } catch (e) {
      throw new AgentRxError(
        'store_error',
        scrubUrl(`cannot look up thread ${threadId} in Redis at ${redactUrl(this.url)}: ${toAgentRxError(e).message}`, this.url),
      );
    }
    if (state['closed'] === '1') return undefined;
    const sessionId = state['sessionId'];
    // Not opened yet: its first request is still queued or starting, and its events would be taken
    // for this request's. (Once opened, a message sent during a running request waits for it, and
    // the events of that request's end come before this one's run_started.)
    if (sessionId === undefined) {
      throw new AgentRxError(
        'invalid_options',
        `thread ${threadId} is still starting its first request (on another instance); wait for its terminal event, or follow it with GET /threads/${encodeURIComponent(threadId)}/events`,
        { threadBusy: true, threadId },
      );
    }
    const afterSeq = await this.opts.store.lastSeq(sessionId);
    await redis.pexpire(this.keys.thread(threadId), this.threadTtlMs).catch(() => undefined);
    return this.opts.sessions.open(submissionId, { afterSeq });
  }

  /** Reads `sessionId`'s log from the store the workers write to. */
  attach(sessionId: string, opts: { readonly afterSeq?: number } = {}): LogReader {
    return attachLog(this.opts.store, sessionId, opts.afterSeq ?? 0);
  }

  /**
   * Announces a reader of `threadId`'s run in the thread's follower set, renewed every
   * `followerTtlMs / 3` while it reads; the release removes it.
   */
  follow(threadId: string): () => void {
    const key = this.keys.followers(threadId);
    const reader = randomUUID();
    const ttl = this.followerTtlMs;
    const beat = (): void =>
      void this.redis()
        .then((r) =>
          r
            .multi()
            .zadd(key, Date.now() + ttl, reader)
            .zremrangebyscore(key, '-inf', Date.now())
            .pexpire(key, ttl)
            .exec(),
        )
        .catch(() => undefined);
    beat();
    const timer = setInterval(beat, Math.max(10, Math.floor(ttl / 3)));
    timer.unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      clearInterval(timer);
      void this.redis()
        .then((r) => r.zrem(key, reader))
        .catch(() => undefined);
    };
  }

  /** True when a reader on any instance follows `threadId`'s run (its announcement has not expired). */
  async followed(threadId: string): Promise<boolean> {
    return (await (await this.redis()).zcount(this.keys.followers(threadId), Date.now(), '+inf')) > 0;
  }

  /** Redis answers PING within `healthTimeoutMs` (on its own connection, which never queues commands while Redis is away). */
  async health(): Promise<PlacementHealth> {
    const timeoutMs = this.opts.healthTimeoutMs ?? 1_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to PING within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const probe = await Promise.race([this.probeClient(), timeout]);
      if (probe.status !== 'ready') await Promise.race([new Promise<void>((resolve) => probe.once('ready', () => resolve())), timeout]);
      await Promise.race([probe.ping(), timeout]);
      return { healthy: true, checks: { redis: 'ok' } };
    } catch (e) {
      const reason = scrubUrl(e instanceof Error ? e.message : String(e), this.url);
      return { healthy: false, checks: { redis: `cannot reach Redis at ${redactUrl(this.url)}: ${reason}` } };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes its connections (the sessions go on in the workers). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const [commands, probe] = [this.commands, this.probe];
    this.commands = this.probe = undefined;
    await commands?.then((c) => c.quit()).catch(() => undefined);
    probe?.then((c) => c.disconnect()).catch(() => undefined);
  }

  private get followerTtlMs(): number {
    return this.opts.followerTtlMs ?? 15_000;
  }

  private get threadTtlMs(): number {
    return this.opts.threadTtlMs ?? 7 * 86_400_000;
  }

  private redis(): Promise<Redis> {
    if (this.closed) return Promise.reject(new AgentRxError('session_closed', 'this session placement is closed'));
    this.commands ??= openRedis(this.url, 'agentrx-placement');
    // A failed connect is not kept: the next request tries again.
    this.commands.catch(() => (this.commands = undefined));
    return this.commands;
  }

  /** The health connection: no offline queue (a PING while Redis is away fails at once), reconnects on its own. */
  private probeClient(): Promise<Redis> {
    this.probe ??= loadIoredis().then((Redis) => {
      const client = new Redis(this.url, {
        connectionName: 'agentrx-placement-health',
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: 2_000,
        retryStrategy: (times: number) => Math.min(times * 100, 1_000),
      });
      client.on('error', () => undefined);
      return client;
    });
    return this.probe;
  }
}
