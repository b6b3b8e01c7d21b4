import { nodeJournalIo, type JournalIo } from './journal-io.js';

/** Tuning of the file engine; the defaults suit a server and the CLI alike. */
export interface FileSessionStoreOptions {
  /** Buffered appends (bytes of JSON) that make `append` write before the next write of the session. Default 64 KiB. */
  readonly bufferBytes?: number;
  /** How often a `tail` looks for appends made by another process (only while subscribed). Default 100 ms. */
  readonly pollMs?: number;
  /**
   * Session journals whose folded record and envelope offsets stay in memory (with the file open,
   * for held sessions); idle ones beyond it are dropped, those used longest ago first (read again
   * on use). Default 100.
   */
  readonly maxOpenLogs?: number;
  /** The write and sync calls (tests count syncs and inject faults through it). Default: node:fs. */
  readonly io?: JournalIo;
  /**
   * Journals of at least this many bytes get a `record.json` snapshot at release; `list` and
   * `prune` fold a smaller one from its text (its envelope lines left unparsed) in less time than
   * the snapshot costs to write (a new file and a rename per session). Default 512 KiB.
   */
  readonly snapshotBytes?: number;
}

/** `options` with every default filled. */
export function fileStoreTuning(options: FileSessionStoreOptions): Required<FileSessionStoreOptions> {
  return {
    bufferBytes: options.bufferBytes ?? 64 * 1024,
    pollMs: options.pollMs ?? 100,
    maxOpenLogs: options.maxOpenLogs ?? 100,
    io: options.io ?? nodeJournalIo,
    snapshotBytes: options.snapshotBytes ?? 512 * 1024,
  };
}
