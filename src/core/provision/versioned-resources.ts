import type { AgentSpec } from '../model.js';

/** One version of a base as the host lists it. */
export interface HostVersion {
  readonly kind: string;
  readonly base: string;
  /** The host name (`<base>_<digest8>` after the host's name policy). */
  readonly name: string;
  readonly id: string;
  /** Epoch ms. */
  readonly createdAt: number;
  /** True for an archived (CMA) or deleting (AgentCore) resource: not usable, not pruned again. */
  readonly archived: boolean;
}

/** What `ensure` returns: the handle a session needs and the digest it was stored under. */
export interface Ensured {
  readonly kind: string;
  readonly base: string;
  readonly digest: string;
  readonly name: string;
  readonly id: string;
  /** The provider's handle for this resource (plain JSON). */
  readonly handle: unknown;
  /** True when this call created the resource; false when it adopted a live one of the exact name. */
  readonly created: boolean;
}

/**
 * The named, versioned resources of one provider (Managed Agents: `agent`, `environment`;
 * AgentCore: `harness`): how a spec maps to a base and a digest, how names are composed under the
 * host's policy, and the host calls that create, list and remove versions. The provider-neutral
 * bookkeeping over it (the provision store, tags, prune, teardown) lives in `Provisioner`.
 */
export interface VersionedResources {
  /** The provider id these resources belong to. */
  readonly provider: string;
  /** The kinds, in provisioning order (an environment before the agent that runs in it). */
  readonly kinds: readonly string[];
  /** The base name and the full hex SHA-256 digest of `kind`'s canonical body for `spec`. */
  identify(kind: string, spec: AgentSpec): { readonly base: string; readonly digest: string };
  /** The host name for (`base`, `digest`) under the host's name policy. */
  nameOf(kind: string, base: string, digest: string): string;
  /**
   * Creates the resource for `spec` under its composed name, or on 409 adopts the live one of that
   * exact name; an archived one is `resource_archived`, an unlisted one `name_conflict`.
   */
  ensure(kind: string, spec: AgentSpec, signal: AbortSignal): Promise<Ensured>;
  /** Every version of `base` the host lists (archived ones flagged), newest first. */
  versions(kind: string, base: string, signal: AbortSignal): Promise<HostVersion[]>;
  /** Archives (CMA) or deletes (AgentCore) one version; a 404 counts as done. */
  remove(kind: string, id: string, signal: AbortSignal): Promise<void>;
}
