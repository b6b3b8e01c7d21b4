import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { closeSync, openSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { link, rename, rm } from 'node:fs/promises';
import { AgentRxError } from '../errors.js';
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

/** Whether the owner is this process, another live one, or gone (a lock of another host is always taken as live). */
export function ownerState(owner: LockOwner): 'self' | 'live' | 'dead' {
  if (owner.hostname !== hostname()) return 'live';
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
 * Takes `file` for this process (created with `wx`, so one creator wins). A live owner is refused
 * with a `store_error` naming it; a dead owner's lock (same host, pid gone) is taken over.
 * Returns the release function (removes the lock if it is still this process's).
 */
export async function takeLock(file: string, sessionId: string, onTakeover: (dead: LockOwner) => void): Promise<() => Promise<void>> {
  const mine: LockOwner = { pid: process.pid, hostname: hostname(), at: Date.now(), token: PROCESS_TOKEN };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await create(file, mine)) return () => releaseLock(file, mine);
    const owner = await readOwner(file);
    if (!owner) continue; // released in between
    const state = ownerState(owner);
    if (state === 'self') {
      throw new AgentRxError('store_error', `session '${sessionId}' is already open in this process; close it before resuming it again (${file})`, { sessionId, file, pid: owner.pid });
    }
    if (state === 'live') {
      const where = owner.hostname === hostname() ? `process ${owner.pid}` : `process ${owner.pid} on host ${owner.hostname}`;
      throw new AgentRxError(
        'store_error',
        `session '${sessionId}' is held by ${where} since ${new Date(owner.at).toISOString()}; close it there, or if that process is gone, delete ${file}`,
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

/** Creates the lock (synchronously: a few bytes, no fsync — a lock need not survive a crash, a dead owner's is taken over). */
async function create(file: string, owner: LockOwner): Promise<boolean> {
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
  try {
    unlinkSync(file); // not rmSync: it stats the path twice first
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw storeError(file, 'cannot remove the session lock', e);
  }
}
