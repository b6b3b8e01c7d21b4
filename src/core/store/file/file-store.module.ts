import { bindStore } from '../bind-store.js';
import { FileStoreConfig } from './file-store.config.js';
import { FileSessionStore } from './file-session-store.js';

/** The file engine (`store: { type: 'file', dir }`), registered from core; repairs go to `onRepair`. */
export const fileStoreModule = bindStore('file', (section, { onRepair }) => new FileSessionStore(section.dir, onRepair), FileStoreConfig);
