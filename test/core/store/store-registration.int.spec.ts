import { IsString } from 'class-validator';
import { AgentRx } from '../../../src/agentrx.js';
import { StoreConfig } from '../../../src/core/config/index.js';
import { AgentRxError } from '../../../src/core/errors.js';
import { bindStore } from '../../../src/core/store/bind-store.js';
import { FileSessionStore } from '../../../src/core/store/file/file-session-store.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { ScriptedProvider } from '../../../src/testing/scripted-provider.js';
import { tempDir } from '../../support/temp-dir.js';

/** A host's engine: a memory store that records its section and whether it was closed. */
class TaggedStoreConfig extends StoreConfig {
  @IsString()
  tag: string = 'untagged';
}

class TaggedSessionStore extends MemorySessionStore {
  closed = 0;
  constructor(readonly tag: string) {
    super();
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

const taggedStoreModule = bindStore('tagged', (section) => new TaggedSessionStore(section.tag), TaggedStoreConfig);

const create = (store: object, modules = [taggedStoreModule]): Promise<AgentRx> =>
  AgentRx.create({
    modules,
    providers: [new ScriptedProvider({ turns: [] })],
    config: { provider: 'scripted', logLevel: 'silent', consumers: { terminal: false }, store },
  });

async function createError(store: object, modules = [taggedStoreModule]): Promise<AgentRxError> {
  try {
    await (await create(store, modules)).stop();
  } catch (e) {
    if (e instanceof AgentRxError) return e;
    throw e;
  }
  throw new Error('expected AgentRx.create to fail');
}

describe('a store engine registered with bindStore', () => {
  describe('when store.type names it', () => {
    it('should be the instance store, built from its validated section, and closed when the instance stops', async () => {
      const rx = await create({ type: 'tagged', tag: 'blue' });
      const store = rx.sessionStore;
      expect(store).toBeInstanceOf(TaggedSessionStore);
      expect((store as TaggedSessionStore).tag).toBe('blue');
      await rx.stop();
      expect((store as TaggedSessionStore).closed).toBe(1);
    });
  });

  describe('when the section has a field of another engine', () => {
    it('should fail AgentRx.create naming that engine', async () => {
      const error = await createError({ type: 'tagged', dir: '/tmp/x' });
      expect(error.code).toBe('invalid_config');
      expect(error.message).toContain("- store.dir: is a field of store type 'file', not of 'tagged'");
    });
  });

  describe('when store.type names an engine no module registered', () => {
    it('should fail AgentRx.create listing the registered types, the host engine and redis included', async () => {
      const error = await createError({ type: 'taged' });
      expect(error.code).toBe('invalid_config');
      expect(error.message).toContain('expected a registered store type (did you mean "tagged"?): redis, tagged, memory, file (');
    });
  });
});

describe('the engines core registers', () => {
  const bare = (store: object): Promise<AgentRx> =>
    AgentRx.create({
      defaults: false,
      providers: [new ScriptedProvider({ turns: [] })],
      config: { provider: 'scripted', logLevel: 'silent', consumers: { terminal: false }, store },
    });

  describe('when AgentRx.create loads no default module', () => {
    it('should still open the file engine', async () => {
      const rx = await bare({ type: 'file', dir: await tempDir('agentrx-core-stores-') });
      expect(rx.sessionStore).toBeInstanceOf(FileSessionStore);
      await rx.stop();
    });

    it('should not know the redis engine, and say which engines it knows', async () => {
      await expect(bare({ type: 'redis', url: 'redis://127.0.0.1:1' })).rejects.toMatchObject({
        code: 'invalid_config',
        message: expect.stringContaining('expected a registered store type: memory, file ('),
      });
    });
  });
});
