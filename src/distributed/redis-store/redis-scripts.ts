import type { ChainableCommander, Redis } from 'ioredis';

/**
 * The keys of one session: every one carries the hash tag `{<encoded id>}`, so a session's keys
 * share a cluster slot and one Lua script may touch them all. `encodeURIComponent` keeps braces
 * of the id itself out of the tag.
 */
export interface SessionKeys {
  /** Hash: `data` (the record's JSON without ledger and updatedAt), `status`, `updatedAt`. */
  readonly record: string;
  /** Hash: tool-use id → JSON ledger entry. */
  readonly ledger: string;
  /** List: the ledger's tool-use ids in the order they were added (a hash has none). */
  readonly order: string;
  /** Stream: the log, entry id `<seq>-0`, one field `e` holding the envelope's JSON. */
  readonly log: string;
  /** String with expiry: the token of the lease holder. */
  readonly lease: string;
  /** Hash without expiry: `owner`, `token`, `epoch`, `at` of the last acquire; removed on release. */
  readonly holder: string;
  /** Counter: the fencing epoch, incremented by every acquire, never deleted (see `delete`). */
  readonly epoch: string;
}

/** Key naming under a prefix (default `agentrx:`). */
export class RedisKeys {
  /** Sorted set: session ids scored by the `updatedAt` of their last save (no hash tag: it spans sessions). */
  readonly sessions: string;

  constructor(readonly prefix: string) {
    this.sessions = `${prefix}sessions`;
  }

  of(sessionId: string): SessionKeys {
    const tag = `${this.prefix}{${encodeURIComponent(sessionId)}}`;
    return {
      record: `${tag}:record`,
      ledger: `${tag}:ledger`,
      order: `${tag}:order`,
      log: `${tag}:log`,
      lease: `${tag}:lease`,
      holder: `${tag}:holder`,
      epoch: `${tag}:epoch`,
    };
  }
}

/**
 * The fencing check every write script starts with: ARGV[1] is the writer's epoch ('0': a write
 * made without a lease, not fenced). Returns the stored epoch when it is higher (the write must
 * be refused), nil otherwise.
 */
const STALE = `
local function stale(epochKey, mine)
  if mine == '0' then return nil end
  local cur = tonumber(redis.call('GET', epochKey) or '0')
  if cur > tonumber(mine) then return cur end
  return nil
end
`;

/** KEYS record, ledger, order, epoch; ARGV epoch, data, status, updatedAt, then id/json pairs. */
const SAVE = `${STALE}
local s = stale(KEYS[4], ARGV[1]); if s then return {'fenced', s} end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'status', ARGV[3], 'updatedAt', ARGV[4])
for i = 5, #ARGV, 2 do
  if redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) == 1 then redis.call('RPUSH', KEYS[3], ARGV[i]) end
end
return {'ok'}
`;

/** KEYS record, ledger, order, epoch; ARGV epoch, toolUseId, expected state ('' = absent), entry json, now. */
const TRANSITION = `${STALE}
local s = stale(KEYS[4], ARGV[1]); if s then return {'fenced', s} end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'norecord'} end
local cur = redis.call('HGET', KEYS[2], ARGV[2])
local state = ''
if cur then state = tostring(cjson.decode(cur).state) end
if state ~= ARGV[3] then return {'mismatch'} end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
if not cur then redis.call('RPUSH', KEYS[3], ARGV[2]) end
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[5])
return {'ok'}
`;

/**
 * KEYS log, epoch; ARGV epoch, then seq/json pairs. XADD with the explicit id `<seq>-0`: a seq the
 * stream holds is skipped (Redis would refuse it as not greater than the top id), one past
 * last + 1 stops the batch with 'gap' (what came before it stays).
 */
const APPEND = `${STALE}
local s = stale(KEYS[2], ARGV[1]); if s then return {'fenced', s} end
local last = 0
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #top > 0 then last = tonumber(string.match(top[1][1], '^(%d+)')) end
for i = 2, #ARGV, 2 do
  local seq = tonumber(ARGV[i])
  if seq > last then
    if seq ~= last + 1 then return {'gap', ARGV[i], tostring(last)} end
    redis.call('XADD', KEYS[1], ARGV[i] .. '-0', 'e', ARGV[i + 1])
    last = seq
  end
end
return {'ok'}
`;

/** KEYS record, ledger, order: the three read at once (flat HGETALL replies and the id list). */
const LOAD = `
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('LRANGE', KEYS[3], 0, -1)}
`;

