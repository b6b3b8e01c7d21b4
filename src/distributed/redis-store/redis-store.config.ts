import { IsInt, IsString, Matches, Max, Min, ValidateBy, type ValidationArguments } from '../../core/util/class-validator.js';
import { CoerceNumber } from '../../core/config/config-section.js';
import { AgentRxError } from '../../core/errors.js';
import { StoreConfig } from '../../core/config/store-config.js';

const URL_EXPECTED = { context: { expected: "a redis:// or rediss:// URL (required when store.type is 'redis')" } };

/**
 * The path of a Redis URL is the database index (`/0`, `/3`; none: 0): what the config can check
 * of it is its form; whether the server has that database is known at connect (a `store_error`).
 */
function IsDatabasePath(): PropertyDecorator {
  const indexOf = (value: unknown): string | undefined => {
    if (typeof value !== 'string') return undefined;
    try {
      const path = new URL(value).pathname;
      return path === '' || path === '/' ? undefined : path.slice(1);
    } catch {
      return undefined; // @Matches reports a URL that does not parse
    }
  };
  return ValidateBy(
    {
      name: 'isRedisDatabasePath',
      validator: {
        validate: (value: unknown) => {
          const index = indexOf(value);
          return index === undefined || /^\d{1,9}$/.test(index);
        },
        defaultMessage: (args?: ValidationArguments) =>
          `$property names database '${indexOf(args?.value) ?? ''}', which is not a database index: the path of the URL must be a whole number, /0 to the server's 'databases' setting less one (/0–/15 on a default server)`,
      },
    },
    URL_EXPECTED,
  );
}

/**
 * `store: { type: 'redis', url }`: sessions shared by every process that points at the same
 * server (any node can resume or serve any session). Needs the optional peer dependency `ioredis`.
 */
export class RedisStoreConfig extends StoreConfig {
  /**
   * The server, `redis://[user:pass@]host[:port][/db]` or `rediss://…` (TLS). Required.
   * Credentials in it are redacted in every error and log line. `db`, the database index, must be
   * a whole number; a database the server does not have (past its `databases` setting, 16 by
   * default) is a `store_error` at connect naming the index and the server's range.
   */
  @IsString(URL_EXPECTED)
  @Matches(/^rediss?:\/\/\S+$/, URL_EXPECTED)
  @IsDatabasePath()
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

  /**
   * How long the server has to answer a new connection (TCP connect, handshake and ready check),
   * in ms. A server that does not answer in time (a wrong port whose listener stays silent, a
   * server that hangs) is a `store_error` naming its host and port, not a run that waits for its
   * own timeout. Default 10,000.
   */
  @CoerceNumber()
  @IsInt()
  @Min(100)
  @Max(600_000)
  connectTimeoutMs: number = 10_000;
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
