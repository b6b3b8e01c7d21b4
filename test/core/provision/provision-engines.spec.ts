import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { coreModule } from '../../../src/core/di/core-module.js';
import { openProvisionStore } from '../../../src/core/provision/open-provision-store.js';
import { MemoryStoreConfig } from '../../../src/core/store/memory/memory-store.config.js';
import { MemoryProvisionStore } from '../../../src/core/store/memory/memory-provision-store.js';
import { FileProvisionStore } from '../../../src/core/store/file/file-provision-store.js';
import { StoreRegistration } from '../../../src/core/store/store-registration.js';
import { Container } from '../../../src/core/util/inversify.js';
import { defaultModules } from '../../../src/default-modules.js';
import { connectRedis } from '../../../src/distributed/redis-store/redis-connection.js';
import { RedisProvisionStore } from '../../../src/distributed/redis-store/redis-provision-store.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { tempDir } from '../../support/temp-dir.js';
import { describeProvisionStore, ProvisionFixtures as F, provisionStoreErrorOf, type ProvisionStoreUnderTest } from './provision-store.conformance.js';

/*
 * The ProvisionStore contract over every engine AgentRx.create registers, each opened through its
 * registration from a `store` section (as the container and the CLI open them). A new engine
 * fails the first test until it gets its sections here.
 */

/** The engines of a container as `AgentRx.create` builds it: the default modules, then core. */
function registeredEngines(): StoreRegistration[] {
  const container = new Container();
  container.load(...defaultModules(), coreModule);
  return container.getAll<StoreRegistration>(StoreRegistration);
}

const engines = registeredEngines();

/** A fresh, empty provision store opened from `section` (and `reopen` from it again, when durable); closed after the test. */
const opened = async (section: Record<string, unknown>, durable: boolean): Promise<ProvisionStoreUnderTest> => {
  const store = openProvisionStore(section, engines);
  return {
    store,
    ...(durable ? { reopen: async () => openProvisionStore(section, engines) } : {}),
    cleanup: async () => void (await store.close?.()),
  };
};

/** One conformance run: a name, a fresh `store` section, and whether a second store sees the first one's data. */
interface ConformanceRun {
  readonly name: string;
  readonly durable: boolean;
  section(): Promise<Record<string, unknown>>;
}

/** The redis-server of this file (started only when the program is installed). */
let redis: RedisServer | undefined;

/** The runs of each registered engine, by store type. */
const RUNS: Readonly<Record<string, readonly ConformanceRun[]>> = {
  memory: [{ name: 'with the default bounds', durable: false, section: async () => ({ type: 'memory' }) }],
  file: [{ name: 'in a fresh directory', durable: true, section: async () => ({ type: 'file', dir: await tempDir('agentrx-provisions-') }) }],
  redis: [{ name: 'under a fresh key prefix', durable: true, section: async () => ({ type: 'redis', url: redis?.url, keyPrefix: `t-${randomUUID()}:` }) }],
};

describe('the registered store engines', () => {
  it('should each have provision conformance runs in this file', () => {
    expect(engines.map((e) => e.type).sort()).toEqual(Object.keys(RUNS).sort());
  });

  it("should each open their own engine's provision store", () => {
    expect(openProvisionStore({ type: 'memory' }, engines)).toBeInstanceOf(MemoryProvisionStore);
    expect(openProvisionStore({ type: 'file', dir: '/tmp/agentrx-never-written' }, engines)).toBeInstanceOf(FileProvisionStore);
    expect(openProvisionStore({ type: 'redis', url: 'redis://127.0.0.1:1' }, engines)).toBeInstanceOf(RedisProvisionStore);
  });

  it('should each refuse a section another class validated with invalid_config', () => {
    const file = engines.find((r) => r.type === 'file')!;
    expect(() => file.openProvisions(Object.assign(new MemoryStoreConfig(), { type: 'file' }), {})).toThrow(
      expect.objectContaining({ code: 'invalid_config' }) as Error,
    );
  });
});

