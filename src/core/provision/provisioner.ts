import { AgentRxError, toAgentRxError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentSpec } from '../model.js';
import { checkKeep, checkTag, entryOfVersion, matchDigest, parseRef, selectForPrune } from './provision-refs.js';
import type { ProvisionEntry, ProvisionStore } from './provision-store.js';
import type { Ensured, HostVersion, VersionedResources } from './versioned-resources.js';

/** What {@link Provisioner.prune} did (or, with `dryRun`, would do). */
export interface PruneReport {
  /** The live versions kept (the newest `keep` and every tagged one), newest first. */
  readonly kept: readonly HostVersion[];
  /** The versions removed on the host (would be, with `dryRun`), oldest first. */
  readonly archived: readonly HostVersion[];
  /** The version whose removal failed (prune stopped there; `archived` holds what was removed before it). */
  readonly failed?: { readonly version: HostVersion; readonly error: AgentRxError };
  readonly dryRun: boolean;
}

/** One version of a base as {@link Provisioner.list} shows it: what the host lists, and what the store knows of it. */
export interface VersionView extends HostVersion {
  /** Its full digest, when the store has it. */
  readonly digest?: string;
  /** The tags of the base that point at it. */
  readonly tags: readonly string[];
  /** True when the store has an entry for it (a run of that spec reuses it without asking the host). */
  readonly stored: boolean;
}

/**
 * The provider-neutral bookkeeping over one provider's {@link VersionedResources}: reuses what the
 * {@link ProvisionStore} remembers, records what the host accepted, moves tags, resolves
 * `base:tag`, prunes old versions and tears one down. `ensure` is on the run path, where a failing
 * store is only a logged miss; every other method is a command, where store errors propagate.
 */
export class Provisioner {
  constructor(
    private readonly resources: VersionedResources,
    private readonly store: ProvisionStore,
    private readonly logger: Logger,
  ) {}

  /**
   * Store hit (by `identify(kind, spec).digest`) → the stored entry as Ensured (`created: false`);
   * miss → `resources.ensure`, then `store.put` (a failing store is logged at warn and counts as
   * a miss; it never fails the call). A failed ensure is never stored.
   */
  async ensure(kind: string, spec: AgentSpec, signal: AbortSignal): Promise<Ensured> {
    const { digest } = this.resources.identify(kind, spec);
    const key = { provider: this.resources.provider, kind, digest };
    const hit = await this.store.get(key).catch((e: unknown) => this.storeMiss(`cannot read the provision of ${kind} ${digest.slice(0, 12)}`, e));
    if (hit) return { kind: hit.kind, base: hit.base, digest: hit.digest, name: hit.name, id: hit.id, handle: hit.handle, created: false };
    const ensured = await this.resources.ensure(kind, spec, signal);
    const entry: ProvisionEntry = {
      provider: this.resources.provider,
      kind: ensured.kind,
      base: ensured.base,
      digest: ensured.digest,
      name: ensured.name,
      id: ensured.id,
      handle: ensured.handle,
      createdAt: Date.now(),
    };
    await this.store.put(entry).catch((e: unknown) => this.storeMiss(`cannot remember ${kind} '${ensured.name}'`, e));
    return ensured;
  }

  /** Every version of `base` on the host, newest first, with the digest and tags the store knows. */
  async list(kind: string, base: string, signal: AbortSignal): Promise<VersionView[]> {
    const versions = await this.resources.versions(kind, base, signal);
    const entries = await this.store.list({ provider: this.resources.provider, kind, base });
    const tags = await this.store.tags(this.baseOf(kind, base));
    return [...versions]
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((v) => {
        const entry = entryOfVersion(entries, v);
        const tagged = entry === undefined ? [] : Object.keys(tags).filter((t) => tags[t] === entry.digest);
        return { ...v, ...(entry ? { digest: entry.digest } : {}), tags: tagged.sort(), stored: entry !== undefined };
      });
  }

  /**
   * Moves `tag` of `base` to `digest` (a full digest, or a unique prefix of ≥ 8 hex digits of a
   * version stored for `base`) and returns that version's entry. Unknown digest → `unknown_version`;
   * a tag name outside `[A-Za-z0-9._-]{1,64}` → `invalid_options`.
   */
  async tag(kind: string, base: string, tag: string, digest: string): Promise<ProvisionEntry> {
    checkTag(tag);
    const entries = await this.store.list({ provider: this.resources.provider, kind, base });
    const entry = matchDigest(entries, digest, `the ${kind} versions of '${base}'`);
    await this.store.setTag(this.baseOf(kind, base), tag, entry.digest);
    return entry;
  }

