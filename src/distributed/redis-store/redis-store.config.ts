import { IsInt, IsString, Matches, Max, Min } from 'class-validator';
import { CoerceNumber } from '../../core/config/config-section.js';
import { AgentRxError } from '../../core/errors.js';
import { StoreConfig } from '../../core/config/store-config.js';

const URL_EXPECTED = { context: { expected: "a redis:// or rediss:// URL (required when store.type is 'redis')" } };

/**
 * `store: { type: 'redis', url }`: sessions shared by every process that points at the same
 * server (any node can resume or serve any session). Needs the optional peer dependency `ioredis`.
 */
export class RedisStoreConfig extends StoreConfig {
  /**
   * The server, `redis://[user:pass@]host[:port][/db]` or `rediss://…` (TLS). Required.
   * Credentials in it are redacted in every error and log line.
   */
  @IsString(URL_EXPECTED)
  @Matches(/^rediss?:\/\/\S+$/, URL_EXPECTED)
  url!: string;

  /** The prefix of every key (several deployments may share one server). Default `agentrx:`. */
  @IsString()
  @Matches(/^\S{1,64}$/, { context: { expected: 'a prefix of 1 to 64 characters without spaces, e.g. "agentrx:"' } })
  keyPrefix: string = 'agentrx:';

  /**
   * How long a session's lease lasts without renewal (ms; renewed every third of it while the
   * session runs). A process that stops renewing loses its sessions to another after this long;
   * a write with its stale fencing epoch is refused. Default 10,000.
   */
  @CoerceNumber()
  @IsInt()
  @Min(1_000)
  @Max(600_000)
  leaseMs: number = 10_000;
}

/**
 * The validated Redis section of a config (`config.store`), for the parts of the distributed
 * module that share the store's server (the queue, the pool monitor); `invalid_config` naming
 * `who` when the store is another engine.
 */
export function redisStoreConfigOf(store: StoreConfig, who: string): RedisStoreConfig {
  if (store instanceof RedisStoreConfig) return store;
  throw new AgentRxError('invalid_config', `${who} needs store: { type: 'redis', url } in the config; store.type is '${store.type}'`, { type: store.type });
}
