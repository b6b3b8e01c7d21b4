import { closeSync, fdatasync, fsync, openSync, writeSync } from 'node:fs';

/**
 * The file operations of the write path, injectable so tests can count syncs and inject faults.
 * `writeSync` is a plain page-cache copy (cheaper than a threadpool round trip); `fdatasync` and
 * `fsync` run on the threadpool.
 */
export interface JournalIo {
  writeSync(fd: number, buffer: Buffer, offset: number, length: number): number;
  fdatasync(fd: number): Promise<void>;
  /** Fsyncs an open folder (makes the names created in it durable). Optional: default node:fs. */
  fsync?(fd: number): Promise<void>;
}

/** The real file system. */
export const nodeJournalIo: JournalIo = {
  writeSync: (fd, buffer, offset, length) => writeSync(fd, buffer, offset, length),
  fdatasync: (fd) => new Promise((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve()))),
  fsync: (fd) => new Promise((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve()))),
};

/** A name created in a folder, and the folder's count of names created when it was (see `FolderSyncs`). */
export interface NewName {
  readonly folder: string;
  readonly ticket: number;
}

/** What a journal needs from its store. */
export interface JournalHooks {
  /** True when a live process other than this one owns the session (its writer may be mid-write). */
  foreignOwner(): Promise<boolean>;
  /** Reports a repair (a torn last line cut). */
  onRepair(file: string, what: string): void;
  /** Makes a name created in a folder durable (see `FolderSyncs.sync`). */
  syncFolder(name: NewName): Promise<void>;
}

interface FolderState {
  /** Names noted as created in the folder so far. */
  created: number;
  /** Names covered by a completed fsync. */
  synced: number;
  running?: { readonly covers: number; readonly done: Promise<void> };
  queued?: Promise<void>;
}

/**
 * Folder fsyncs with group commit, per folder. One fsync of a folder makes durable every name
 * created in it before the fsync started, so the store notes each name it creates (`created`,
 * which returns a ticket) and `sync` waits for the first fsync that covers the ticket: one already
 * done, the one running if it started after the name was created, else the next one, which every
 * name created meanwhile shares. Sessions created together in the store's folder therefore cost one
 * fsync of it, not one each. A failed fsync fails every caller waiting on it (and is not counted as
 * done, so a later call runs another).
 */
export class FolderSyncs {
  private readonly folders = new Map<string, FolderState>();

  constructor(private readonly io: JournalIo) {}

  /** Notes a name just created in `folder` (call right after creating it); returns its ticket. */
  created(folder: string): NewName {
    let state = this.folders.get(folder);
    if (!state) this.folders.set(folder, (state = { created: 0, synced: 0 }));
    return { folder, ticket: ++state.created };
  }

  /** Resolves once a fsync of the folder that started after the name was created has completed. */
  sync(name: NewName): Promise<void> {
    const state = this.folders.get(name.folder);
    if (!state || name.ticket <= state.synced) return Promise.resolve();
    if (state.running && state.running.covers >= name.ticket) return state.running.done;
    if (state.queued) return state.queued;
    if (!state.running) return this.start(name.folder, state);
    const next = state.running.done.then(
      () => this.start(name.folder, state),
      () => this.start(name.folder, state),
    );
    state.queued = next;
    return next;
  }

  private start(folder: string, state: FolderState): Promise<void> {
    state.queued = undefined;
    const covers = state.created;
    const done = this.fsyncFolder(folder).then(() => {
      state.synced = Math.max(state.synced, covers);
    });
    const running = { covers, done };
    state.running = running;
    const settle = (): void => {
      if (state.running === running) state.running = undefined;
      // Nothing left to wait for: forget the folder (a session's own folder is synced once).
      if (!state.running && !state.queued && state.synced >= state.created && this.folders.get(folder) === state) this.folders.delete(folder);
    };
    done.then(settle, settle);
    return done;
  }

  /** Open and close are cheap synchronous calls; the fsync runs on the threadpool. */
  private async fsyncFolder(folder: string): Promise<void> {
    const fd = openSync(folder, 'r');
    try {
      await (this.io.fsync ? this.io.fsync(fd) : nodeJournalIo.fsync!(fd));
    } finally {
      closeSync(fd);
    }
  }
}

/** Calls run one at a time per key, in call order (a session's store calls). */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier call with the same key has settled. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, settled);
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return run;
  }

  /** Whether calls with `key` are running or waiting. */
  busy(key: string): boolean {
    return this.tails.has(key);
  }
}
