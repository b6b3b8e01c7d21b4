import { bindStore } from '../../core/store/bind-store.js';
import { RedisStoreConfig } from './redis-store.config.js';
import { RedisSessionStore } from './redis-session-store.js';

/**
 * The Redis engine (`store: { type: 'redis', url }`), one of the default modules. ioredis is
 * loaded, and the server connected, at the store's first call.
 */
export const redisStoreModule = bindStore(
  'redis',
  (section, { onRepair }) =>
    new RedisSessionStore({ url: section.url, keyPrefix: section.keyPrefix, leaseMs: section.leaseMs, connectTimeoutMs: section.connectTimeoutMs, onRepair }),
  RedisStoreConfig,
);
