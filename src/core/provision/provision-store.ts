/**
 * What agentrx remembers of one provisioned host resource (a Managed Agents agent or environment,
 * an AgentCore harness): stored under (provider, kind, digest), written only after the host
 * accepted the resource, evicted only after the host accepted its removal. Plain JSON.
 */
export interface ProvisionEntry {
  /** Provider id (`claude-managed-agents`, `bedrock-agentcore`). */
  readonly provider: string;
  /** Resource kind within the provider (`agent`, `environment`, `harness`). */
  readonly kind: string;
  /** The base name the version belongs to (the agent's name, the environment's name). */
  readonly base: string;
  /** Full lowercase hex SHA-256 of the resource's canonical body; never cut. */
  readonly digest: string;
  /** The name on the host (composed by the host's name policy). */
  readonly name: string;
  /** The id on the host. */
  readonly id: string;
  /** The provider's handle for this resource (what its sessions need), plain JSON. */
  readonly handle: unknown;
  /** Epoch ms when the host created (or agentrx adopted) it. */
  readonly createdAt: number;
}

/** Identifies one version in a {@link ProvisionStore}. */
export interface ProvisionKey {
  readonly provider: string;
  readonly kind: string;
  readonly digest: string;
}

/** Identifies one base name's versions and tags. */
export interface ProvisionBase {
  readonly provider: string;
  readonly kind: string;
  readonly base: string;
}

/**
 * Remembers provisioned resources and movable tags (`base:tag → digest`) across processes. One
 * contract, one implementation per session-store engine (memory, file, Redis), opened through the
 * same {@link StoreRegistration} as the engine's SessionStore. Every failure is a `store_error`;
 * callers on the run path treat a failing store as a miss (logged), never as a reason to fail a run.
 */
export interface ProvisionStore {
  get(key: ProvisionKey): Promise<ProvisionEntry | undefined>;
  /** Writes (or replaces) the entry under its key. */
  put(entry: ProvisionEntry): Promise<void>;
  /** Removes the entry (and nothing else; tags pointing at it are left to the caller). No-op when absent. */
  evict(key: ProvisionKey): Promise<void>;
  /** The entries of `base` (every base of the kind when `base` is omitted), newest `createdAt` first. */
  list(filter: { readonly provider: string; readonly kind: string; readonly base?: string }): Promise<ProvisionEntry[]>;
  /** Points `tag` of `base` at `digest` (moving it if it pointed elsewhere). */
  setTag(base: ProvisionBase, tag: string, digest: string): Promise<void>;
  /** Removes a tag; no-op when absent. */
  deleteTag(base: ProvisionBase, tag: string): Promise<void>;
  /** Every tag of `base` and the digest it points at. */
  tags(base: ProvisionBase): Promise<Readonly<Record<string, string>>>;
  /** Releases what the engine holds open; optional. */
  close?(): Promise<void>;
}
