import { AgentRxError } from '../errors.js';
import type { ProvisionEntry, ProvisionKey } from './provision-store.js';

const STRING_FIELDS = ['provider', 'kind', 'base', 'digest', 'name', 'id'] as const;

/**
 * `value` as a {@link ProvisionEntry}, checked field by field: what an engine reads back (a file,
 * a hash field) or is given to `put`. Anything else is a `store_error` saying which field is wrong
 * and where (`where`: the file, key or call).
 */
export function provisionEntryOf(value: unknown, where: string): ProvisionEntry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AgentRxError('store_error', `${where} does not hold a provision entry (a JSON object); delete it, the next run provisions again`, { where });
  }
  const v = value as Record<string, unknown>;
  for (const field of STRING_FIELDS) {
    if (typeof v[field] !== 'string' || v[field] === '') {
      throw new AgentRxError('store_error', `${where}: the provision entry's '${field}' is not a non-empty string`, { where, field });
    }
  }
  if (typeof v.createdAt !== 'number' || !Number.isFinite(v.createdAt)) {
    throw new AgentRxError('store_error', `${where}: the provision entry's 'createdAt' is not a number of epoch ms`, { where, field: 'createdAt' });
  }
  return value as ProvisionEntry;
}

/**
 * A plain-JSON copy of `entry` (what every engine keeps: no shared references, no class instances),
 * checked with {@link provisionEntryOf}; a value JSON cannot hold (a cycle, a BigInt) is a `store_error`.
 */
export function plainEntry(entry: ProvisionEntry, where: string): ProvisionEntry {
  let text: string;
  try {
    text = JSON.stringify(entry);
  } catch (e) {
    throw new AgentRxError('store_error', `${where}: the provision entry is not plain JSON (${(e as Error).message})`, { where });
  }
  return provisionEntryOf(text === undefined ? undefined : JSON.parse(text), where);
}

/** The key `entry` is stored under. */
export function keyOf(entry: ProvisionEntry): ProvisionKey {
  return { provider: entry.provider, kind: entry.kind, digest: entry.digest };
}

/** Sort order of `ProvisionStore.list`: newest `createdAt` first, then by digest (the same order on every engine). */
export function newestFirst(a: ProvisionEntry, b: ProvisionEntry): number {
  return b.createdAt - a.createdAt || (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0);
}
