import { AgentRxError, toAgentRxError } from '../errors.js';
import type { AgentSpec } from '../model.js';
import type { AgentProvider } from '../plugin/agent-provider.js';

/**
 * The provider-side resources of one instance: each provider provisions its agent once
 * (content-addressed by the provider; a failed attempt is forgotten so the next session tries
 * again), and `teardown` removes what was provisioned.
 */
export class Provisions {
  private readonly handles = new Map<string, Promise<unknown>>();

  /** The handle of `provider`'s agent for `spec`, provisioned at the first call (bounded by `timeoutMs`). */
  provision(provider: AgentProvider, spec: AgentSpec, timeoutMs: number): Promise<unknown> {
    if (!provider.provision) return Promise.resolve(undefined);
    let h = this.handles.get(provider.id);
    if (!h) {
      h = provider.provision(spec, AbortSignal.timeout(timeoutMs));
      h.catch(() => this.handles.delete(provider.id));
      this.handles.set(provider.id, h);
    }
    return h;
  }

  /**
   * Removes every provisioned resource through its provider (`providerOf` finds it by id), and
   * forgets it. Every provider is tried; failures are reported together in one `provider_error`.
   */
  async teardown(providerOf: (id: string) => AgentProvider | undefined, signal: AbortSignal): Promise<void> {
    const failures: string[] = [];
    for (const [id, pending] of [...this.handles]) {
      this.handles.delete(id);
      const provider = providerOf(id);
      if (!provider?.teardown) continue;
      let handle: unknown;
      try {
        handle = await pending;
      } catch {
        continue; // provisioning failed: nothing was created
      }
      try {
        await provider.teardown(handle, signal);
      } catch (e) {
        failures.push(`${id}: ${toAgentRxError(e).message}`);
      }
    }
    if (failures.length > 0) {
      throw new AgentRxError('provider_error', `teardown failed for ${failures.length} provider(s):\n${failures.map((f) => `- ${f}`).join('\n')}`, {
        failures,
      });
    }
  }
}