  /**
   * `'base:tag'` → the stored entry. Unknown tag → `unknown_tag` (naming the base's tags); a tag
   * pointing at a digest no longer stored → `unknown_version`. Never a fallback.
   */
  async resolve(kind: string, ref: string): Promise<ProvisionEntry> {
    const { base, tag } = parseRef(ref);
    const tags = await this.store.tags(this.baseOf(kind, base));
    const digest = tags[tag];
    if (digest === undefined) {
      const known = Object.keys(tags).sort();
      throw new AgentRxError(
        'unknown_tag',
        `${kind} '${base}' has no tag '${tag}' in this provision store (${known.length > 0 ? `its tags: ${known.join(', ')}` : 'it has no tags'}); ` +
          `tag a version first, with the same store: agentrx ${kind === 'harness' ? 'harnesses' : `${kind}s`} tag ${base}:${tag} <digest>`,
        { kind, base, tag },
      );
    }
    const entry = await this.store.get({ provider: this.resources.provider, kind, digest });
    if (entry === undefined) {
      throw new AgentRxError(
        'unknown_version',
        `tag '${base}:${tag}' points at ${kind} version ${digest.slice(0, 12)}, which is no longer stored (torn down or pruned); move the tag to a live version`,
        { kind, base, tag, digest },
      );
    }
    return entry;
  }

  /**
   * Keeps the newest `keep` live versions of `base` and every tagged one; removes the rest oldest
   * first (`resources.remove`), evicting each from the store; stops at the first failure and
   * reports it in `failed`, with what was removed before it. `keep` must be an integer ≥ 1
   * (`invalid_options`). `dryRun`: removes nothing, reports what it would.
   */
  async prune(kind: string, base: string, opts: { keep: number; dryRun?: boolean }, signal: AbortSignal): Promise<PruneReport> {
    checkKeep(opts?.keep);
    const dryRun = opts.dryRun === true;
    const versions = await this.resources.versions(kind, base, signal);
    const entries = await this.store.list({ provider: this.resources.provider, kind, base });
    const taggedDigests = new Set(Object.values(await this.store.tags(this.baseOf(kind, base))));
    const { kept, remove } = selectForPrune(versions, opts.keep, (v) => {
      const entry = entryOfVersion(entries, v);
      return entry !== undefined && taggedDigests.has(entry.digest);
    });
    if (dryRun) return { kept, archived: remove, dryRun };
    const archived: HostVersion[] = [];
    for (const version of remove) {
      try {
        await this.resources.remove(kind, version.id, signal);
      } catch (e) {
        return { kept, archived, failed: { version, error: toAgentRxError(e) }, dryRun };
      }
      archived.push(version);
      const entry = entryOfVersion(entries, version);
      if (entry) {
        // Removed on the host already: a store that cannot forget it is logged, the prune goes on.
        await this.store
          .evict({ provider: entry.provider, kind, digest: entry.digest })
          .catch((e: unknown) => this.storeMiss(`cannot forget pruned ${kind} '${version.name}'`, e));
      }
    }
    return { kept, archived, dryRun };
  }

  /**
   * Removes one version on the host (`resources.remove`; `digest`: full, or a unique prefix of
   * ≥ 8 hex digits of a stored version of `kind`), then evicts it from the store and drops the
   * tags pointing at it. When the host refuses, the store keeps it and the error propagates.
   */
  async teardown(kind: string, digest: string, signal: AbortSignal): Promise<void> {
    const entries = await this.store.list({ provider: this.resources.provider, kind });
    const entry = matchDigest(entries, digest, `the stored ${kind} versions`);
    await this.resources.remove(kind, entry.id, signal);
    await this.store.evict({ provider: entry.provider, kind, digest: entry.digest });
    const base = this.baseOf(kind, entry.base);
    const tags = await this.store.tags(base);
    for (const [tag, d] of Object.entries(tags)) if (d === entry.digest) await this.store.deleteTag(base, tag);
  }

  private baseOf(kind: string, base: string): { provider: string; kind: string; base: string } {
    return { provider: this.resources.provider, kind, base };
  }

  /** Logs a store failure on the run path at warn; the caller goes on as on a miss. */
  private storeMiss(what: string, e: unknown): undefined {
    const error = toAgentRxError(e, 'store_error');
    this.logger.warn(`provision store: ${what}; going on without it: ${error.message}`, { provider: this.resources.provider, code: error.code });
    return undefined;
  }
}