/** KEYS record, ledger, order, log, epoch; ARGV epoch. The epoch key stays (a stale writer must still be refused). */
const DELETE = `${STALE}
local s = stale(KEYS[5], ARGV[1]); if s then return {'fenced', s} end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return {'ok'}
`;

/** KEYS record, ledger, order, log, lease, holder: deletes unless held or running. */
const PRUNE = `
if redis.call('EXISTS', KEYS[5]) == 1 then return 'held' end
if redis.call('HGET', KEYS[1], 'status') == 'running' then return 'running' end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6])
return 'deleted'
`;

/**
 * KEYS lease, epoch, holder; ARGV token, px, owner, at. A live lease: {'held', owner, at}. Else
 * the next epoch, and the previous holder when its lease expired without a release.
 */
const ACQUIRE = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'held', redis.call('HGET', KEYS[3], 'owner') or 'an unknown owner', redis.call('HGET', KEYS[3], 'at') or '0'}
end
local prev = redis.call('HGET', KEYS[3], 'owner') or ''
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[3], 'owner', ARGV[3], 'token', ARGV[1], 'epoch', epoch, 'at', ARGV[4])
return {'ok', tostring(epoch), prev}
`;

/** KEYS lease, holder; ARGV token, px. {'ok'}, or {'lost', owner now ('' if none)}. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'ok'}
end
local owner = ''
if redis.call('EXISTS', KEYS[1]) == 1 then owner = redis.call('HGET', KEYS[2], 'owner') or 'an unknown owner' end
return {'lost', owner}
`;

/** KEYS lease, holder; ARGV token. Removes both only while they are this holder's. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if redis.call('HGET', KEYS[2], 'token') == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 'ok'
`;

/** KEYS a thread's index key; ARGV session id. Removes the key only while it still names that session. */
const FORGET_THREAD = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 'ok'
`;

/** The client with the store's scripts defined (sent as EVALSHA; ioredis loads them per connection). */
export interface ScriptedRedis extends Redis {
  rxLoad(record: string, ledger: string, order: string): Promise<[string[], string[], string[]]>;
  rxSave(record: string, ledger: string, order: string, epoch: string, ...args: string[]): Promise<string[]>;
  rxTransition(record: string, ledger: string, order: string, epoch: string, ...args: string[]): Promise<string[]>;
  rxAppend(log: string, epoch: string, ...args: string[]): Promise<string[]>;
  rxDelete(record: string, ledger: string, order: string, log: string, epoch: string, myEpoch: string): Promise<string[]>;
  rxPrune(record: string, ledger: string, order: string, log: string, lease: string, holder: string): Promise<string>;
  rxAcquire(lease: string, epoch: string, holder: string, token: string, px: string, owner: string, at: string): Promise<string[]>;
  rxRenew(lease: string, holder: string, token: string, px: string): Promise<string[]>;
  rxRelease(lease: string, holder: string, token: string): Promise<string>;
  rxForgetThread(threadKey: string, sessionId: string): Promise<string>;
}

/** Defines the store's scripts on `client` (once per client). */
export function defineScripts(client: Redis): ScriptedRedis {
  const scripts: [string, string, number][] = [
    ['rxLoad', LOAD, 3],
    ['rxSave', SAVE, 4],
    ['rxTransition', TRANSITION, 4],
    ['rxAppend', APPEND, 2],
    ['rxDelete', DELETE, 5],
    ['rxPrune', PRUNE, 6],
    ['rxAcquire', ACQUIRE, 3],
    ['rxRenew', RENEW, 2],
    ['rxRelease', RELEASE, 2],
    ['rxForgetThread', FORGET_THREAD, 1],
  ];
  for (const [name, lua, numberOfKeys] of scripts) client.defineCommand(name, { lua, numberOfKeys });
  return client as ScriptedRedis;
}

/** A pipeline of a client with the store's scripts: ioredis queues them like its built-in commands. */
export interface ScriptedPipeline extends ChainableCommander {
  rxLoad(record: string, ledger: string, order: string): ScriptedPipeline;
}

/** `pipeline` of a client `defineScripts` prepared, typed with the scripts it carries. */
export function scriptedPipeline(pipeline: ChainableCommander): ScriptedPipeline {
  if (!hasScripts(pipeline)) throw new Error('the pipeline has no store scripts: its client was not prepared by defineScripts');
  return pipeline;
}

function hasScripts(pipeline: ChainableCommander): pipeline is ScriptedPipeline {
  return 'rxLoad' in pipeline && typeof pipeline.rxLoad === 'function';
}
