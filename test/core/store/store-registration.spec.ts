import { IsString } from 'class-validator';
import { StoreConfig, validateConfig, type ConfigIssue } from '../../../src/core/config/index.js';
import { AgentRxError, isAgentRxError } from '../../../src/core/errors.js';
import { bindStore } from '../../../src/core/store/bind-store.js';
import { coreStores } from '../../../src/core/store/core-stores.js';
import { FileStoreConfig } from '../../../src/core/store/file/file-store.config.js';
import { FileSessionStore } from '../../../src/core/store/file/file-session-store.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { MemoryStoreConfig } from '../../../src/core/store/memory/memory-store.config.js';
import { openStore } from '../../../src/core/store/open-store.js';
import { RedisStoreConfig } from '../../../src/distributed/redis-store/redis-store.config.js';
import { redisStoreModule } from '../../../src/distributed/redis-store/redis-store.module.js';

/** The engines of a default AgentRx container. */
const STORES = [...coreStores, redisStoreModule.registration];

function thrown(fn: () => unknown): AgentRxError {
  try {
    fn();
  } catch (e) {
    if (isAgentRxError(e)) return e;
    throw e;
  }
  throw new Error('expected an error');
}

const validate = (store: unknown): StoreConfig => validateConfig(store === undefined ? {} : { store }, [], {}, undefined, STORES).config.store;
const issuesOf = (e: AgentRxError): ConfigIssue[] => (e.details?.['issues'] as ConfigIssue[] | undefined) ?? [];

/** A host's engine: one field of its own. */
class LabelStoreConfig extends StoreConfig {
  @IsString()
  label: string = 'none';
}

describe('the store section', () => {
  describe('when validated with the registered engines', () => {
    it('should be the memory section with its defaults when absent', () => {
      const store = validate(undefined);
      expect(store).toBeInstanceOf(MemoryStoreConfig);
      expect(store).toMatchObject({ type: 'memory', memoryLogLimit: 10_000, memoryMaxSessions: 1_000 });
    });

    it("should be each engine's own class, with that engine's defaults", () => {
      expect(validate({ type: 'file', dir: '/tmp/s' })).toBeInstanceOf(FileStoreConfig);
      const redis = validate({ type: 'redis', url: 'redis://127.0.0.1:6379' });
      expect(redis).toBeInstanceOf(RedisStoreConfig);
      expect(redis).toMatchObject({ keyPrefix: 'agentrx:', leaseMs: 10_000 });
    });

    it("should report a missing required field of the engine with the engine's wording", () => {
      const error = thrown(() => validate({ type: 'redis' }));
      expect(error.message).toContain("- store.url: is required; got undefined; expected a redis:// or rediss:// URL (required when store.type is 'redis')");
    });
  });

  describe('when its type names no registered engine', () => {
    it('should be one invalid_config issue listing the registered types and how to add one', () => {
      const error = thrown(() => validate({ type: 'postgres', url: 'postgres://x' }));
      expect(error.code).toBe('invalid_config');
      expect(issuesOf(error).map((i) => i.path)).toEqual(['store.type']);
      expect(error.message).toContain(
        '- store.type: no store engine is registered with this type; got "postgres"; expected a registered store type: memory, file, redis',
      );
      expect(error.message).toContain('bindStore');
    });

    it('should report a malformed type as such, not as unregistered', () => {
      const error = thrown(() => validate({ type: 7 }));
      expect(issuesOf(error)).toHaveLength(1);
      expect(error.message).toMatch(/- store\.type: must be a string; got 7/);
    });
  });

  describe('when it holds a field of another engine', () => {
    it('should name the engine the field belongs to and how to fix it, with credentials redacted', () => {
      const error = thrown(() => validate({ type: 'memory', url: 'redis://app:hunter2@cache:6379' }));
      expect(issuesOf(error).map((i) => i.path)).toEqual(['store.url']);
      expect(error.message).toContain("- store.url: is a field of store type 'redis', not of 'memory'");
      expect(error.message).toContain("remove it, or set store.type to 'redis'");
      expect(error.message).not.toContain('hunter2');
    });

    it('should still call a key no engine has an unknown key', () => {
      const error = thrown(() => validate({ type: 'file', dir: '/tmp/s', dri: 'x' }));
      expect(error.message).toMatch(/- store\.dri: unknown key; .*did you mean "dir"/);
    });
  });

  describe('when validated without engines (a bare validateConfig)', () => {
    it('should check the shared fields only and keep the engine fields as given', () => {
      const { config } = validateConfig({ store: { type: 'postgres', url: 'postgres://x', retention: { maxSessions: 3 } } }, [], {});
      expect(config.store).toBeInstanceOf(StoreConfig);
      expect(config.store).toMatchObject({ type: 'postgres', url: 'postgres://x', retention: { maxSessions: 3 } });
    });
  });
});

describe('openStore', () => {
  describe('when given a plain section', () => {
    it('should validate it, then build the engine its type names', () => {
      expect(openStore({ type: 'memory' }, STORES)).toBeInstanceOf(MemorySessionStore);
      expect(openStore({ type: 'file', dir: '/tmp/agentrx-never-written' }, STORES)).toBeInstanceOf(FileSessionStore);
    });

    it('should throw the config error of an invalid or unregistered section', () => {
      expect(thrown(() => openStore({ type: 'file' }, STORES)).message).toContain('- store.dir: is required');
      const unknown = thrown(() => openStore({ type: 'redis', url: 'redis://x' }, coreStores));
      expect(unknown.code).toBe('invalid_config');
      expect(unknown.message).toContain('expected a registered store type: memory, file (');
    });
  });

  describe('when given a validated section', () => {
    it("should hand it to the engine's factory as its own class", () => {
      const seen: LabelStoreConfig[] = [];
      const label = bindStore('label', (section) => (seen.push(section), new MemorySessionStore()), LabelStoreConfig);
      const section = validateConfig({ store: { type: 'label', label: 'x' } }, [], {}, undefined, [label.registration]).config.store;
      openStore(section, [label.registration]);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toBeInstanceOf(LabelStoreConfig);
      expect(seen[0]!.label).toBe('x');
    });
  });

  describe('when two registrations share a type', () => {
    it('should throw duplicate_plugin naming the type', () => {
      const error = thrown(() => openStore({ type: 'memory' }, [...coreStores, coreStores[0]!]));
      expect(error.code).toBe('duplicate_plugin');
      expect(error.message).toContain("'memory'");
    });
  });
});

describe('a registration', () => {
  describe('when asked to open a section another class validated', () => {
    it('should refuse with invalid_config instead of building from the wrong fields', () => {
      const file = coreStores.find((r) => r.type === 'file')!;
      const error = thrown(() => file.open(Object.assign(new MemoryStoreConfig(), { type: 'file' }), {}));
      expect(error.code).toBe('invalid_config');
    });
  });
});
