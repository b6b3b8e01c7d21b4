import type { Redis } from 'ioredis';
import type { SubmissionKeys } from './distributed-keys.js';
import { MESSAGE_FIELD, type OutputMessage } from './distributed-messages.js';

/**
 * KEYS state; ARGV worker id. A worker claims a submission before it publishes anything for it:
 * the submission's owner epoch grows by one (its fencing token), unless the submission has ended.
 * Returns the new epoch (0 when it has ended), the session id and the input cursor as they stand
 * at the claim (no earlier owner can change them after it).
 */
const CLAIM = `
if redis.call('HGET', KEYS[1], 'closed') == '1' then return {0, '', ''} end
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
redis.call('HSET', KEYS[1], 'worker', ARGV[1])
local state = redis.call('HMGET', KEYS[1], 'sessionId', 'cursor')
return {epoch, state[1] or '', state[2] or ''}
`;

/**
 * KEYS state, outputs, inputs; ARGV epoch, message JSON ('' = none), retain ms ('' = not the end),
 * then state field/value pairs. Refused ('fenced', the current epoch) when a later owner claimed
 * the submission; an end is written once ('ended' when it already was).
 */
const WRITE = `
local cur = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
if cur > tonumber(ARGV[1]) then return {'fenced', tostring(cur)} end
local ending = ARGV[3] ~= ''
if ending and redis.call('HGET', KEYS[1], 'closed') == '1' then return {'ended'} end
if ARGV[2] ~= '' then redis.call('XADD', KEYS[2], '*', '${MESSAGE_FIELD}', ARGV[2]) end
if #ARGV > 3 then redis.call('HSET', KEYS[1], unpack(ARGV, 4)) end
if ending then
  redis.call('HSET', KEYS[1], 'closed', '1')
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
return {'ok'}
`;

/** The command connection with the submission scripts defined (see {@link defineSubmissionScripts}). */
export type SubmissionRedis = Redis & {
  rxSubmissionClaim(state: string, workerId: string): Promise<[number, string, string]>;
  rxSubmissionWrite(state: string, outputs: string, inputs: string, epoch: string, message: string, retainMs: string, ...fields: string[]): Promise<string[]>;
};

/** Defines the scripts on `redis` (EVALSHA, loaded again after a Redis restart); idempotent. */
export function defineSubmissionScripts(redis: Redis): SubmissionRedis {
  const r = redis as SubmissionRedis;
  if (typeof r.rxSubmissionClaim !== 'function') {
    redis.defineCommand('rxSubmissionClaim', { numberOfKeys: 1, lua: CLAIM });
    redis.defineCommand('rxSubmissionWrite', { numberOfKeys: 3, lua: WRITE });
  }
  return r;
}

/** One write of the owner to its submission: a message on the output stream and/or state fields; `end` ends it. */
export interface SubmissionWrite {
  readonly message?: OutputMessage;
  readonly fields?: Readonly<Record<string, string>>;
  /** The submission ends with this write: its keys expire after `retainMs`. */
  readonly end?: { readonly retainMs: number };
}

/** A worker's claim on a submission: its writer, and the state as it stood at the claim. */
export interface SubmissionClaim {
  readonly writer: SubmissionWriter;
  /** The store's session id, when an earlier owner opened the session. */
  readonly sessionId: string | undefined;
  /** The last input applied ('0': none). */
  readonly cursor: string;
}

/** What a write did: applied, refused because another worker claimed the submission since, or not applied because the submission had ended already. */
export type WriteOutcome = 'ok' | 'fenced' | 'ended';

/**
 * The owner's side of a submission's output stream and state hash, fenced like the session's
 * store writes: the worker running a submission claims it (an epoch that grows at each claim) and
 * every later write carries that epoch, refused inside Redis once another worker has claimed it.
 * A worker that was paused or partitioned past its job lock and its session lease cannot publish a
 * result, an ack, an input cursor or an end after the new owner took the submission over.
 */
export class SubmissionWriter {
  private constructor(
    private readonly redis: SubmissionRedis,
    private readonly keys: SubmissionKeys,
    /** This owner's fencing epoch. */
    readonly epoch: number,
  ) {}

  /** Claims the submission for worker `workerId`; undefined when it has ended (nothing is left to run). */
  static async claim(redis: SubmissionRedis, keys: SubmissionKeys, workerId: string): Promise<SubmissionClaim | undefined> {
    const [epoch, sessionId, cursor] = await redis.rxSubmissionClaim(keys.state, workerId);
    if (Number(epoch) === 0) return undefined;
    return { writer: new SubmissionWriter(redis, keys, Number(epoch)), sessionId: sessionId || undefined, cursor: cursor || '0' };
  }

  /** Applies `w` unless another worker claimed the submission since this one did. */
  async write(w: SubmissionWrite): Promise<WriteOutcome> {
    const fields = Object.entries(w.fields ?? {}).flat();
    const res = await this.redis.rxSubmissionWrite(
      this.keys.state,
      this.keys.outputs,
      this.keys.inputs,
      String(this.epoch),
      w.message ? JSON.stringify(w.message) : '',
      w.end ? String(w.end.retainMs) : '',
      ...fields,
    );
    return res[0] as WriteOutcome;
  }
}
