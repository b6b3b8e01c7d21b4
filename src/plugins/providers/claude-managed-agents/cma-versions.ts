import { createHash } from 'node:crypto';
import { AgentRxError, isAgentRxError } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { AgentSpec } from '../../../core/model.js';
import type { Ensured, HostVersion, VersionedResources } from '../../../core/provision/versioned-resources.js';
import type { CmaClient } from './cma-client.js';
import { cmaNameOf, isCmaNameOf } from './cma-names.js';
import { agentBodyOf, canonicalJson } from './cma-provision.js';
import type { WireMap } from './cma-wire.js';

/** The Managed Agents kinds, in provisioning order. */
export const CMA_KINDS = ['environment', 'agent'] as const;

/** A Managed Agents resource kind. */
export type CmaKind = (typeof CMA_KINDS)[number];

/** What a stored environment version's handle holds. */
export interface CmaEnvironmentHandle {
  readonly environmentId: string;
  readonly environmentName: string;
}

/** What a stored agent version's handle holds. */
export interface CmaAgentHandle {
  readonly agentId: string;
  readonly agentName: string;
}

/** What shapes the versions besides the spec (from `CmaProviderOptions`). */
export interface CmaVersionSettings {
  /** Model when the spec names none. */
  readonly model: string;
  /** Base name of the environment's versions. */
  readonly environmentName: string;
  /** Environment `config`, verbatim. */
  readonly environment: Readonly<Record<string, unknown>>;
}

/**
 * The Managed Agents environments and agents as versioned resources: a version's digest is the
 * SHA-256 of the canonical JSON of its body without the name (`{config}` for an environment; model,
 * system prompt and custom tools for an agent), its name `<base>_<digest8>` under the Managed
 * Agents name policy (`cmaNameOf`). A 409 on create is recovered by exact name among every version
 * the host lists, archived ones included: a live one is adopted, an archived one is
 * `resource_archived`, none at all `name_conflict`. Removing a version archives it.
 */
export class CmaVersions implements VersionedResources {
  /** Provider id. */
  readonly provider = 'claude-managed-agents';
  /** `['environment', 'agent']`: an environment before the agent that runs in it. */
  readonly kinds = CMA_KINDS;

  constructor(
    private readonly client: CmaClient,
    private readonly settings: CmaVersionSettings,
    private readonly logger: Logger,
  ) {}

  /** Base and full hex digest of `kind`'s body for `spec`. */
  identify(kind: string, spec: AgentSpec): { readonly base: string; readonly digest: string } {
    const { base, body } = this.bodyOf(kind, spec);
    return { base, digest: digestOf(body) };
  }

  /** `<base>_<digest8>` under the Managed Agents name policy. */
  nameOf(kind: string, base: string, digest: string): string {
    checkKind(kind);
    return cmaNameOf(base, digest);
  }

  /** Creates the version under its name, or recovers it by exact name on 409 (see the class doc). */
  async ensure(kind: string, spec: AgentSpec, signal: AbortSignal): Promise<Ensured> {
    const { base, body } = this.bodyOf(kind, spec);
    const digest = digestOf(body);
    const name = cmaNameOf(base, digest);
    const k = kind as CmaKind;
    let id: string;
    let created: boolean;
    try {
      const made = k === 'agent' ? await this.client.createAgent({ name, ...body }, signal) : await this.client.createEnvironment({ name, ...body }, signal);
      if (typeof made['id'] !== 'string') throw new AgentRxError('provider_error', `creating the ${kind} "${name}" answered without an id`);
      id = made['id'];
      created = true;
    } catch (e) {
      if (!isAgentRxError(e, 'http_error') || e.details?.['status'] !== 409) throw e;
      id = await this.recover(k, name, e, signal);
      created = false;
    }
    const handle: CmaAgentHandle | CmaEnvironmentHandle = k === 'agent' ? { agentId: id, agentName: name } : { environmentId: id, environmentName: name };
    return { kind, base, digest, name, id, handle, created };
  }

  /** Every version of `base` the host lists (archived ones included and flagged), newest first. */
  async versions(kind: string, base: string, signal: AbortSignal): Promise<HostVersion[]> {
    return (await this.listAll(kind as CmaKind, signal))
      .filter((r) => typeof r['id'] === 'string' && typeof r['name'] === 'string' && isCmaNameOf(r['name'], base))
      .map((r) => ({ kind, base, name: r['name'] as string, id: r['id'] as string, createdAt: epochOf(r['created_at']), archived: isArchived(r) }))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  /** Archives the version `id`; a 404 counts as done. */
  async remove(kind: string, id: string, signal: AbortSignal): Promise<void> {
    checkKind(kind);
    try {
      if (kind === 'agent') await this.client.archiveAgent(id, signal);
      else await this.client.archiveEnvironment(id, signal);
    } catch (e) {
      if (!(isAgentRxError(e, 'http_error') && e.details?.['status'] === 404)) throw e;
    }
  }

  /** After a 409: the id of the live resource of exactly `name`, else `resource_archived` / `name_conflict`. */
  private async recover(kind: CmaKind, name: string, conflict: AgentRxError, signal: AbortSignal): Promise<string> {
    const same = (await this.listAll(kind, signal)).filter((r) => r['name'] === name && typeof r['id'] === 'string');
    const live = same.find((r) => !isArchived(r));
    if (live) {
      this.logger.debug(`claude-managed-agents: reusing the existing ${kind}`, { name, id: live['id'] });
      return live['id'] as string;
    }
    if (same.length > 0) {
      throw new AgentRxError(
        'resource_archived',
        `creating the ${kind} "${name}" answered 409: the ${kind} of that name (${String(same[0]!['id'])}) is archived and cannot be used; change the ${kind === 'agent' ? "agent's name or spec" : 'environmentName or environment'} so that a new version is created`,
        { status: 409, name, id: same[0]!['id'], kind },
        { cause: conflict },
      );
    }
    throw new AgentRxError(
      'name_conflict',
      `creating the ${kind} "${name}" answered 409 (the name is taken), but no ${kind} of that name is listed, archived or not; check the API key's workspace, or change the ${kind === 'agent' ? "agent's name" : 'environmentName'}`,
      { status: 409, name, kind },
      { cause: conflict },
    );
  }

  private listAll(kind: CmaKind, signal: AbortSignal): Promise<WireMap[]> {
    checkKind(kind);
    return kind === 'agent' ? this.client.listAgents(signal, { includeArchived: true }) : this.client.listEnvironments(signal, { includeArchived: true });
  }

  private bodyOf(kind: string, spec: AgentSpec): { base: string; body: WireMap } {
    checkKind(kind);
    if (kind === 'agent') return { base: spec.name, body: agentBodyOf(spec, this.settings.model) };
    return { base: this.settings.environmentName, body: { config: { ...this.settings.environment } } };
  }
}

/** The full lowercase hex SHA-256 of the canonical JSON of `body`. */
export function digestOf(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function checkKind(kind: string): asserts kind is CmaKind {
  if (kind !== 'agent' && kind !== 'environment') {
    throw new AgentRxError('invalid_options', `claude-managed-agents has no versioned resource of kind '${kind}' (only 'environment' and 'agent')`);
  }
}

function isArchived(r: WireMap): boolean {
  return r['archived_at'] !== null && r['archived_at'] !== undefined;
}

function epochOf(v: unknown): number {
  const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Number.isFinite(ms) ? ms : 0;
}
