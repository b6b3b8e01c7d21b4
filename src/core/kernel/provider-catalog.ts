import { AgentRxError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentProvider } from '../plugin/agent-provider.js';
import type { LifecycleParticipant } from '../plugin/lifecycle-participant.js';
import type { ProviderRegistration } from '../plugin/provider-registration.js';
import { withTimeout } from '../util/async.js';
import { startBound, type Participant } from './kernel.js';

/** How the catalog builds a registered provider. */
export type ResolveProvider = (registration: ProviderRegistration) => AgentProvider;

/**
 * Every provider the container knows, by id, built on first use: a registered provider (see
 * `bindProvider`) is resolved only when a session selects it, and started then (its `start`
 * hook, bounded by the providers phase timeout, or the provider's own longer `startTimeoutMs`) if
 * the kernel's start phase is already over.
 * Providers bound as instances under `AgentProvider` (a host's own) are there from the start.
 * `resolved` is the kernel's providers phase: what was built is stopped at `rx.stop()`.
 */
export class ProviderCatalog {
  /** The providers built so far, in the order they were built (the kernel's providers phase). */
  readonly resolved: (AgentProvider & LifecycleParticipant)[] = [];
  private readonly registrations = new Map<string, ProviderRegistration>();
  private readonly starting = new Map<string, Promise<void>>();
  private kernelStarted = false;

  constructor(
    registrations: readonly ProviderRegistration[],
    instances: readonly AgentProvider[],
    private readonly resolve: ResolveProvider,
    private readonly startTimeoutMs: number,
    private readonly logger: Logger,
  ) {
    for (const p of instances) this.add(p.id, p, className(p));
    for (const r of registrations) {
      if (this.registrations.has(r.id) || this.resolved.some((p) => p.id === r.id)) {
        const other = this.registrations.get(r.id)?.service.name ?? className(this.resolved.find((p) => p.id === r.id)!);
        throw new AgentRxError(
          'duplicate_plugin',
          `two provider plugins share the id '${r.id}': ${other} and ${r.service.name}; rename one or unbind the other`,
          { point: 'provider', id: r.id },
        );
      }
      this.registrations.set(r.id, r);
    }
    logger.debug('known provider plugins', { ids: this.ids });
  }

  /** Every known provider id, built or not. */
  get ids(): string[] {
    return [...new Set([...this.resolved.map((p) => p.id), ...this.registrations.keys()])];
  }

  /** The provider with this id if it has been built. */
  get(id: string): AgentProvider | undefined {
    return this.resolved.find((p) => p.id === id);
  }

  /** The provider with this id, built now if needed; `unknown_plugin` listing the known ids otherwise. */
  require(id: string): AgentProvider {
    const built = this.get(id);
    if (built) return built;
    const registration = this.registrations.get(id);
    if (!registration) {
      throw new AgentRxError('unknown_plugin', `no provider plugin with id '${id}'; known: ${this.ids.join(', ') || '(none)'}`, { point: 'provider', id });
    }
    let provider: AgentProvider;
    try {
      provider = this.resolve(registration);
    } catch (e) {
      throw new AgentRxError(
        'invalid_config',
        `cannot build provider '${id}': ${(e as Error).message}; is its section present under providers.${id}?`,
        undefined,
        { cause: e },
      );
    }
    if (provider.id !== id)
      throw new AgentRxError('invalid_config', `provider ${registration.service.name} is registered as '${id}' but its id is '${provider.id}'`);
    this.add(id, provider, registration.service.name);
    return provider;
  }

  /** The kernel's start phase ran: providers built from now on are started by `ready`. */
  markStarted(): void {
    this.kernelStarted = true;
  }

  /** Resolves once `provider` may be used: its `start` hook ran (once) if it was built after the kernel started. */
  ready(provider: AgentProvider): Promise<void> {
    if (!this.kernelStarted) return Promise.resolve();
    let p = this.starting.get(provider.id);
    if (!p) {
      const participant = provider as AgentProvider & Participant;
      p = withTimeout(
        Promise.resolve().then(() => participant.start?.()),
        startBound(participant, this.startTimeoutMs),
        `start provider ${provider.id}`,
      ).catch((e: unknown) => {
        this.logger.error(`start provider ${provider.id} failed`, { error: (e as Error).message });
      });
      this.starting.set(provider.id, p);
    }
    return p;
  }

  private add(id: string, provider: AgentProvider, name: string): void {
    if (this.resolved.some((p) => p.id === id && p !== provider)) {
      throw new AgentRxError(
        'duplicate_plugin',
        `two provider plugins share the id '${id}': ${className(this.get(id)!)} and ${name}; rename one or unbind the other`,
        { point: 'provider', id },
      );
    }
    if (!this.resolved.includes(provider)) this.resolved.push(provider);
    // Providers built before the kernel's start phase are started by it.
    if (!this.kernelStarted) this.starting.set(id, Promise.resolve());
  }
}

function className(p: object): string {
  return p.constructor?.name ?? 'anonymous';
}
