import { validateConfig, type ConfigIssue } from '../../../../src/core/config/index.js';
import { AgentRxError, isAgentRxError } from '../../../../src/core/errors.js';
import { memoryStoreModule } from '../../../../src/core/store/memory/memory-store.module.js';
import { MemoryStoreConfig } from '../../../../src/core/store/memory/memory-store.config.js';
import { MemorySessionStore } from '../../../../src/core/store/memory/memory-session-store.js';
import { openStore } from '../../../../src/core/store/open-store.js';

const STORES = [memoryStoreModule.registration];

const validate = (store: Record<string, unknown>): MemoryStoreConfig => validateConfig({ store }, [], {}, undefined, STORES).config.store as MemoryStoreConfig;

/** The issues of the invalid_config error validating `store` throws. */
function issuesOf(store: Record<string, unknown>): ConfigIssue[] {
  try {
    validate(store);
  } catch (e) {
    if (isAgentRxError(e, 'invalid_config')) return ((e as AgentRxError).details?.['issues'] as ConfigIssue[] | undefined) ?? [];
    throw e;
  }
  throw new Error('expected invalid_config');
}

describe('MemoryStoreConfig', () => {
  describe('when the memory section is validated', () => {
    it('should default to a 2.5 MiB byte bound, keeping recent closed sessions', () => {
      expect(validate({ type: 'memory' })).toMatchObject({ memoryMaxBytes: 2.5 * 2 ** 20, memoryKeep: 'recent', memoryMaxSessions: 1_000 });
    });

    it("should take keep 'none' and a byte bound given as a string", () => {
      expect(validate({ type: 'memory', memoryKeep: 'none', memoryMaxBytes: '1024' })).toMatchObject({ memoryKeep: 'none', memoryMaxBytes: 1024 });
    });

    it('should refuse an unknown keep and a negative bound, at their paths', () => {
      expect(
        issuesOf({ type: 'memory', memoryKeep: 'all', memoryMaxBytes: -1 })
          .map((i) => i.path)
          .sort(),
      ).toEqual(['store.memoryKeep', 'store.memoryMaxBytes']);
    });
  });

  describe('when the engine is opened from a section', () => {
    it("should build a store that keeps nothing closed with keep 'none'", () => {
      const store = openStore({ type: 'memory', memoryKeep: 'none' }, STORES);
      expect(store).toBeInstanceOf(MemorySessionStore);
      expect(store.keepsClosed).toBe(false);
    });
  });
});
