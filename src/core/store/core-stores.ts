import { fileStoreModule } from './file/file-store.module.js';
import { memoryStoreModule } from './memory/memory-store.module.js';
import type { StoreRegistration } from './store-registration.js';

/**
 * The engines core registers in every container (the core module binds them): memory, the
 * default, and file. Other engines come with their modules (Redis with the distributed module).
 */
export const coreStores: readonly StoreRegistration[] = [memoryStoreModule.registration, fileStoreModule.registration];
