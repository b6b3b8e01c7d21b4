import type { Redis, RedisOptions } from 'ioredis';
import { AgentRxError } from '../../core/errors.js';
import { isModuleNotFound, missingPeerError } from '../../core/util/optional-peer.js';

/** The ioredis client class, as the dynamic import gives it. */
type RedisClass = new (url: string, options: RedisOptions) => Redis;

let loaded: Promise<RedisClass> | undefined;

/**
 * Loads ioredis on first use, so an install that never selects the Redis store need not have it.
 * A missing package is a `store_error` saying what to install.
 */
export function loadIoredis(): Promise<RedisClass> {
  loaded ??= import('ioredis').then(
    (mod: unknown) => {
      const cls = redisClassIn(mod);
      if (!cls) throw new Error('the ioredis module exports no Redis class');
      return cls;
    },
    (e: unknown) => {
      loaded = undefined;
      if (isModuleNotFound(e)) {
        throw missingPeerError({ name: 'ioredis', feature: "the Redis store (store.type 'redis')", code: 'store_error' });
      }
      throw new AgentRxError('store_error', `cannot load ioredis for store type 'redis': ${(e as Error)?.message ?? String(e)}`, { package: 'ioredis' });
    },
  );
  return loaded;
}

/**
 * The client class in what `import('ioredis')` gave: its `Redis` export, or its default export
 * (the class itself, or the CommonJS exports holding it), depending on how the module was loaded.
 */
function redisClassIn(mod: unknown, depth = 0): RedisClass | undefined {
  if (isClass(mod)) return mod;
  if (typeof mod !== 'object' || mod === null || depth > 2) return undefined;
  if ('Redis' in mod && isClass(mod.Redis)) return mod.Redis;
  return 'default' in mod ? redisClassIn(mod.default, depth + 1) : undefined;
}

/** A function found where ioredis exports its client class is that class. */
function isClass(value: unknown): value is RedisClass {
  return typeof value === 'function';
}

/** `url` with its user name and password replaced by `***`: the only form a message or log may carry. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '***';
    u.password = '';
    return u.toString();
  } catch {
    // Not a URL we can parse: keep only what follows the last '@', if anything.
    const at = url.lastIndexOf('@');
    return at < 0 ? url : `***@${url.slice(at + 1)}`;
  }
}

/** The secrets of `url` (user name, password), to scrub from messages that come from the client. */
function secretsOf(url: string): string[] {
  try {
    const u = new URL(url);
    return [u.password, decodeURIComponent(u.password), u.username, decodeURIComponent(u.username)].filter((s) => s.length >= 3);
  } catch {
    return [];
  }
}

/**
 * Turns what the client threw into a `store_error` naming the session and the redacted URL. The
 * client's error is NOT kept as `cause`: ioredis attaches the failed command with its arguments
 * (an `AUTH` carries the password).
 */
export function redisStoreError(url: string, what: string, e: unknown, details: Record<string, unknown> = {}): AgentRxError {
  if (e instanceof AgentRxError) return e;
  let reason = e instanceof Error ? e.message : String(e);
  for (const secret of secretsOf(url)) reason = reason.split(secret).join('***');
  return new AgentRxError('store_error', `${what} (Redis at ${redactUrl(url)}): ${reason}`, { url: redactUrl(url), ...details });
}

/** How long a first connection may take (TCP connect, handshake, ready check) by default, in ms. */
export const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 10_000;

/** How a first connection is made. */
export interface RedisConnectOptions {
  /**
   * The server must have answered (the handshake and ready check done) within this many ms, or
   * the connection is closed and the call fails with a `store_error`. Default 10,000.
   */
  readonly connectTimeoutMs?: number;
  /** Aborting it while the connection is made closes its socket; the call fails with a `store_error`. */
  readonly signal?: AbortSignal;
  /** The config option that sets the timeout, named by the error (`connectRedis`: `store.connectTimeoutMs` unless given). */
  readonly timeoutOption?: string;
}

/**
 * A connected client for `url`: the first connection is awaited (a failure is a `store_error`
 * naming the redacted URL, and the client is dropped), bounded by `connectTimeoutMs` (a server
 * that accepts the connection and never answers is a `store_error` naming its host and port) and
 * abandoned when `signal` aborts; the database of the URL's path is selected (one the server does
 * not have is a `store_error` naming the index and the server's range). Later drops reconnect on
 * their own, and commands sent meanwhile wait in the offline queue.
 */
