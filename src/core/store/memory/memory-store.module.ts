import { bindStore } from '../bind-store.js';
import { MemoryStoreConfig } from './memory-store.config.js';
import { MemoryProvisionStore } from './memory-provision-store.js';
import { MemorySessionStore } from './memory-session-store.js';

/** The memory engine (`store.type: 'memory'`, the default), registered from core; provisions are kept in memory too. */
export const memoryStoreModule = bindStore(
  'memory',
  (section) => new MemorySessionStore(section.memoryLogLimit, section.memoryMaxSessions, { maxBytes: section.memoryMaxBytes, keep: section.memoryKeep }),
  MemoryStoreConfig,
  () => new MemoryProvisionStore(),
);
