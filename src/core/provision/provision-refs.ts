import { AgentRxError } from '../errors.js';
import type { ProvisionEntry } from './provision-store.js';
import type { HostVersion } from './versioned-resources.js';

/** What a tag name may be: 1–64 of `A-Z a-z 0-9 . _ -`. */
export const TAG_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** Throws `invalid_options` unless `tag` matches {@link TAG_PATTERN}. */
export function checkTag(tag: string): void {
  if (typeof tag !== 'string' || !TAG_PATTERN.test(tag)) {
    throw new AgentRxError('invalid_options', `tag ${JSON.stringify(tag)} is not a tag name: use 1 to 64 of the characters A-Z a-z 0-9 . _ -`, { tag });
  }
}

/** `'base:tag'` split at its last `:` (a base may hold `:`); anything else is `invalid_options`. */
export function parseRef(ref: string): { readonly base: string; readonly tag: string } {
  const at = typeof ref === 'string' ? ref.lastIndexOf(':') : -1;
  if (at <= 0 || at === ref.length - 1) {
    throw new AgentRxError('invalid_options', `${JSON.stringify(ref)} is not a reference: write '<base>:<tag>' (e.g. 'support-agent:prod')`, { ref });
  }
  const tag = ref.slice(at + 1);
  checkTag(tag);
  return { base: ref.slice(0, at), tag };
}

/**
 * The entry of `entries` that `digest` names: its full digest (any case), or a prefix of at least
 * 8 hex digits that only one of them starts with. None is `unknown_version`; a shorter or
 * ambiguous prefix is `invalid_options` (naming the candidates). `where` says what was searched.
 */
export function matchDigest(entries: readonly ProvisionEntry[], digest: string, where: string): ProvisionEntry {
  const wanted = String(digest).toLowerCase();
  const exact = entries.find((e) => e.digest === wanted);
  if (exact) return exact;
  if (!/^[0-9a-f]+$/.test(wanted)) {
    throw new AgentRxError('invalid_options', `${JSON.stringify(digest)} is not a digest: give the hex digest of a version (or its first 8 or more digits)`, {
      digest,
    });
  }
  const matches = entries.filter((e) => e.digest.startsWith(wanted));
  if (matches.length === 1 && wanted.length >= 8) return matches[0]!;
  if (matches.length > 1 || (matches.length === 1 && wanted.length < 8)) {
    throw new AgentRxError(
      'invalid_options',
      `digest prefix '${wanted}' is ${matches.length > 1 ? `ambiguous in ${where} (${matches.map((e) => e.digest.slice(0, 12)).join(', ')})` : 'too short'}: give at least 8 hex digits that name one version`,
      { digest: wanted, candidates: matches.map((e) => e.digest) },
    );
  }
  throw new AgentRxError('unknown_version', `no version with digest '${wanted}' is stored in ${where}; list the versions to see their digests`, {
    digest: wanted,
  });
}

/** Throws `invalid_options` unless `keep` is an integer ≥ 1. */
export function checkKeep(keep: unknown): asserts keep is number {
  if (typeof keep !== 'number' || !Number.isInteger(keep) || keep < 1) {
    throw new AgentRxError('invalid_options', `prune needs keep: a whole number of newest versions to keep, at least 1 (got ${JSON.stringify(keep)})`, {
      keep,
    });
  }
}

/** The entry of `entries` that is the host version `v` (same id, or same host name), if any. */
export function entryOfVersion(entries: readonly ProvisionEntry[], v: HostVersion): ProvisionEntry | undefined {
  return entries.find((e) => e.id === v.id) ?? entries.find((e) => e.name === v.name);
}

/**
 * What prune does to `versions` (any order): of the live ones (not archived), the newest `keep`
 * and every one `isTagged` are kept (newest first); the rest are removed oldest first. Archived
 * versions are in neither list.
 */
export function selectForPrune(
  versions: readonly HostVersion[],
  keep: number,
  isTagged: (v: HostVersion) => boolean,
): { readonly kept: HostVersion[]; readonly remove: HostVersion[] } {
  const live = versions.filter((v) => !v.archived).sort((a, b) => b.createdAt - a.createdAt);
  const kept = live.filter((v, i) => i < keep || isTagged(v));
  const remove = live.filter((v) => !kept.includes(v)).reverse();
  return { kept, remove };
}