for (const [type, runs] of Object.entries(RUNS)) {
  const describeRuns = (): void => {
    for (const run of runs)
      describeProvisionStore(`store type '${type}' ${run.name}`, async () => opened(await run.section(), run.durable), { durable: run.durable });
  };
  if (type !== 'redis') {
    describeRuns();
    continue;
  }
  describeWithRedis("store type 'redis'", () => {
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await redis?.stop();
    });
    describeRuns();

    describe('a Redis provision store', () => {
      describe('when closed', () => {
        it('should answer every call with a store_error', async () => {
          const store = openProvisionStore({ type: 'redis', url: redis?.url, keyPrefix: `t-${randomUUID()}:` }, engines);
          await store.put(F.entry('a', F.digest('a'), 1));
          await store.close?.();
          const error = await provisionStoreErrorOf(store.get({ provider: F.provider, kind: 'agent', digest: F.digest('a') }));
          expect(error.message).toContain('closed');
        });
      });

      describe('when the server holds something that is not an entry', () => {
        it('should refuse it on get and leave it out of list through onRepair', async () => {
          const keyPrefix = `t-${randomUUID()}:`;
          const repairs: string[] = [];
          const store = openProvisionStore({ type: 'redis', url: redis?.url, keyPrefix }, engines, {
            onRepair: (where, what) => repairs.push(`${where}: ${what}`),
          });
          try {
            await store.put(F.entry('a', F.digest('a'), 1));
            const raw = await connectRedis(redis!.url, 'test');
            await raw.hset(`${keyPrefix}provision:${F.provider}:agent:entries`, F.digest('b'), '{"not":"an entry"}');
            await raw.quit();
            await provisionStoreErrorOf(store.get({ provider: F.provider, kind: 'agent', digest: F.digest('b') }));
            expect((await store.list({ provider: F.provider, kind: 'agent' })).map((e) => e.digest)).toEqual([F.digest('a')]);
            expect(repairs).toHaveLength(1);
          } finally {
            await store.close?.();
          }
        });
      });
    });
  });
}

describe('a Redis provision store', () => {
  describe('when nothing listens at its URL', () => {
    it('should answer with a store_error naming the URL without its password', async () => {
      const store = new RedisProvisionStore({ url: 'redis://user:s3cret-pass@127.0.0.1:1', connectTimeoutMs: 5_000 });
      try {
        const error = await provisionStoreErrorOf(store.tags(F.base('a')));
        expect(error.message).toContain('127.0.0.1:1');
        expect(error.message).not.toContain('s3cret-pass');
      } finally {
        await store.close();
      }
    });
  });
});

describe('a file provision store', () => {
  describe('when its directory cannot be made (a file is in the way)', () => {
    it('should answer writes with a store_error naming the file', async () => {
      const dir = await tempDir('agentrx-provisions-');
      await writeFile(join(dir, '%provisions'), 'in the way');
      const store = openProvisionStore({ type: 'file', dir }, engines);
      const error = await provisionStoreErrorOf(store.put(F.entry('a', F.digest('a'), 1)));
      expect(error.message).toContain('%provisions');
      await provisionStoreErrorOf(store.setTag(F.base('a'), 'prod', F.digest('a')));
    });
  });

  describe('when an entry file is not an entry', () => {
    it('should refuse it on get and leave it out of list through onRepair', async () => {
      const dir = await tempDir('agentrx-provisions-');
      const repairs: string[] = [];
      const store = openProvisionStore({ type: 'file', dir }, engines, { onRepair: (where) => repairs.push(where) });
      await store.put(F.entry('a', F.digest('a'), 1));
      await store.put(F.entry('a', F.digest('b'), 2));
      const file = join(dir, '%provisions', F.provider, 'agent', 'entries', `${F.digest('b')}.json`);
      await writeFile(file, '{"torn":');
      await provisionStoreErrorOf(store.get({ provider: F.provider, kind: 'agent', digest: F.digest('b') }));
      expect((await store.list({ provider: F.provider, kind: 'agent' })).map((e) => e.digest)).toEqual([F.digest('a')]);
      expect(repairs).toEqual([file]);
    });
  });
});
