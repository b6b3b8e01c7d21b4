import { AgentRxError } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { AgentSpec } from '../../../core/model.js';
import { Provisioner } from '../../../core/provision/provisioner.js';
import type { ProvisionStore } from '../../../core/provision/provision-store.js';
import { MemoryProvisionStore } from '../../../core/store/memory/memory-provision-store.js';
import type { CmaClient } from './cma-client.js';
import { isCmaHandle, provisionCma, teardownCma, type CmaHandle } from './cma-provision.js';
import { CmaVersions, type CmaAgentHandle, type CmaEnvironmentHandle } from './cma-versions.js';
import type { CmaProviderOptions } from './cma.config.js';

/** What `ensureAgent` / `ensureEnvironment` return: the version's handle and its full digest. */
export interface CmaEnsured<H> {
  readonly handle: H;
  readonly digest: string;
  /** True when this call created it on the host; false when it came from the store or was adopted by name. */
  readonly created: boolean;
}

/**
 * The provisioning side of the `claude-managed-agents` provider: its {@link CmaVersions} and the
 * {@link Provisioner} over them with the instance's provision store (a memory store of its own
 * when none is bound). Built once per provider, with the configured client.
 */
export class CmaProvisioning {
  /** The versioned resources (environments, agents) of the configured account. */
  readonly resources: CmaVersions;
  /** The bookkeeping over them: store, tags, prune, teardown. */
  readonly provisioner: Provisioner;

  constructor(
    client: CmaClient,
    private readonly options: CmaProviderOptions,
    store: ProvisionStore | undefined,
    private readonly logger: Logger,
  ) {
    this.resources = new CmaVersions(client, { model: options.model, environmentName: options.environmentName, environment: options.environment }, logger);
    this.provisioner = new Provisioner(this.resources, store ?? new MemoryProvisionStore(), logger);
  }

  /** See `CmaAgentProvider.provision`. */
  provision(spec: AgentSpec, signal: AbortSignal): Promise<CmaHandle> {
    const o = this.options;
    return provisionCma(
      this.provisioner,
      this.resources,
      spec,
      { agentId: o.agentId, environmentId: o.environmentId, ...(o.agent !== undefined ? { agentRef: o.agent } : {}) },
      signal,
      this.logger,
    );
  }

  /** See `CmaAgentProvider.teardown`. */
  async teardown(handle: unknown, signal: AbortSignal): Promise<void> {
    if (!isCmaHandle(handle)) throw new AgentRxError('invalid_options', 'teardown needs the handle returned by provision');
    await teardownCma(this.provisioner, this.resources, handle, signal);
  }

  /** The agent version of `spec` (store, then host). */
  async ensureAgent(spec: AgentSpec, signal: AbortSignal): Promise<CmaEnsured<CmaAgentHandle>> {
    const e = await this.provisioner.ensure('agent', spec, signal);
    return { handle: e.handle as CmaAgentHandle, digest: e.digest, created: e.created };
  }

  /** The environment version of the configured environment (store, then host). */
  async ensureEnvironment(spec: AgentSpec, signal: AbortSignal): Promise<CmaEnsured<CmaEnvironmentHandle>> {
    const e = await this.provisioner.ensure('environment', spec, signal);
    return { handle: e.handle as CmaEnvironmentHandle, digest: e.digest, created: e.created };
  }
}
