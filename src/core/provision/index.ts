/** Provisioned host resources: the provision store, its token and opener, and the Provisioner over a provider's versioned resources. */
export type { ProvisionBase, ProvisionEntry, ProvisionKey, ProvisionStore } from './provision-store.js';
export type { Ensured, HostVersion, VersionedResources } from './versioned-resources.js';
export { ProvisionStoreToken } from './provision-token.js';
export { openProvisionStore } from './open-provision-store.js';
export { Provisioner, type PruneReport, type VersionView } from './provisioner.js';
export { TAG_PATTERN } from './provision-refs.js';
export type { ProvisionFactory } from '../store/store-registration.js';
export { MemoryProvisionStore } from '../store/memory/memory-provision-store.js';
export { FileProvisionStore } from '../store/file/file-provision-store.js';
