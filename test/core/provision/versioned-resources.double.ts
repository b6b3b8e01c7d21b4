import { createHash } from 'node:crypto';
import { AgentRxError } from '../../../src/core/errors.js';
import type { AgentSpec } from '../../../src/core/model.js';
import type { ProvisionEntry, ProvisionStore } from '../../../src/core/provision/provision-store.js';
import type { Ensured, HostVersion, VersionedResources } from '../../../src/core/provision/versioned-resources.js';

/** A version the in-memory host holds (mutable: `remove` archives it). */
interface HostResource {
  kind: string;
  base: string;
  name: string;
  id: string;
  createdAt: number;
  archived: boolean;
}

/**
 * A tiny in-memory host of versioned resources (kind `agent`): names `<base>_<digest8>`, creates a
 * version per new digest (adopts a live one of the same name), lists newest first, archives on
 * remove. Scripted failures: `failEnsure` rejects the next ensure, `refuse` holds ids whose
 * removal the host refuses. Records its calls.
 */
export class InMemoryHost implements VersionedResources {
  readonly provider = 'test-host';
  readonly kinds = ['agent'] as const;
  readonly calls: string[] = [];
  readonly resources: HostResource[] = [];
  failEnsure: Error | undefined;
  readonly refuse = new Set<string>();
  private clock = 1_000;

  identify(kind: string, spec: AgentSpec): { readonly base: string; readonly digest: string } {
    return {
      base: spec.name,
      digest: createHash('sha256')
        .update(JSON.stringify([kind, spec]))
        .digest('hex'),
    };
  }

  nameOf(_kind: string, base: string, digest: string): string {
    return `${base}_${digest.slice(0, 8)}`;
  }

  async ensure(kind: string, spec: AgentSpec, _signal: AbortSignal): Promise<Ensured> {
    this.calls.push(`ensure ${spec.name}`);
    if (this.failEnsure) throw this.failEnsure;
    const { base, digest } = this.identify(kind, spec);
    const name = this.nameOf(kind, base, digest);
    const live = this.resources.find((r) => r.name === name && !r.archived);
    const resource = live ?? this.add(kind, base, name);
    return { kind, base, digest, name, id: resource.id, handle: { agentId: resource.id }, created: live === undefined };
  }

  /** A version created on the host directly (not through ensure), e.g. by another tool. */
  add(kind: string, base: string, name: string): HostResource {
    const resource = { kind, base, name, id: `id_${this.resources.length + 1}`, createdAt: (this.clock += 1_000), archived: false };
    this.resources.push(resource);
    return resource;
  }

  async versions(kind: string, base: string, _signal: AbortSignal): Promise<HostVersion[]> {
    return this.resources
      .filter((r) => r.kind === kind && r.base === base)
      .map((r) => ({ ...r }))
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  async remove(_kind: string, id: string, _signal: AbortSignal): Promise<void> {
    this.calls.push(`remove ${id}`);
    if (this.refuse.has(id)) throw new AgentRxError('provider_error', `the host refused to archive ${id}`, { id });
    const r = this.resources.find((x) => x.id === id);
    if (r) r.archived = true;
  }
}

/** A ProvisionStore whose every method rejects with a `store_error` (a store that is down). */
export class FailingProvisionStore implements ProvisionStore {
  private fail(): Promise<never> {
    return Promise.reject(new AgentRxError('store_error', 'the provision store is down (test)'));
  }
  get(): Promise<ProvisionEntry | undefined> {
    return this.fail();
  }
  put(): Promise<void> {
    return this.fail();
  }
  evict(): Promise<void> {
    return this.fail();
  }
  list(): Promise<ProvisionEntry[]> {
    return this.fail();
  }
  setTag(): Promise<void> {
    return this.fail();
  }
  deleteTag(): Promise<void> {
    return this.fail();
  }
  tags(): Promise<Readonly<Record<string, string>>> {
    return this.fail();
  }
}

/** Agent specs for the Provisioner tests: `spec('support', 1)` and `spec('support', 2)` differ only in their prompt. */
export const spec = (name: string, n = 1): AgentSpec => ({ name, model: 'm', systemPrompt: `prompt ${n}`, tools: [] });
