import { IsNotEmpty, IsString } from '../../util/class-validator.js';
import { StoreConfig } from '../../config/store-config.js';

const DIR = { context: { expected: "a directory path (required when store.type is 'file')" } };

/** `store: { type: 'file', dir }`: one folder per session under `dir`; survives a restart on one machine. */
export class FileStoreConfig extends StoreConfig {
  /** Directory of the store (a folder per session). Required. */
  @IsString(DIR)
  @IsNotEmpty(DIR)
  dir!: string;
}
