import { bindStore } from '../../core/store/bind-store.js';
import { RedisProvisionStore } from './redis-provision-store.js';
import { RedisStoreConfig } from './redis-store.config.js';
import { RedisSessionStore } from './redis-session-store.js';

/**
 * The Redis engine (`store: { type: 'redis', url }`), one of the default modules. ioredis is
 * loaded, and the server connected, at the store's first call. Its provision store keeps entries
 * and tags under the same key prefix (see `RedisProvisionStore`), on a connection of its own.
 */
export const redisStoreModule = bindStore(
  'redis',
  (section, { onRepair }) =>
    new RedisSessionStore({ url: section.url, keyPrefix: section.keyPrefix, leaseMs: section.leaseMs, connectTimeoutMs: section.connectTimeoutMs, onRepair }),
  RedisStoreConfig,
  (section, { onRepair }) => new RedisProvisionStore({ url: section.url, keyPrefix: section.keyPrefix, connectTimeoutMs: section.connectTimeoutMs, onRepair }),
);
