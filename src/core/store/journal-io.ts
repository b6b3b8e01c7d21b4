import { closeSync, fdatasync, fsync, openSync, writeSync } from 'node:fs';

/**
 * The file operations of the write path, injectable so tests can count syncs and inject faults.
 * `writeSync` is a plain page-cache copy (cheaper than a threadpool round trip); `fdatasync` runs
 * on the threadpool.
 */
export interface JournalIo {
  writeSync(fd: number, buffer: Buffer, offset: number, length: number): number;
  fdatasync(fd: number): Promise<void>;
}

/** The real file system. */
export const nodeJournalIo: JournalIo = {
  writeSync: (fd, buffer, offset, length) => writeSync(fd, buffer, offset, length),
  fdatasync: (fd) => new Promise((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve()))),
};

/** What a journal needs from its store. */
export interface JournalHooks {
  /** True when a live process other than this one owns the session (its writer may be mid-write). */
  foreignOwner(): Promise<boolean>;
  /** Reports a repair (a torn last line cut). */
  onRepair(file: string, what: string): void;
}

/** Fsyncs a folder, making the names created in it durable (open and close are cheap synchronous calls; the fsync runs on the threadpool). */
export async function syncFolder(folder: string): Promise<void> {
  const fd = openSync(folder, 'r');
  try {
    await new Promise<void>((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));
  } finally {
    closeSync(fd);
  }
}
