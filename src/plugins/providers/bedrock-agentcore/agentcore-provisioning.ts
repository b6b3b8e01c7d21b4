import { AgentRxError, isAgentRxError } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { AgentSpec } from '../../../core/model.js';
import { Provisioner } from '../../../core/provision/provisioner.js';
import type { ProvisionStore } from '../../../core/provision/provision-store.js';
import { MemoryProvisionStore } from '../../../core/store/memory/memory-provision-store.js';
import { AgentCoreProvisioner, type AgentCoreControlClientLike, type AgentCoreHarnessHandle } from './agentcore-provisioner.js';
import { AgentCoreVersions, HARNESS_KIND } from './agentcore-versions.js';
import type { AgentCoreProviderOptions } from './agentcore.config.js';

/** What `ensureHarness` returns: the harness handle and its version's full digest. */
export interface AgentCoreEnsured {
  readonly handle: AgentCoreHarnessHandle;
  readonly digest: string;
  /** True when this call created the harness; false when it came from the store or was adopted by name. */
  readonly created: boolean;
}

/**
 * The provisioning side of the `bedrock-agentcore` provider: its {@link AgentCoreVersions} and the
 * {@link Provisioner} over them with the instance's provision store (a memory store of its own
 * when none is bound). Built once per provider, on first use.
 */
export class AgentCoreProvisioning {
  /** The harnesses as versioned resources. */
  readonly resources: AgentCoreVersions;
  /** The bookkeeping over them: store, tags, prune, teardown. */
  readonly provisioner: Provisioner;

  constructor(
    control: AgentCoreProvisioner,
    private readonly options: AgentCoreProviderOptions,
    store: ProvisionStore | undefined,
    logger: Logger,
  ) {
    this.resources = new AgentCoreVersions(control, {
      executionRoleArn: options.executionRoleArn ?? '',
      harnessNamePrefix: options.harnessNamePrefix,
      environment: options.environment,
      environmentVariables: options.environmentVariables,
    });
    this.provisioner = new Provisioner(this.resources, store ?? new MemoryProvisionStore(), logger);
  }

  /**
   * With `harness: '<name>:<tag>'`: the stored harness the tag points at (`unknown_tag` /
   * `unknown_version` otherwise; never a fallback). Else the harness version of `spec` (store,
   * then the control plane); needs `executionRoleArn`, else `invalid_config`.
   */
  async provision(spec: AgentSpec, signal: AbortSignal): Promise<AgentCoreHarnessHandle> {
    if (this.options.harness !== undefined) {
      const entry = await this.provisioner.resolve(HARNESS_KIND, this.options.harness);
      return { ...(entry.handle as AgentCoreHarnessHandle), created: false, digest: entry.digest };
    }
    if (this.options.executionRoleArn === undefined) {
      throw new AgentRxError(
        'invalid_config',
        'bedrock-agentcore: no harness to invoke: set providers.bedrock-agentcore.harnessArn (an existing harness), harness (a tagged one), or executionRoleArn so that a harness is created from the agent',
        { path: 'providers.bedrock-agentcore.harnessArn' },
      );
    }
    return (await this.ensureHarness(spec, signal)).handle;
  }

  /** The harness version of `spec`: its handle (`created` as this call found it) and digest. */
  async ensureHarness(spec: AgentSpec, signal: AbortSignal): Promise<AgentCoreEnsured> {
    const e = await this.provisioner.ensure(HARNESS_KIND, spec, signal);
    return { handle: { ...(e.handle as AgentCoreHarnessHandle), created: e.created, digest: e.digest }, digest: e.digest, created: e.created };
  }

  /**
   * Deletes the harness `handle` created (a harness from the store, adopted by name or configured
   * is left alone): through the provisioner (host, then store eviction) when the store knows it,
   * else on the host alone. A missing harness counts as deleted.
   */
  async teardown(handle: AgentCoreHarnessHandle, signal: AbortSignal): Promise<void> {
    if (handle.harnessId === undefined || !handle.created) return;
    if (handle.digest !== undefined) {
      try {
        await this.provisioner.teardown(HARNESS_KIND, handle.digest, signal);
        return;
      } catch (e) {
        if (!isAgentRxError(e, 'unknown_version') && !isAgentRxError(e, 'store_error')) throw e;
      }
    }
    await this.resources.remove(HARNESS_KIND, handle.harnessId, signal);
  }
}

/** The control-plane provisioner for `options`, sending through `send` (the provider's lazily built SDK client). */
export function controlProvisioner(options: AgentCoreProviderOptions, send: AgentCoreControlClientLike['send'], logger: Logger): AgentCoreProvisioner {
  return new AgentCoreProvisioner(
    { send },
    {
      executionRoleArn: options.executionRoleArn ?? '',
      harnessNamePrefix: options.harnessNamePrefix,
      provisionTimeoutMs: options.provisionTimeoutMs,
      pollIntervalMs: options.pollIntervalMs,
      environment: options.environment,
      environmentVariables: options.environmentVariables,
    },
    logger,
  );
}
