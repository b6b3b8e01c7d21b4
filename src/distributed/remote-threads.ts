import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { tap } from 'rxjs';
import type { AgUiLiveSession, AgUiSessionHost, AgUiSessionPlacement } from '../consumers/agui-http/agui-http.sessions.js';
import { AgentRxError, toAgentRxError } from '../core/errors.js';
import type { SessionOptions } from '../core/session/session-options.js';
import { loadIoredis } from '../core/store/redis/redis-connection.js';
import type { SessionStore } from '../core/store/session-store.js';
import { DEFAULT_KEY_PREFIX, DistributedKeys } from './distributed-keys.js';
import { openRedis, redactUrl, scrubUrl } from './redis-link.js';
import type { RemoteSession } from './remote-session.js';
import type { SubmitOptions } from './submit-options.js';

/** An AG-UI host in `runtime.mode: 'distributed'`: `submit`, `remote`, its store and its Redis (an `AgentRx` fits). */
export type DistributedSessionHost = AgUiSessionHost & Required<Pick<AgUiSessionHost, 'submit' | 'remote' | 'config'>>;

/** Options of {@link RemoteThreadPlacement}. */
export interface RemoteThreadPlacementOptions {
  /** How long `GET /healthz` waits for Redis to answer PING (default 1,000 ms). */
  readonly healthTimeoutMs?: number;
  /** How long a thread's entry (thread id → submission) is kept after its last run started (default 7 days). */
  readonly threadTtlMs?: number;
  /** How long a reader's announcement (`hold`) lasts without renewal; renewed every third of it (default 15 s). */
  readonly followerTtlMs?: number;
}

/**
 * Where the AG-UI endpoint's sessions run in `runtime.mode: 'distributed'`: each thread's session
 * is enqueued for the worker pool with `rx.submit()` and streamed from Redis; the thread id →
 * submission id entry in Redis lets any endpoint sharing the Redis send a thread's next run to
 * its live session with `message()` (instead of opening another). `GET /healthz` checks Redis.
 */
export class RemoteThreadPlacement implements AgUiSessionPlacement {
  private readonly keys: DistributedKeys;
  private readonly url: string;
  private readonly store: SessionStore | undefined;
  private commands: Promise<Redis> | undefined;
  private probe: Promise<Redis> | undefined;
  private closed = false;

  constructor(
    private readonly host: DistributedSessionHost,
    private readonly opts: RemoteThreadPlacementOptions = {},
  ) {
    const url = host.config.store.url;
    if (host.config.store === undefined || typeof url !== 'string' || url === '') {
      throw new AgentRxError('invalid_config', "the AG-UI endpoint in runtime.mode 'distributed' needs store: { type: 'redis', url } in the config (the workers and every endpoint share it)");
    }
    this.url = url;
    this.store = host.sessionStore;
    this.keys = new DistributedKeys(host.config.store.keyPrefix ?? DEFAULT_KEY_PREFIX);
  }

  /** Enqueues the thread's session (`rx.submit`) and records it as the thread's live session. */
  async open(opts: SessionOptions): Promise<AgUiLiveSession> {
    if (opts.confirmTool) {
      throw new AgentRxError('invalid_options', "confirmTool cannot travel to the workers of runtime.mode 'distributed'; answer confirmations in the workers' config or run the endpoint embedded");
    }
    const { confirmTool: _confirm, signal: _signal, turnGuard: _guard, ...rest } = opts;
    const handle = await this.host.submit(rest as SubmitOptions);
    if (opts.threadId !== undefined) {
      try {
        await (await this.redis()).set(this.keys.thread(opts.threadId), handle.id, 'PX', this.threadTtlMs);
      } catch (e) {
        // The run goes on here; only another endpoint's follow-up would miss it (and resume from the store).
        void e;
      }
    }
    return liveSessionOf(handle);
  }

