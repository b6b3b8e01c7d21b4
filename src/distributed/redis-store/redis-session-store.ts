import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { defer, Observable, switchMap } from '../../core/util/rxjs.js';
import { AgentRxError } from '../../core/errors.js';
import type { SessionEvent } from '../../core/events/session-event.js';
import type { LedgerEntry, LedgerState } from '../../core/tools/tool-ledger.js';
import { decodeEnvelope, decodeRecord } from './redis-records.js';
import { followLog } from '../../core/store/follow-log.js';
import { selectForPrune, type PrunableSessionStore, type PruneOptions } from '../../core/store/retention.js';
import type { SessionRecord, SessionStore, WriteOptions } from '../../core/store/session-store.js';
import { connectRedis, redactUrl, type RedisConnectOptions, redisStoreError } from './redis-connection.js';
import { RedisLease, type LosableStoreLease } from './redis-lease.js';
import { defineScripts, RedisKeys, scriptedPipeline, type ScriptedRedis } from './redis-scripts.js';
import { RedisStreamReader } from './redis-stream-reader.js';

/** How the Redis engine is built (`store: { type: 'redis', url, keyPrefix }` in the config). */
export interface RedisSessionStoreOptions {
  /** `redis://[user:pass@]host[:port][/db]` (or `rediss://`). Credentials never appear in errors. */
  readonly url: string;
  /** Prefix of every key. Default `agentrx:`. */
  readonly keyPrefix?: string;
  /** Lease expiry (renewed every third of it while held). Default 10,000 ms. */
  readonly leaseMs?: number;
  /** Called (synchronously, must not throw) when the store repaired something: here, the takeover of an expired lease. */
  readonly onRepair?: (key: string, what: string) => void;
  /** Who holds a lease, as a refused `acquire` names it. Default `<hostname>:<pid>`; a worker passes its worker id. */
  readonly owner?: string;
  /** How often a `tail` re-reads its log besides the wake-ups of the shared reader (a safety net). Default 5,000 ms. */
  readonly tailPollMs?: number;
  /** How long the server has to answer a new connection before it is a `store_error`. Default 10,000 ms. */
  readonly connectTimeoutMs?: number;
}

/** Default `keyPrefix`. */
export const DEFAULT_REDIS_KEY_PREFIX = 'agentrx:';
/** Default `leaseMs`. */
export const DEFAULT_REDIS_LEASE_MS = 10_000;

/**
 * The Redis engine (ioredis, loaded on first use). Per session, under a hash tag: the record in a
 * hash (ledger apart), the ledger in a hash plus a list of its ids in order (compare-and-set
 * `transition` in Lua), the log in a Stream whose entry ids are `<seq>-0`, and the lease. A sorted
 * set indexes the session ids for `list` and `prune`. See `redis-scripts.ts` for the layout.
 *
 * Durability: every write is applied in Redis when its call resolves, so `sync: false` is ignored
 * and `flush` only waits for the session's earlier writes; what survives a Redis crash is what
 * Redis persists (`appendonly yes` with `appendfsync everysec` or `always`). Writes of one
 * session go through one queue, so they take effect in call order.
 *
 * Ownership: `acquire` takes a lease (a key with expiry) and a fencing epoch (INCR at every
 * acquire); each write this instance makes for a session it holds carries the epoch and is
 * refused inside Redis when a later owner took a higher one. `tail`s share one blocking reader
 * connection per store (see `RedisStreamReader`).
 */
export class RedisSessionStore implements SessionStore, PrunableSessionStore {
  readonly durable = true;
  private readonly url: string;
  private readonly keys: RedisKeys;
  private readonly leaseMs: number;
  private readonly owner: string;
  private readonly tailPollMs: number;
  private readonly onRepair: (key: string, what: string) => void;
  private client: Promise<ScriptedRedis> | undefined;
  private reader: RedisStreamReader | undefined;
  private readonly held = new Map<string, RedisLease>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private closed = false;
  /** Aborted by `close`: a connection being made is abandoned (its socket closed). */
  private readonly closing = new AbortController();
  private readonly connectOptions: RedisConnectOptions;

  constructor(options: RedisSessionStoreOptions) {
    this.url = options.url;
    this.keys = new RedisKeys(options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX);
    this.leaseMs = options.leaseMs ?? DEFAULT_REDIS_LEASE_MS;
    this.owner = options.owner ?? `${hostname()}:${process.pid}`;
    this.tailPollMs = options.tailPollMs ?? 5_000;
    this.onRepair = options.onRepair ?? (() => undefined);
    this.connectOptions = { connectTimeoutMs: options.connectTimeoutMs, signal: this.closing.signal };
    if (/[{}]/.test(this.keys.prefix)) {
      throw new AgentRxError(
        'invalid_config',
        `store keyPrefix must not contain '{' or '}' (got '${this.keys.prefix}'): the engine puts each session id in a hash tag`,
        { keyPrefix: this.keys.prefix },
      );
    }
    if (!(this.leaseMs >= 30))
      throw new AgentRxError('invalid_config', `store leaseMs must be at least 30 ms (got ${this.leaseMs})`, { leaseMs: this.leaseMs });
  }

