import type { ProvisionBase, ProvisionEntry, ProvisionKey, ProvisionStore } from '../../provision/provision-store.js';
import { newestFirst, plainEntry } from '../../provision/provision-entry.js';

/** One map key for a tuple of strings (any characters). */
const keyString = (...parts: readonly string[]): string => JSON.stringify(parts);

/**
 * The memory engine's provision store: entries and tags in process memory, for the life of the
 * store (tests, and the library's default). Entries are kept and handed out as plain-JSON copies,
 * so a caller changing what it put or got changes nothing stored.
 */
export class MemoryProvisionStore implements ProvisionStore {
  private readonly entries = new Map<string, ProvisionEntry>();
  /** (provider, kind, base) → tag → digest. */
  private readonly tagMaps = new Map<string, Map<string, string>>();

  async get(key: ProvisionKey): Promise<ProvisionEntry | undefined> {
    const entry = this.entries.get(keyString(key.provider, key.kind, key.digest));
    return entry === undefined ? undefined : structuredClone(entry);
  }

  async put(entry: ProvisionEntry): Promise<void> {
    const plain = plainEntry(entry, `provision entry ${entry?.kind}/${entry?.digest} in memory`);
    this.entries.set(keyString(plain.provider, plain.kind, plain.digest), plain);
  }

  async evict(key: ProvisionKey): Promise<void> {
    this.entries.delete(keyString(key.provider, key.kind, key.digest));
  }

  async list(filter: { readonly provider: string; readonly kind: string; readonly base?: string }): Promise<ProvisionEntry[]> {
    return [...this.entries.values()]
      .filter((e) => e.provider === filter.provider && e.kind === filter.kind && (filter.base === undefined || e.base === filter.base))
      .sort(newestFirst)
      .map((e) => structuredClone(e));
  }

  async setTag(base: ProvisionBase, tag: string, digest: string): Promise<void> {
    const k = keyString(base.provider, base.kind, base.base);
    const tags = this.tagMaps.get(k) ?? new Map<string, string>();
    tags.set(tag, digest);
    this.tagMaps.set(k, tags);
  }

  async deleteTag(base: ProvisionBase, tag: string): Promise<void> {
    const k = keyString(base.provider, base.kind, base.base);
    const tags = this.tagMaps.get(k);
    tags?.delete(tag);
    if (tags?.size === 0) this.tagMaps.delete(k);
  }

  async tags(base: ProvisionBase): Promise<Readonly<Record<string, string>>> {
    return Object.fromEntries(this.tagMaps.get(keyString(base.provider, base.kind, base.base)) ?? []);
  }
}