export async function connectRedis(url: string, name: string, options: RedisConnectOptions = {}): Promise<Redis> {
  const Redis = await loadIoredis();
  const db = databaseOf(url);
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS;
  let client: Redis;
  let ready = false;
  try {
    client = new Redis(url, {
      lazyConnect: true,
      connectionName: name,
      connectTimeout: timeoutMs,
      maxRetriesPerRequest: 20,
      // Reconnect (backing off up to 2 s) once connected; a first connection that fails ends the client.
      retryStrategy: (times) => (ready ? Math.min(times * 50, 2_000) : null),
    });
  } catch (e) {
    throw redisStoreError(url, 'invalid Redis URL for the session store', e);
  }
  // Without a listener ioredis prints every connection error; the store reports them on the calls.
  client.on('error', () => undefined);
  let lastError: unknown;
  const remember = (e: unknown): void => {
    lastError = e;
  };
  client.on('error', remember);
  const what = 'cannot connect to Redis for the session store; check store.url, its credentials, and that Redis is running';
  try {
    await firstConnection(client, url, { ...options, connectTimeoutMs: timeoutMs, timeoutOption: options.timeoutOption ?? 'store.connectTimeoutMs' });
    await selectDatabase(client, url, db);
    ready = true;
  } catch (e) {
    if (client.status !== 'end') client.disconnect();
    // connect() only says "Connection is closed"; the error event before it says why (refused, WRONGPASS…).
    throw e instanceof AgentRxError ? e : redisStoreError(url, what, lastError ?? e);
  } finally {
    client.off('error', remember);
  }
  return client;
}

/**
 * Awaits `client.connect()` within `connectTimeoutMs`, or until `signal` aborts: either one ends
 * the attempt with a `store_error` (the caller closes the client). A server that does not answer
 * at all (a listener that accepts and stays silent) never fails the connect by itself.
 */
export async function firstConnection(client: Redis, url: string, options: RedisConnectOptions): Promise<void> {
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS;
  const signal = options.signal;
  if (signal?.aborted) throw redisStoreError(url, 'cannot connect to Redis', new Error('the store was closed before it connected'));
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const connecting = client.connect();
  // Settled after the race is lost (the socket closed under it): nothing left to report.
  connecting.catch(() => undefined);
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const raise = options.timeoutOption ? ` (or raise ${options.timeoutOption})` : '';
      reject(
        redisStoreError(
          url,
          'cannot connect to Redis',
          new Error(`the server at ${hostPortOf(url)} did not answer within ${timeoutMs} ms; check that it is a Redis server that is up${raise}`),
          { timeoutMs },
        ),
      );
    }, timeoutMs);
    onAbort = () => reject(redisStoreError(url, 'cannot connect to Redis', new Error('the store was closed while it was connecting')));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([connecting, stopped]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/** `host:port` of a Redis URL (never its credentials); the default port is 6379. */
export function hostPortOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return redactUrl(url);
  }
}

/**
 * The database index in the path of `url` (`redis://host:6379/3` → 3; no path → 0); a path that
 * is not a whole number is a `store_error` (the config refuses it first, see `RedisStoreConfig`).
 */
export function databaseOf(url: string): number {
  let path = '';
  try {
    path = new URL(url).pathname;
  } catch {
    return 0; // ioredis reports the URL itself
  }
  if (path === '' || path === '/') return 0;
  const index = path.slice(1);
  if (!/^\d{1,9}$/.test(index)) {
    throw new AgentRxError(
      'store_error',
      `the Redis URL ${redactUrl(url)} names database '${index}', which is not a database index (a whole number, 0–15 on a default server)`,
      {
        url: redactUrl(url),
      },
    );
  }
  return Number(index);
}

/**
 * Selects database `db` on `client` (ioredis selects it at connect, but goes on in database 0
 * when the server refuses): a server without that database is a `store_error` naming the index
 * and the server's range (from its `databases` setting, when CONFIG may be read).
 */
export async function selectDatabase(client: Redis, url: string, db: number): Promise<void> {
  if (db === 0) return;
  try {
    await client.select(db);
  } catch (e) {
    const count = await client.config('GET', 'databases').then(
      (reply) => Number((reply as string[])[1]),
      () => NaN,
    );
    const range =
      Number.isInteger(count) && count > 0
        ? `it has databases 0–${count - 1} (its 'databases' setting is ${count})`
        : `its databases run from 0 to its 'databases' setting less one (0–15 by default)`;
    throw redisStoreError(
      url,
      `Redis database ${db} (the path of the URL) does not exist on the server at ${hostPortOf(url)}`,
      new Error(`${range}: ${e instanceof Error ? e.message : String(e)}`),
      {
        db,
        ...(Number.isInteger(count) && count > 0 ? { databases: count } : {}),
      },
    );
  }
}
