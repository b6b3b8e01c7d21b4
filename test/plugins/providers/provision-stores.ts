import { randomUUID } from 'node:crypto';
import { AgentRxError } from '../../../src/core/errors.js';
import type { ProvisionStore } from '../../../src/core/provision/provision-store.js';
import { FileProvisionStore } from '../../../src/core/store/file/file-provision-store.js';
import { MemoryProvisionStore } from '../../../src/core/store/memory/memory-provision-store.js';
import { RedisProvisionStore } from '../../../src/distributed/redis-store/redis-provision-store.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { tempDir } from '../../support/temp-dir.js';

/** How a provider suite gets a fresh provision store of one engine. */
export interface StoreKind {
  readonly name: string;
  /** A fresh, empty store (closed by the caller's `afterEach` through `close`). */
  open(): Promise<ProvisionStore>;
}

/**
 * Runs `body` once per provision-store engine: memory, file (a fresh directory) and Redis (a
 * redis-server of this file, a fresh key prefix; skipped by the shared rule when redis-server is
 * not installed).
 */
export function describeEachStore(body: (kind: StoreKind) => void): void {
  describe('with the memory store', () => body({ name: 'memory', open: async () => new MemoryProvisionStore() }));
  describe('with the file store', () => body({ name: 'file', open: async () => new FileProvisionStore(await tempDir('agentrx-prov-')) }));
  describeWithRedis('with the Redis store', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => redis?.stop());
    body({ name: 'redis', open: async () => new RedisProvisionStore({ url: redis.url, keyPrefix: `t-${randomUUID()}:` }) });
  });
}

/** A provision store whose every call rejects with `store_error` (a store that is down). */
export class ThrowingProvisionStore implements ProvisionStore {
  /** Calls made, by method name. */
  readonly calls: string[] = [];
  private fail(method: string): Promise<never> {
    this.calls.push(method);
    return Promise.reject(new AgentRxError('store_error', `the provision store is down (${method})`));
  }
  get(): Promise<never> {
    return this.fail('get');
  }
  put(): Promise<never> {
    return this.fail('put');
  }
  evict(): Promise<never> {
    return this.fail('evict');
  }
  list(): Promise<never> {
    return this.fail('list');
  }
  setTag(): Promise<never> {
    return this.fail('setTag');
  }
  deleteTag(): Promise<never> {
    return this.fail('deleteTag');
  }
  tags(): Promise<never> {
    return this.fail('tags');
  }
}