  /** The URL with credentials redacted, for messages and logs. */
  get redactedUrl(): string {
    return redactUrl(this.url);
  }

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    const k = this.keys.of(sessionId);
    const res = await this.call(sessionId, 'cannot load the record', (c) => c.rxLoad(k.record, k.ledger, k.order));
    return decodeRecord(sessionId, this.keys.of(sessionId).record, ...res);
  }

  async save(record: SessionRecord, _options?: WriteOptions): Promise<void> {
    const { sessionId } = record;
    const k = this.keys.of(sessionId);
    const { ledger, updatedAt, ...rest } = record;
    const args = ledger.flatMap((e) => [e.toolUseId, JSON.stringify(e)]);
    await this.write(sessionId, 'cannot save the record', async (c, epoch) => {
      this.check(sessionId, await c.rxSave(k.record, k.ledger, k.order, k.epoch, epoch, JSON.stringify(rest), record.status, String(updatedAt), ...args));
      await c.zadd(this.keys.sessions, updatedAt, sessionId);
      if (record.threadId !== undefined && record.threadId !== sessionId) await c.set(this.threadKey(record.threadId), sessionId);
    });
  }

  async delete(sessionId: string): Promise<void> {
    const k = this.keys.of(sessionId);
    const threadId = (await this.load(sessionId).catch(() => undefined))?.threadId;
    await this.write(sessionId, 'cannot delete the session', async (c, epoch) => {
      this.check(sessionId, await c.rxDelete(k.record, k.ledger, k.order, k.log, k.epoch, epoch));
      await c.zrem(this.keys.sessions, sessionId);
      // Its thread's index key goes with it, unless it names a newer session of the thread by now.
      if (threadId !== undefined && threadId !== sessionId) await c.rxForgetThread(this.threadKey(threadId), sessionId);
    });
    this.reader?.reset(k.log);
  }

  async findByThread(threadId: string): Promise<string | undefined> {
    const id = await this.call('*', 'cannot look up the thread', (c) => c.get(this.threadKey(threadId)));
    if (id === null) return undefined;
    const record = await this.load(id).catch(() => undefined);
    return record?.threadId === threadId ? id : undefined;
  }

  /** The key naming the session last saved with `threadId`. */
  private threadKey(threadId: string): string {
    return `${this.keys.prefix}thread:${threadId}`;
  }

  async list(): Promise<SessionRecord[]> {
    const ids = await this.call('*', 'cannot list the sessions', (c) => c.zrange(this.keys.sessions, '0', '-1'));
    const records = await this.loadMany(ids);
    return records.sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async transition(sessionId: string, expected: LedgerState | undefined, entry: LedgerEntry, _options?: WriteOptions): Promise<boolean> {
    const k = this.keys.of(sessionId);
    return this.write(sessionId, 'cannot record a tool ledger transition', async (c, epoch) => {
      const res = await c.rxTransition(k.record, k.ledger, k.order, k.epoch, epoch, entry.toolUseId, expected ?? '', JSON.stringify(entry), String(Date.now()));
      if (res[0] === 'norecord')
        throw new AgentRxError('store_error', `session '${sessionId}' has no record to hold its ledger; save the record first`, { sessionId });
      this.check(sessionId, res);
      return res[0] === 'ok';
    });
  }

  async append(sessionId: string, envelopes: readonly SessionEvent[]): Promise<void> {
    if (envelopes.length === 0) return;
    const k = this.keys.of(sessionId);
    const args: string[] = [];
    for (const env of envelopes) {
      if (!Number.isSafeInteger(env.seq) || env.seq < 1)
        throw new AgentRxError('store_error', `session '${sessionId}': seq ${env.seq} is not a positive integer`, { sessionId, seq: env.seq });
      args.push(String(env.seq), JSON.stringify(env));
    }
    await this.write(sessionId, 'cannot append to the log', async (c, epoch) => {
      const res = await c.rxAppend(k.log, k.epoch, epoch, ...args);
      if (res[0] === 'gap') {
        throw new AgentRxError('store_error', `session '${sessionId}': append of seq ${res[1]} would leave a gap after seq ${res[2]}`, {
          sessionId,
          seq: Number(res[1]),
          last: Number(res[2]),
        });
      }
      this.check(sessionId, res);
    });
  }

  /** Every write is applied when it resolves: this only waits for the session's pending writes. */
  async flush(sessionId: string): Promise<void> {
    await this.queues.get(sessionId)?.catch(() => undefined);
  }

  async read(sessionId: string, afterSeq: number, limit = 1_000): Promise<SessionEvent[]> {
    const after = Math.max(0, Math.floor(afterSeq));
    const k = this.keys.of(sessionId);
    const entries = await this.call(sessionId, 'cannot read the log', (c) =>
      c.xrange(k.log, after === 0 ? '-' : `(${after}-0`, '+', 'COUNT', String(Math.max(1, limit))),
    );
    return entries.map(([id, fields]) => decodeEnvelope(sessionId, id, fields));
  }

  async lastSeq(sessionId: string): Promise<number> {
    const k = this.keys.of(sessionId);
    const top = await this.call(sessionId, 'cannot read the log', (c) => c.xrevrange(k.log, '+', '-', 'COUNT', 1));
    return top.length === 0 ? 0 : parseInt(top[0]![0], 10);
  }

  tail(sessionId: string, afterSeq: number): Observable<SessionEvent> {
    const key = this.keys.of(sessionId).log;
    return defer(async () => {
      // Watched from the log's top as it is now: the replay reads up to at least there.
      const last = await this.lastSeq(sessionId);
      return { reader: this.sharedReader(await this.connected()), cursor: `${last}-0` };
    }).pipe(
      switchMap(({ reader, cursor }) => {
        const wake$ = new Observable<void>((subscriber) => reader.watch(key, cursor, () => subscriber.next()));
        return followLog(afterSeq, (after) => this.read(sessionId, after), wake$, this.tailPollMs);
      }),
    );
  }

  /**
   * Takes the session's lease (expiry `leaseMs`, renewed while held) with the next fencing epoch.
   * A live lease is refused with a `store_error` naming its owner; an expired one is taken over
   * (reported through `onRepair`). The lease is a `LosableStoreLease`: its `lost` promise tells
   * when another owner took it, or renewals failed for `leaseMs`.
   */
  async acquire(sessionId: string): Promise<LosableStoreLease & { readonly epoch: number }> {
    if (this.held.has(sessionId)) {
      throw new AgentRxError('store_error', `session '${sessionId}' is already open in this process; close it before resuming it again`, { sessionId });
    }
    const k = this.keys.of(sessionId);
    const token = randomUUID();
    const res = await this.call(sessionId, 'cannot take the lease', (c) =>
      c.rxAcquire(k.lease, k.epoch, k.holder, token, String(this.leaseMs), this.owner, String(Date.now())),
    );
    if (res[0] === 'held') {
      const since = Number(res[2]) > 0 ? ` since ${new Date(Number(res[2])).toISOString()}` : '';
      throw new AgentRxError(
        'store_error',
        `session '${sessionId}' is held by ${res[1]}${since}; close it there, or wait for its lease to expire (${this.leaseMs} ms after its owner stopped)`,
        {
          sessionId,
          owner: res[1],
        },
      );
    }
    const epoch = Number(res[1]);
    if (res[2]) this.onRepair(k.lease, `took over session '${sessionId}' from ${res[2]}, whose lease expired (epoch ${epoch})`);
    if (this.held.has(sessionId)) {
      // Two acquires of this instance raced past the first check: keep the first.
      await this.call(sessionId, 'cannot release the lease', (c) => c.rxRelease(k.lease, k.holder, token)).catch(() => undefined);
      throw new AgentRxError('store_error', `session '${sessionId}' is already open in this process; close it before resuming it again`, { sessionId });
    }
    const lease = new RedisLease(sessionId, epoch, token, this.leaseMs, {
      renew: async (t) => {
        const r = await (await this.connected()).rxRenew(k.lease, k.holder, t, String(this.leaseMs));
        return r[0] === 'ok' ? 'ok' : { owner: r[1] ?? '' };
      },
      release: async (t) => {
        await this.call(sessionId, 'cannot release the lease', (c) => c.rxRelease(k.lease, k.holder, t));
      },
      forget: (l) => {
        if (this.held.get(sessionId) === l) this.held.delete(sessionId);
      },
    });
    this.held.set(sessionId, lease);
    return lease;
  }

  /**
   * Deletes sessions past the retention limits, never one whose lease is live (held by any
   * process) or whose status is `running`: both are checked inside Redis at the deletion.
   */
  async prune(options: PruneOptions): Promise<string[]> {
    const records = await this.list();
    const deleted: string[] = [];
    const threadOf = new Map(records.map((r) => [r.sessionId, r.threadId]));
    for (const sessionId of selectForPrune(records, options)) {
      const k = this.keys.of(sessionId);
      const res = await this.call(sessionId, 'cannot prune the session', (c) => c.rxPrune(k.record, k.ledger, k.order, k.log, k.lease, k.holder));
      if (res !== 'deleted') continue;
      await this.call(sessionId, 'cannot prune the session', (c) => c.zrem(this.keys.sessions, sessionId));
      const threadId = threadOf.get(sessionId);
      if (threadId !== undefined && threadId !== sessionId)
        await this.call(sessionId, 'cannot prune the session', (c) => c.rxForgetThread(this.threadKey(threadId), sessionId));
      this.reader?.reset(k.log);
      deleted.push(sessionId);
    }
    return deleted;
  }

  /**
   * Stops renewing the leases this instance holds (they expire after `leaseMs`; release them
   * first to hand sessions over at once), ends the tails' reader and closes the connections.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    for (const lease of this.held.values()) lease.abandon();
    this.held.clear();
    await this.reader?.close();
    const client = await this.client?.catch(() => undefined);
    this.client = undefined;
    if (client) await client.quit().catch(() => client.disconnect());
  }

  private connected(): Promise<ScriptedRedis> {
    if (this.closed) return Promise.reject(new AgentRxError('store_error', `the Redis session store (${this.redactedUrl}) is closed`));
    this.client ??= connectRedis(this.url, 'agentrx-store', this.connectOptions).then(defineScripts, (e: unknown) => {
      this.client = undefined; // the next call tries again
      throw e;
    });
    return this.client;
  }

  private sharedReader(main: Redis): RedisStreamReader {
    this.reader ??= new RedisStreamReader(
      () => connectRedis(this.url, 'agentrx-store-tail', this.connectOptions),
      (id) => main.client('UNBLOCK', id),
    );
    return this.reader;
  }

  /** Runs `fn` on the client, turning failures into a `store_error` naming the session. */
  private async call<T>(sessionId: string, what: string, fn: (c: ScriptedRedis) => Promise<T>): Promise<T> {
    const client = await this.connected();
    try {
      return await fn(client);
    } catch (e) {
      throw redisStoreError(this.url, `session '${sessionId}': ${what}`, e, { sessionId });
    }
  }

  /**
   * A write of `sessionId`, after its earlier ones, with the epoch of this instance's lease ('0'
   * when it holds none: not fenced). A lease known lost refuses it here.
   */
  private write<T>(sessionId: string, what: string, fn: (c: ScriptedRedis, epoch: string) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      const lease = this.held.get(sessionId);
      if (lease?.lostReason) throw lease.lostReason;
      return this.call(sessionId, what, (c) => fn(c, lease ? String(lease.epoch) : '0'));
    };
    const prev = this.queues.get(sessionId) ?? Promise.resolve();
    const next = prev.then(run, run);
    const settled = next.catch(() => undefined);
    this.queues.set(sessionId, settled);
    void settled.then(() => {
      if (this.queues.get(sessionId) === settled) this.queues.delete(sessionId);
    });
    return next;
  }

  /**
   * Throws the lease-lost `store_error` for a write Redis refused by the fencing check (and marks
   * this instance's lease lost, if it did not know yet).
   */
  private check(sessionId: string, res: string[]): void {
    if (res[0] !== 'fenced') return;
    const mine = this.held.get(sessionId);
    const why = `Redis refused a write: another owner took the session over at epoch ${res[1]}, this process holds epoch ${mine?.epoch ?? '?'}`;
    mine?.markLost(why, { storedEpoch: Number(res[1]) });
    throw new AgentRxError('store_error', `the lease of session '${sessionId}' was lost (${why}); this process must stop running it`, {
      sessionId,
      epoch: mine?.epoch,
      storedEpoch: Number(res[1]),
    });
  }

  private async loadMany(ids: readonly string[]): Promise<SessionRecord[]> {
    if (ids.length === 0) return [];
    const res = await this.call('*', 'cannot list the sessions', (c) => {
      const p = scriptedPipeline(c.pipeline());
      for (const id of ids) {
        const k = this.keys.of(id);
        p.rxLoad(k.record, k.ledger, k.order);
      }
      return p.exec();
    });
    const out: SessionRecord[] = [];
    ids.forEach((id, i) => {
      const [err, value] = res![i]!;
      if (err) throw redisStoreError(this.url, `session '${id}': cannot load the record`, err, { sessionId: id });
      const key = this.keys.of(id).record;
      try {
        const r = decodeRecord(id, key, ...(value as [string[], string[], string[]]));
        if (r) out.push(r);
      } catch (e) {
        // One unreadable record (a hash edited by hand) does not hide the others; opening it reports it.
        this.onRepair(key, `session '${id}' is left out of the list: ${(e as Error).message}`);
      }
    });
    return out;
  }
}
