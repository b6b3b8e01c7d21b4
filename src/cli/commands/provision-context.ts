import { AgentRx } from '../../agentrx.js';
import { AgentRxError } from '../../core/errors.js';
import { ProviderCatalog } from '../../core/kernel/provider-catalog.js';
import type { AgentSpec } from '../../core/model.js';
import type { Provisioner } from '../../core/provision/provisioner.js';
import type { CliIo } from '../cli-io.js';
import { pathFrom } from '../flags.js';
import { demoTools, readConfig } from '../run-config.js';
import { storeLocation } from '../state-dir.js';
import { loadUserPlugins } from '../user-modules.js';

/** One family of provisioned resources the CLI manages (`agentrx agents`, `environments`, `harnesses`). */
export interface ResourceFamily {
  /** The command (`agents`). */
  readonly command: string;
  /** The provider whose resources they are. */
  readonly provider: string;
  /** The resource kind within the provider. */
  readonly kind: string;
  /** What one is called in messages (`agent`). */
  readonly noun: string;
  /** The default base name from the validated config (the agent's name, the environment's base). */
  readonly defaultBase: (rx: AgentRx) => string;
}

/** The flags every provisioning command reads. */
export interface ProvisionFlags {
  config?: string;
  store?: string;
  json?: boolean;
  module?: string[];
  demoTools?: boolean;
}

/** What a provisioning command works with: the instance (stopped by `close`), the family's provisioner, the agent spec. */
export interface ProvisionContext {
  readonly rx: AgentRx;
  readonly provisioner: Provisioner;
  /** The agent as a run of this config offers it to the host (its tools included). */
  readonly spec: AgentSpec;
  /** Ends with the run timeout of the config, or when the invocation is stopped. */
  readonly signal: AbortSignal;
  /** Where the provision store is (for messages). */
  readonly where: string;
}

/** A provider that exposes the provisioner of its versioned resources. */
interface VersionedProvider {
  versioned(): Provisioner;
}

/**
 * Builds an instance from the config file with the family's provider selected (so its section is
 * validated and every problem listed) and the provision store of `--store <dir>` (a file store),
 * else the config's `store` section, else the file store in the state directory (as `agentrx
 * sessions` reads it). Runs `body` with it, then stops it.
 */
export async function withProvisioning<T>(family: ResourceFamily, flags: ProvisionFlags, io: CliIo, body: (ctx: ProvisionContext) => Promise<T>): Promise<T> {
  const base = flags.config ? await readConfig(flags.config, io) : {};
  const { section, where } = storeSection(base, flags.store, io);
  const config: Record<string, unknown> = { ...structuredClone(base), provider: family.provider, store: section };
  const user = await loadUserPlugins(flags.module ?? [], base, flags.config, io.cwd);
  const rx = await AgentRx.create({
    config,
    env: io.env,
    modules: [...demoTools(flags.demoTools, io.cwd), ...user.modules],
    tools: user.tools,
    consumers: user.consumers,
  });
  try {
    const provider: object = rx.container.get(ProviderCatalog).require(family.provider);
    if (!hasVersions(provider)) {
      throw new AgentRxError('invalid_options', `provider '${family.provider}' has no versioned ${family.noun}s`);
    }
    const a = rx.config.agent;
    const tools = rx.tools;
    const spec: AgentSpec = { name: a.name, model: a.model, systemPrompt: a.systemPrompt, tools };
    const signals = [AbortSignal.timeout(rx.config.limits.runTimeoutMs), ...(io.signal ? [io.signal] : [])];
    return await body({ rx, provisioner: provider.versioned(), spec, signal: AbortSignal.any(signals), where });
  } finally {
    await rx.stop();
  }
}

/** The `store` section the command uses, and where it is. */
function storeSection(config: Record<string, unknown>, flag: string | undefined, io: CliIo): { section: unknown; where: string } {
  if (flag !== undefined) {
    const dir = pathFrom(io.cwd, flag);
    return { section: { type: 'file', dir }, where: dir };
  }
  const section = config['store'];
  if (section !== undefined) {
    const s = section as { type?: unknown; dir?: unknown };
    return { section, where: typeof s?.dir === 'string' ? s.dir : `the configured ${typeof s?.type === 'string' ? s.type : 'memory'} store` };
  }
  const loc = storeLocation(undefined, io.env, io.cwd);
  if (!loc)
    throw new AgentRxError(
      'invalid_options',
      'no state directory for the provision store: pass --store <dir>, or set AGENTRX_STATE_DIR, XDG_STATE_HOME or HOME',
    );
  return { section: { type: 'file', dir: loc.dir }, where: loc.dir };
}

/** True for a provider whose provisioned resources are versioned (`versioned()`: Managed Agents, AgentCore). */
function hasVersions(provider: object): provider is VersionedProvider {
  return typeof (provider as Partial<VersionedProvider>).versioned === 'function';
}