  /**
   * The thread's live session opened by any endpoint: its entry names a submission that has not
   * ended. Its events start after the log's current end (the runs before were streamed already).
   */
  async find(threadId: string): Promise<AgUiLiveSession | undefined> {
    const redis = await this.redis();
    let submissionId: string | null;
    let state: Record<string, string>;
    try {
      submissionId = await redis.get(this.keys.thread(threadId));
      if (submissionId === null) return undefined;
      state = await redis.hgetall(this.keys.of(submissionId).state);
    } catch (e) {
      throw new AgentRxError('store_error', scrubUrl(`cannot look up thread ${threadId} in Redis at ${redactUrl(this.url)}: ${toAgentRxError(e).message}`, this.url));
    }
    if (state['closed'] === '1') return undefined;
    const sessionId = state['sessionId'];
    // Not opened yet: its first request is still queued or starting, and its events would be taken
    // for this run's. (Once opened, a message sent during a running request waits for it, and the
    // frames of that request's end are not this run's: it starts at its own RUN_STARTED.)
    if (sessionId === undefined) {
      throw new AgentRxError('invalid_options', `thread ${threadId} is still starting its first request (on another endpoint); wait for its terminal event, or follow it with GET /threads/${encodeURIComponent(threadId)}/events`, { threadBusy: true, threadId });
    }
    const afterSeq = this.store ? await this.store.lastSeq(sessionId) : 0;
    await redis.pexpire(this.keys.thread(threadId), this.threadTtlMs).catch(() => undefined);
    return liveSessionOf(await this.host.remote(submissionId, { afterSeq }));
  }

  /**
   * Announces a reader of `threadId`'s run on this endpoint (a reconnect) in the thread's follower
   * set, renewed every `followerTtlMs / 3` while it reads; the release removes it.
   */
  hold(threadId: string): () => void {
    const key = this.keys.followers(threadId);
    const reader = randomUUID();
    const ttl = this.followerTtlMs;
    const beat = (): void =>
      void this.redis()
        .then((r) => r.multi().zadd(key, Date.now() + ttl, reader).zremrangebyscore(key, '-inf', Date.now()).pexpire(key, ttl).exec())
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

  /** True when a reader on any endpoint follows `threadId`'s run (its announcement has not expired). */
  async followed(threadId: string): Promise<boolean> {
    return (await (await this.redis()).zcount(this.keys.followers(threadId), Date.now(), '+inf')) > 0;
  }

  /** Redis answers PING within `healthTimeoutMs` (its own connection, which never queues commands while Redis is away). */
  async health(): Promise<{ healthy: boolean; checks: Record<string, string> }> {
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
    if (this.closed) return Promise.reject(new AgentRxError('session_closed', 'the AG-UI endpoint is closed'));
    this.commands ??= openRedis(this.url, 'agentrx-agui');
    // A failed connect is not kept: the next request tries again.
    this.commands.catch(() => (this.commands = undefined));
    return this.commands;
  }

  /** The health connection: no offline queue (a PING while Redis is away fails at once), reconnects on its own. */
  private probeClient(): Promise<Redis> {
    this.probe ??= loadIoredis().then((Redis) => {
      const client = new Redis(this.url, {
        connectionName: 'agentrx-agui-health',
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

/**
 * A submitted session as the endpoint's threads drive it: `closed` resolves once its events have
 * all been read (not merely when the worker published its end, which may come first), and
 * `detach` lets go of it without ending it.
 */
function liveSessionOf(handle: RemoteSession): AgUiLiveSession {
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  return {
    events$: handle.events$.pipe(tap({ complete: () => markClosed(), error: () => markClosed() })),
    closed,
    message: (text) => handle.message(text),
    // A tool confirmation asked as an AG-UI interrupt is answered through the owner worker.
    sendEvent: (event) => handle.sendEvent(event),
    cancel: () => handle.cancel(),
    close: () => handle.close(),
    detach: () => handle.detach(),
  };
}

/** True when `rx` is an AgentRx (or look-alike) configured for `runtime.mode: 'distributed'`. */
export function isDistributedHost(rx: AgUiSessionHost): rx is DistributedSessionHost {
  return rx.config?.runtime.mode === 'distributed';
}
