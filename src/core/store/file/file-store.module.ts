import { bindStore } from '../bind-store.js';
import { FileStoreConfig } from './file-store.config.js';
import { FileProvisionStore } from './file-provision-store.js';
import { FileSessionStore } from './file-session-store.js';

/**
 * The file engine (`store: { type: 'file', dir }`), registered from core; repairs go to
 * `onRepair`. Provisions are kept under `<dir>/%provisions` (see `FileProvisionStore`).
 */
export const fileStoreModule = bindStore(
  'file',
  (section, { onRepair }) => new FileSessionStore(section.dir, onRepair),
  FileStoreConfig,
  (section, { onRepair }) => new FileProvisionStore(section.dir, onRepair),
);
