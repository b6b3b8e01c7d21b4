import { IsString } from 'class-validator';
import { AgentRx } from '../../../src/agentrx.js';
import { StoreConfig } from '../../../src/core/config/index.js';
import type { ProvisionStore } from '../../../src/core/provision/provision-store.js';
import { ProvisionStoreToken } from '../../../src/core/provision/provision-token.js';
import { bindStore } from '../../../src/core/store/bind-store.js';
import { FileProvisionStore } from '../../../src/core/store/file/file-provision-store.js';
import { MemoryProvisionStore } from '../../../src/core/store/memory/memory-provision-store.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { ScriptedProvider } from '../../../src/testing/scripted-provider.js';
import { tempDir } from '../../support/temp-dir.js';

/** A host's engine whose provision store records its section's tag and its closes. */
class TaggedStoreConfig extends StoreConfig {
  @IsString()
  tag: string = 'untagged';
}

class TaggedProvisionStore extends MemoryProvisionStore {
  closed = 0;
  constructor(readonly tag: string) {
    super();
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

const taggedStoreModule = bindStore(
  'tagged',
  () => new MemorySessionStore(),
  TaggedStoreConfig,
  (section) => new TaggedProvisionStore(section.tag),
);
const plainStoreModule = bindStore('plain', () => new MemorySessionStore(), StoreConfig);

const create = (store: object): Promise<AgentRx> =>
  AgentRx.create({
    defaults: false,
    modules: [taggedStoreModule, plainStoreModule],
    providers: [new ScriptedProvider({ turns: [] })],
    config: { provider: 'scripted', logLevel: 'silent', consumers: { terminal: false }, store },
  });

describe('ProvisionStoreToken', () => {
  describe('when store.type names an engine with a provision factory', () => {
    it("should be that engine's provision store of the configured section, one per instance, closed when it stops", async () => {
      const rx = await create({ type: 'tagged', tag: 'blue' });
      const store = rx.container.get<ProvisionStore>(ProvisionStoreToken);
      expect(store).toBeInstanceOf(TaggedProvisionStore);
      expect((store as TaggedProvisionStore).tag).toBe('blue');
      expect(rx.container.get(ProvisionStoreToken)).toBe(store);
      await rx.stop();
      expect((store as TaggedProvisionStore).closed).toBe(1);
    });
  });

  describe('when store.type is file', () => {
    it('should be a file provision store in the configured directory', async () => {
      const dir = await tempDir('agentrx-provisions-');
      const rx = await create({ type: 'file', dir });
      try {
        const store = rx.container.get<ProvisionStore>(ProvisionStoreToken);
        expect(store).toBeInstanceOf(FileProvisionStore);
        await store.setTag({ provider: 'p', kind: 'agent', base: 'b' }, 'prod', 'a'.repeat(64));
        expect(await new FileProvisionStore(dir).tags({ provider: 'p', kind: 'agent', base: 'b' })).toEqual({ prod: 'a'.repeat(64) });
      } finally {
        await rx.stop();
      }
    });
  });

  describe('when the engine was registered without a provision factory', () => {
    it('should be a memory provision store', async () => {
      const rx = await create({ type: 'plain' });
      try {
        expect(rx.container.get(ProvisionStoreToken)).toBeInstanceOf(MemoryProvisionStore);
      } finally {
        await rx.stop();
      }
    });
  });
});
