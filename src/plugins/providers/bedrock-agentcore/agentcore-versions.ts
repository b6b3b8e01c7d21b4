import type { HarnessSummary } from '@aws-sdk/client-bedrock-agentcore-control';
import { AgentRxError } from '../../../core/errors.js';
import type { AgentSpec } from '../../../core/model.js';
import type { Ensured, HostVersion, VersionedResources } from '../../../core/provision/versioned-resources.js';
import { agentCoreNameOf, isAgentCoreNameOf } from './agentcore-names.js';
import { harnessDigestOf, type HarnessInputOptions } from './agentcore-harness-input.js';
import type { AgentCoreHarnessHandle, AgentCoreProvisioner } from './agentcore-provisioner.js';

/** The one kind of versioned resource AgentCore has. */
export const HARNESS_KIND = 'harness';

/**
 * The AgentCore harnesses as versioned resources (kind `harness`): the base of a version is the
 * agent's name, its digest the SHA-256 of everything that shapes the harness, its host name
 * `<prefix>_<base>_<digest8>` under the AgentCore name policy. Creating, adopting on 409 and
 * waiting until READY are the `AgentCoreProvisioner`'s; removing a version deletes the harness. A
 * DELETING harness is listed as archived (not usable, not pruned again).
 */
export class AgentCoreVersions implements VersionedResources {
  /** Provider id. */
  readonly provider = 'bedrock-agentcore';
  /** `['harness']`. */
  readonly kinds = [HARNESS_KIND] as const;

  /**
   * @param provisioner The control-plane provisioner (its options shape the harness and its name).
   * @param opts The settings that shape a harness (and therefore its digest and name).
   */
  constructor(
    private readonly provisioner: AgentCoreProvisioner,
    private readonly opts: HarnessInputOptions,
  ) {}

  /** Base: the agent's name; digest: the full hex SHA-256 of the harness's identity. */
  identify(kind: string, spec: AgentSpec): { readonly base: string; readonly digest: string } {
    checkKind(kind);
    return { base: spec.name, digest: harnessDigestOf(spec, this.opts) };
  }

  /** The harness name under the AgentCore name policy. */
  nameOf(kind: string, base: string, digest: string): string {
    checkKind(kind);
    return agentCoreNameOf(this.opts.harnessNamePrefix, base, digest);
  }

  /**
   * Creates (or adopts on 409) the harness and waits until it is READY; the handle is an
   * `AgentCoreHarnessHandle` with its digest. Without an execution role: `invalid_config`.
   */
  async ensure(kind: string, spec: AgentSpec, signal: AbortSignal): Promise<Ensured> {
    const { base, digest } = this.identify(kind, spec);
    if (this.opts.executionRoleArn === '') {
      throw new AgentRxError(
        'invalid_config',
        'bedrock-agentcore: creating a harness needs providers.bedrock-agentcore.executionRoleArn (the IAM role it runs as)',
        { path: 'providers.bedrock-agentcore.executionRoleArn' },
      );
    }
    const h = await this.provisioner.provision(spec, signal);
    const handle: AgentCoreHarnessHandle = { ...h, digest };
    return { kind, base, digest, name: h.harnessName ?? this.nameOf(kind, base, digest), id: h.harnessId ?? h.harnessArn, handle, created: h.created };
  }

  /** Every listed harness named as a version of `base`, newest first; DELETING ones flagged archived. */
  async versions(kind: string, base: string, signal: AbortSignal): Promise<HostVersion[]> {
    checkKind(kind);
    const all = await this.provisioner.listHarnesses(signal);
    return all
      .filter((h): h is HarnessSummary & { harnessName: string; harnessId: string } => typeof h.harnessName === 'string' && typeof h.harnessId === 'string')
      .filter((h) => isAgentCoreNameOf(h.harnessName, this.opts.harnessNamePrefix, base))
      .map((h) => ({ kind, base, name: h.harnessName, id: h.harnessId, createdAt: epochOf(h.createdAt), archived: h.status === 'DELETING' }))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  /** Deletes the harness `id`; a missing one counts as deleted. */
  async remove(kind: string, id: string, signal: AbortSignal): Promise<void> {
    checkKind(kind);
    await this.provisioner.deleteHarness(id, signal);
  }
}

function checkKind(kind: string): void {
  if (kind !== HARNESS_KIND)
    throw new AgentRxError('invalid_options', `bedrock-agentcore has no versioned resource of kind '${kind}' (only '${HARNESS_KIND}')`);
}

/** Epoch ms of the SDK's `createdAt` (a Date; an ISO string from a looser client); 0 when absent. */
function epochOf(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Number.isFinite(ms) ? ms : 0;
}
