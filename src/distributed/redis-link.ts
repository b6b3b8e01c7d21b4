import type { Redis } from 'ioredis';
import type { RedisLocation, StreamEntry } from './distributed-keys.js';
import {
  databaseOf,
  DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
  firstConnection,
  loadIoredis,
  redactUrl,
  type RedisConnectOptions,
  redisStoreError,
  selectDatabase,
} from './redis-store/redis-connection.js';

export { redactUrl };
export type { RedisLocation, StreamEntry };

/**
 * `message` with `url` shown redacted and its password removed wherever it appears: BullMQ and
 * ioredis errors may quote either.
 */
export function scrubUrl(message: string, url: string): string {
  let out = message.split(url).join(redactUrl(url));
  try {
    const u = new URL(url);
    for (const s of [u.password, decodeURIComponent(u.password)]) if (s.length >= 3) out = out.split(s).join('***');
  } catch {
    // not a URL: nothing more to scrub
  }
  return out;
}

/**
 * A connected client for `url` with `maxRetriesPerRequest: null` (what BullMQ needs, and what a
 * blocking XREAD needs: a command waits through a reconnect instead of failing). The first
 * connection is awaited: a failure is a `store_error` naming the redacted URL; so is a server
 * that does not answer within `connectTimeoutMs` (default 10 s; naming its host and port), and a
 * database index the server does not have. `signal` abandons the attempt (its socket closed).
 */
export async function openRedis(url: string, name: string, options: RedisConnectOptions = {}): Promise<Redis> {
  const Redis = await loadIoredis();
  const db = databaseOf(url);
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS;
  let client: Redis;
  try {
    // No retry for the first connection: a Redis that is not there is reported at once.
    client = new Redis(url, {
      lazyConnect: true,
      connectionName: name,
      connectTimeout: connectTimeoutMs,
      maxRetriesPerRequest: null,
      retryStrategy: () => null,
    });
  } catch (e) {
    throw redisStoreError(url, 'invalid Redis URL', e);
  }
  // Without a listener ioredis prints every connection error (with the URL); callers see them on the calls.
  client.on('error', () => undefined);
  try {
    await firstConnection(client, url, { ...options, connectTimeoutMs });
    await selectDatabase(client, url, db);
  } catch (e) {
    // Ended already (no retry): disconnecting it again would leave ioredis's 2 s close timer behind.
    if (client.status !== 'end') client.disconnect();
    throw redisStoreError(url, 'cannot connect to Redis; check the URL and that Redis is running', e);
  }
  // Later drops reconnect (ioredis's default backoff); commands wait meanwhile.
  client.options.retryStrategy = (times: number) => Math.min(times * 50, 2_000);
  return client;
}

/**
 * Follows one Redis Stream from `after` (an entry id; `0` from the start) on its own connection
 * with `XREAD BLOCK`, handing each batch to `onEntries` and waiting for it before reading on (so
 * entries are handled one batch at a time, in order). Connection errors are retried with backoff
 * (ioredis reconnects); `stop()` ends the loop and closes the connection.
 */
export class StreamFollower {
  private client: Redis | undefined;
  private stopped = false;
  private cursor: string;
  /** Settles when the loop has ended. */
  readonly done: Promise<void>;

  constructor(
    private readonly connect: () => Promise<Redis>,
    private readonly key: string,
    after: string,
    private readonly onEntries: (entries: readonly StreamEntry[]) => Promise<void> | void,
    private readonly onError: (e: unknown) => void = () => undefined,
    private readonly blockMs = 5_000,
    /** Checked before each read: false ends the loop (the reader it feeds is gone). */
    private readonly alive: () => boolean = () => true,
  ) {
    this.cursor = after;
    this.done = this.loop();
  }

  /** The id of the last entry handed to `onEntries`. */
  get position(): string {
    return this.cursor;
  }

  /** Ends the loop (a batch being handled finishes first) and closes the connection. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    // Interrupts a blocked XREAD. Once only: a second disconnect of a closed client leaves a 2 s timer.
    const client = this.client;
    this.client = undefined;
    client?.disconnect();
    await this.done;
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      if (!this.alive()) break;
      try {
        this.client ??= await this.connect();
        if (this.stopped) break;
        const res = (await this.client.xread('COUNT', 100, 'BLOCK', this.blockMs, 'STREAMS', this.key, this.cursor)) as [string, [string, string[]][]][] | null;
        failures = 0;
        const entries = res?.[0]?.[1] ?? [];
        if (entries.length === 0 || this.stopped) continue;
        this.cursor = entries[entries.length - 1]![0];
        await this.onEntries(entries);
      } catch (e) {
        if (this.stopped) break;
        this.onError(e);
        failures++;
        await new Promise<void>((resolve) => setTimeout(resolve, Math.min(50 * 2 ** failures, 2_000)).unref());
      }
    }
    this.client?.disconnect();
    this.client = undefined;
  }
}
