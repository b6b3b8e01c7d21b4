import type { Redis } from 'ioredis';
import { AgentRxError } from '../../core/errors.js';
import { newestFirst, plainEntry, provisionEntryOf } from '../../core/provision/provision-entry.js';
import type { ProvisionBase, ProvisionEntry, ProvisionKey, ProvisionStore } from '../../core/provision/provision-store.js';
import { connectRedis, redactUrl, type RedisConnectOptions, redisStoreError } from './redis-connection.js';

/** How the Redis engine's provision store is built (from the same `store` section as its session store). */
export interface RedisProvisionStoreOptions {
  /** `redis://[user:pass@]host[:port][/db]` (or `rediss://`). Credentials never appear in errors. */
  readonly url: string;
  /** Prefix of every key (the session store's). Default `agentrx:`. */
  readonly keyPrefix?: string;
  /** How long the server has to answer a new connection before it is a `store_error`. Default 10,000 ms. */
  readonly connectTimeoutMs?: number;
  /** Called (synchronously, must not throw) when `list` leaves out a field that holds no entry. */
  readonly onRepair?: (key: string, what: string) => void;
}

/**
 * The Redis engine's provision store, under the engine's key prefix: per (provider, kind) a hash
 * `<prefix>provision:<provider>:<kind>:entries` (digest → entry JSON), and per base a hash
 * `<prefix>provision:<provider>:<kind>:tags:<base>` (tag → digest); each part URI-encoded, so no
 * name can reach into another's key. Each call is one command on one key, so it is atomic and
 * works on a cluster. Its own connection, made at the first call (the connection code of the
 * session store: `connectRedis`); every failure is a `store_error` naming the redacted URL.
 */
export class RedisProvisionStore implements ProvisionStore {
  private readonly url: string;
  private readonly prefix: string;
  private readonly onRepair: (key: string, what: string) => void;
  private client: Promise<Redis> | undefined;
  private closed = false;
  private readonly closing = new AbortController();
  private readonly connectOptions: RedisConnectOptions;

  constructor(options: RedisProvisionStoreOptions) {
    this.url = options.url;
    this.prefix = `${options.keyPrefix ?? 'agentrx:'}provision:`;
    this.onRepair = options.onRepair ?? (() => undefined);
    this.connectOptions = { connectTimeoutMs: options.connectTimeoutMs, signal: this.closing.signal };
  }

  async get(key: ProvisionKey): Promise<ProvisionEntry | undefined> {
    const hash = this.entriesKey(key.provider, key.kind);
    const text = await this.call(`cannot read provision entry ${key.kind}/${key.digest}`, (c) => c.hget(hash, key.digest));
    if (text === null) return undefined;
    return provisionEntryOf(parse(text, `${hash} field ${key.digest}`), `Redis key ${hash} field ${key.digest}`);
  }

  async put(entry: ProvisionEntry): Promise<void> {
    const plain = plainEntry(entry, `provision entry ${entry?.kind}/${entry?.digest}`);
    await this.call(`cannot write provision entry ${plain.kind}/${plain.digest}`, (c) =>
      c.hset(this.entriesKey(plain.provider, plain.kind), plain.digest, JSON.stringify(plain)),
    );
  }

  async evict(key: ProvisionKey): Promise<void> {
    await this.call(`cannot remove provision entry ${key.kind}/${key.digest}`, (c) => c.hdel(this.entriesKey(key.provider, key.kind), key.digest));
  }

  async list(filter: { readonly provider: string; readonly kind: string; readonly base?: string }): Promise<ProvisionEntry[]> {
    const hash = this.entriesKey(filter.provider, filter.kind);
    const all = await this.call(`cannot list the provisions of kind ${filter.kind}`, (c) => c.hgetall(hash));
    const out: ProvisionEntry[] = [];
    for (const [digest, text] of Object.entries(all)) {
      try {
        const entry = provisionEntryOf(parse(text, `${hash} field ${digest}`), `Redis key ${hash} field ${digest}`);
        if (filter.base === undefined || entry.base === filter.base) out.push(entry);
      } catch (e) {
        this.onRepair(`${hash} ${digest}`, `left out of the provisions list: ${(e as Error).message}`);
      }
    }
    return out.sort(newestFirst);
  }

  async setTag(base: ProvisionBase, tag: string, digest: string): Promise<void> {
    await this.call(`cannot set tag ${base.base}:${tag}`, (c) => c.hset(this.tagsKey(base), tag, digest));
  }

  async deleteTag(base: ProvisionBase, tag: string): Promise<void> {
    await this.call(`cannot remove tag ${base.base}:${tag}`, (c) => c.hdel(this.tagsKey(base), tag));
  }

  async tags(base: ProvisionBase): Promise<Readonly<Record<string, string>>> {
    return { ...(await this.call(`cannot read the tags of ${base.base}`, (c) => c.hgetall(this.tagsKey(base)))) };
  }

  /** Closes the connection; later calls are a `store_error`. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    const client = await this.client?.catch(() => undefined);
    this.client = undefined;
    if (client) await client.quit().catch(() => client.disconnect());
  }

  private entriesKey(provider: string, kind: string): string {
    return `${this.prefix}${encodeURIComponent(provider)}:${encodeURIComponent(kind)}:entries`;
  }

  private tagsKey(base: ProvisionBase): string {
    return `${this.prefix}${encodeURIComponent(base.provider)}:${encodeURIComponent(base.kind)}:tags:${encodeURIComponent(base.base)}`;
  }

  private connected(): Promise<Redis> {
    if (this.closed) return Promise.reject(new AgentRxError('store_error', `the Redis provision store (${redactUrl(this.url)}) is closed`));
    this.client ??= connectRedis(this.url, 'agentrx-provisions', this.connectOptions).catch((e: unknown) => {
      this.client = undefined; // the next call tries again
      throw e;
    });
    return this.client;
  }

  /** Runs `fn` on the client, turning failures into a `store_error` saying what failed. */
  private async call<T>(what: string, fn: (c: Redis) => Promise<T>): Promise<T> {
    const client = await this.connected();
    try {
      return await fn(client);
    } catch (e) {
      throw redisStoreError(this.url, `provision store: ${what}`, e);
    }
  }
}

function parse(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AgentRxError('store_error', `Redis key ${where} is not JSON; delete it (the next run provisions again)`, { where });
  }
}
