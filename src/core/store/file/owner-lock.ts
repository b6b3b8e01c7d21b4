import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { closeSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { link, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentRxError } from '../../errors.js';
import { storeError } from './store-error.js';

/** What `owner.lock` holds. */
export interface LockOwner {
  readonly pid: number;
  readonly hostname: string;
  /** Epoch ms when the lock was taken. */
  readonly at: number;
  /** Random per process: tells this process from an earlier one that had the same pid (containers). */
  readonly token?: string;
}

/** This process's token, written in every lock it takes. */
const PROCESS_TOKEN = randomUUID();
/** The host name, read once (each `os.hostname()` is a system call). */
let HOSTNAME: string | undefined;
const thisHost = (): string => (HOSTNAME ??= hostname());

/** Whether the owner is this process, another live one, or gone (a lock of another host is always taken as live). */
export function ownerState(owner: LockOwner): 'self' | 'live' | 'dead' {
  if (owner.hostname !== thisHost()) return 'live';
  if (owner.pid === process.pid) return owner.token === undefined || owner.token === PROCESS_TOKEN ? 'self' : 'dead';
  try {
    process.kill(owner.pid, 0);
    return 'live';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH' ? 'dead' : 'live';
  }
}

/** The owner in `file`, undefined when there is no lock; a lock that cannot be parsed is a `store_error`. */
export async function readOwner(file: string): Promise<LockOwner | undefined> {
  return ownerIn(file);
}

/** `readOwner`, synchronously. */
function ownerIn(file: string): LockOwner | undefined {
  let text: string;
  try {
    // Synchronous: a few bytes from the page cache cost less than a threadpool round trip.
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw storeError(file, 'cannot read the session lock', e);
  }
  try {
    const owner = JSON.parse(text) as LockOwner;
    if (typeof owner?.pid !== 'number' || typeof owner.hostname !== 'string') throw new Error('no pid and hostname');
    return owner;
  } catch (e) {
    throw storeError(file, `the session lock is unreadable (${(e as Error).message}); if no process holds the session, delete the file`, undefined);
  }
}

/** Whether a live process (this one included) holds the lock in `file`; an unreadable lock counts as held. */
export async function lockHeld(file: string): Promise<boolean> {
  const owner = await readOwner(file).catch(() => 'unreadable' as const);
  return owner === 'unreadable' || (owner !== undefined && ownerState(owner) !== 'dead');
}

/**
 * Takes `file` for this process: as a hard link to the process's owner file (`owners`, see
 * `OwnerFile`) where the file system has hard links, else created with `wx`; either way one taker
 * wins. A live owner is refused with a `store_error` naming it; a dead owner's lock (same host,
 * pid gone) is taken over. Returns the release function (removes the lock if it is still this
 * process's).
 */
export async function takeLock(file: string, sessionId: string, onTakeover: (dead: LockOwner) => void, owners?: OwnerFile): Promise<() => Promise<void>> {
  const mine: LockOwner = { pid: process.pid, hostname: thisHost(), at: Date.now(), token: PROCESS_TOKEN };
  for (let attempt = 0; attempt < 3; attempt++) {
    const linked = owners?.linkAs(file);
    if (linked === 'taken') return () => releaseLinked(file, owners!, mine);
    if (linked === undefined && create(file, mine)) return () => releaseLock(file, mine);
    const owner = await readOwner(file);
    if (!owner) continue; // released in between
    const state = ownerState(owner);
    if (state === 'self') {
      throw new AgentRxError('store_error', `session '${sessionId}' is already open in this process; close it before resuming it again (${file})`, {
        sessionId,
        file,
        pid: owner.pid,
      });
    }
    if (state === 'live') {
      const where = owner.hostname === thisHost() ? `process ${owner.pid}` : `process ${owner.pid} on host ${owner.hostname}`;
      throw new AgentRxError(
        'store_error',
        `session '${sessionId}' is held by ${where} (its lock dates from ${new Date(owner.at).toISOString()}); close it there, or if that process is gone, delete ${file}`,
        { sessionId, file, pid: owner.pid, hostname: owner.hostname },
      );
    }
    // Dead owner: move its lock aside (only one taker's rename gets that file), check it is the dead one, then create ours.
    const aside = `${file}.stale-${randomUUID()}`;
    try {
      await rename(file, aside);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw storeError(file, 'cannot take over the lock of a dead owner', e);
    }
    const moved = await readOwner(aside).catch(() => undefined);
    if (moved && (moved.pid !== owner.pid || moved.at !== owner.at || moved.token !== owner.token)) {
      // Another taker replaced the dead lock first: put its lock back and refuse.
      await link(aside, file).catch(() => undefined);
      await rm(aside, { force: true });
      continue;
    }
    await rm(aside, { force: true });
    onTakeover(owner);
  }
  throw new AgentRxError('store_error', `session '${sessionId}': could not take its lock ${file} (others keep taking it)`, { sessionId, file });
}

/**
 * Creates `file` holding `owner` (`wx`): false when it exists. Synchronous: a few bytes, no fsync
 * (a lock need not survive a crash, a dead owner's is taken over).
 */
function create(file: string, owner: LockOwner): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw storeError(file, 'cannot create the session lock', e);
  }
  try {
    writeSync(fd, JSON.stringify(owner));
  } catch (e) {
    rmSync(file, { force: true });
    throw storeError(file, 'cannot write the session lock', e);
  } finally {
    closeSync(fd);
  }
  return true;
}

