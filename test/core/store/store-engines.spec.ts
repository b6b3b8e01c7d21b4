import { randomUUID } from 'node:crypto';
import { coreModule } from '../../../src/core/di/core-module.js';
import { openStore } from '../../../src/core/store/open-store.js';
import { StoreRegistration } from '../../../src/core/store/store-registration.js';
import { Container } from '../../../src/core/util/inversify.js';
import { defaultModules } from '../../../src/default-modules.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { tempDir } from '../../support/temp-dir.js';
import { describeSessionStore, type StoreUnderTest } from './session-store.conformance.js';

/*
 * The SessionStore contract over every engine AgentRx.create registers, each opened through its
 * registration from a `store` section, as the container and the CLI open them. A new engine fails
 * the first test until it gets its sections here.
 */

/** The engines of a container as `AgentRx.create` builds it: the default modules, then core. */
function registeredEngines(): StoreRegistration[] {
  const container = new Container();
  container.load(...defaultModules(), coreModule);
  return container.getAll<StoreRegistration>(StoreRegistration);
}

const engines = registeredEngines();

/** A fresh, empty store opened from `section` through the registrations; closed after the test. */
const opened = async (section: Record<string, unknown>): Promise<StoreUnderTest> => {
  const store = openStore(section, engines);
  return { store, cleanup: async () => void (await store.close?.()) };
};

/** One conformance run: a name and a fresh `store` section (a new directory, a new key prefix…). */
interface ConformanceRun {
  readonly name: string;
  section(): Promise<Record<string, unknown>>;
}

/** The redis-server of this file (started only when the program is installed). */
let redis: RedisServer | undefined;

/** The runs of each registered engine, by store type. */
const RUNS: Readonly<Record<string, readonly ConformanceRun[]>> = {
  memory: [
    { name: 'with the default bounds', section: async () => ({ type: 'memory' }) },
    { name: 'keeping every envelope and session', section: async () => ({ type: 'memory', memoryLogLimit: 0, memoryMaxSessions: 0, memoryMaxBytes: 0 }) },
    { name: 'keeping nothing once a session closed', section: async () => ({ type: 'memory', memoryKeep: 'none' }) },
  ],
  file: [{ name: 'in a fresh directory', section: async () => ({ type: 'file', dir: await tempDir('agentrx-store-') }) }],
  redis: [{ name: 'under a fresh key prefix', section: async () => ({ type: 'redis', url: redis?.url, keyPrefix: `t-${randomUUID()}:` }) }],
};

describe('the registered store engines', () => {
  it('should each have conformance runs in this file', () => {
    expect(engines.map((e) => e.type).sort()).toEqual(Object.keys(RUNS).sort());
  });
});

for (const [type, runs] of Object.entries(RUNS)) {
  const describeRuns = (): void => {
    for (const run of runs) describeSessionStore(`store type '${type}' ${run.name}`, async () => opened(await run.section()));
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
  });
}
