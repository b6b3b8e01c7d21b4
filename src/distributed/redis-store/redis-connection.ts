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

/**
 * A connected client for `url`: the first connection is awaited (a failure is a `store_error`
 * naming the redacted URL, and the client is dropped); later drops reconnect on their own, and
 * commands sent meanwhile wait in the offline queue.
 */
export async function connectRedis(url: string, name: string): Promise<Redis> {
  const Redis = await loadIoredis();
  let client: Redis;
  let ready = false;
  try {
    client = new Redis(url, {
      lazyConnect: true,
      connectionName: name,
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
  try {
    await client.connect();
    ready = true;
  } catch (e) {
    if (client.status !== 'end') client.disconnect();
    // connect() only says "Connection is closed"; the error event before it says why (refused, WRONGPASS…).
    throw redisStoreError(url, 'cannot connect to Redis for the session store; check store.url, its credentials, and that Redis is running', lastError ?? e);
  } finally {
    client.off('error', remember);
  }
  return client;
}