async function releaseLock(file: string, mine: LockOwner): Promise<void> {
  const owner = await readOwner(file).catch(() => undefined);
  if (!owner || owner.pid !== mine.pid || owner.token !== mine.token || owner.at !== mine.at) return;
  unlinkLock(file);
}

/**
 * Removes a linked lock if it is still this process's: a link to its owner file (one `lstat`, no
 * read), or, when the owner file was made again meanwhile (someone removed it), a lock naming
 * this process (pid and token: every lock the process links holds the same owner).
 */
async function releaseLinked(file: string, owners: OwnerFile, mine: LockOwner): Promise<void> {
  if (owners.isLinkedAs(file)) return unlinkLock(file);
  const owner = await readOwner(file).catch(() => undefined);
  if (owner && owner.pid === mine.pid && owner.token === mine.token) unlinkLock(file);
}

function unlinkLock(file: string): void {
  try {
    unlinkSync(file); // not rmSync: it stats the path twice first
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw storeError(file, 'cannot remove the session lock', e);
  }
}

/** This process's owner file: its path and identity. */
interface OwnFile {
  readonly path: string;
  readonly dev: bigint;
  readonly ino: bigint;
}

/** Errors of `link()` that mean "no hard links here" (or no more of them): the lock is then created as a file. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK', 'EACCES']);

/**
 * This process's owner file in a store (`<store>/%owners/<process token>`, the `LockOwner` JSON),
 * made at the first lock the process takes there. Each session lock is a hard link to it: taking a
 * lock is one `link()` (exclusive like `wx`, and no new inode: on some file systems allocating an
 * inode costs more than the rest of the lock), reading a lock still gives its owner, and releasing
 * checks the link's inode instead of reading it. Owner files of dead processes that no lock links
 * any more (link count 1) are removed when a process makes its own. `%` keeps the folder out of
 * the session folders (`sessionIds` skips names that do not decode).
 */
export class OwnerFile {
  /** The owner file and its identity (bigint: inode numbers can exceed 2^53 on some file systems). */
  private file?: OwnFile;
  /** Set once `link()` failed for a reason that will not change: locks are created as files. */
  private unsupported = false;

  constructor(private readonly folder: string) {}

  /**
   * Links the owner file as `lock`: 'taken', 'exists' (another lock is there), or undefined when
   * hard links cannot be used here (the caller creates the lock as a file).
   */
  linkAs(lock: string): 'taken' | 'exists' | undefined {
    if (this.unsupported) return undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      const own = this.ensure();
      if (!own) return undefined;
      try {
        linkSync(own.path, lock);
        return 'taken';
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code ?? '';
        if (code === 'EEXIST') return 'exists';
        if (code === 'ENOENT') {
          this.file = undefined; // the owner file was removed under this process: make it again
          continue;
        }
        if (NO_LINKS.has(code)) {
          if (code !== 'EMLINK') this.unsupported = true;
          return undefined;
        }
        throw storeError(lock, 'cannot create the session lock', e);
      }
    }
    return undefined;
  }

  /** Whether `lock` is (still) a link to this process's owner file. */
  isLinkedAs(lock: string): boolean {
    const st = lstatSync(lock, { throwIfNoEntry: false, bigint: true });
    return st !== undefined && this.file !== undefined && st.ino === this.file.ino && st.dev === this.file.dev;
  }

  private ensure(): OwnFile | undefined {
    if (this.file) return this.file;
    const path = join(this.folder, PROCESS_TOKEN);
    try {
      mkdirSync(this.folder, { recursive: true });
      this.removeStale();
      // An existing one was made by another store on the same folder in this process (same token).
      create(path, { pid: process.pid, hostname: thisHost(), at: Date.now(), token: PROCESS_TOKEN });
      const st = lstatSync(path, { bigint: true });
      this.file = { path, dev: st.dev, ino: st.ino };
      return this.file;
    } catch {
      this.unsupported = true; // no owner file: locks are created as files, which names their own errors
      return undefined;
    }
  }

  /** Removes owner files of dead processes that no lock links any more (best effort). */
  private removeStale(): void {
    for (const name of readdirSync(this.folder)) {
      const path = join(this.folder, name);
      try {
        if (lstatSync(path).nlink !== 1) continue;
        const owner = ownerIn(path);
        if (owner && ownerState(owner) === 'dead') unlinkSync(path);
      } catch {
        // Unreadable or removed meanwhile: leave it.
      }
    }
  }
}
