import type { Newable } from '../util/inversify.js';
import type { AgentProvider } from './agent-provider.js';

/**
 * A provider a module makes available by id without building it: the facade resolves `service`
 * only when a session selects `id` (the configured `provider`, or a session's `provider` option),
 * so an unused provider needs no config section and is never started. Bound with
 * `toConstantValue`, one per provider, by `bindProvider`.
 */
export const ProviderRegistration = Symbol('ProviderRegistration');

export interface ProviderRegistration {
  /** The provider's stable id (what `provider` in the config names). */
  readonly id: string;
  /** The class, bound to itself in singleton scope by the same module. */
  readonly service: Newable<AgentProvider>;
  /**
   * The host's name in telemetry: OpenTelemetry's GenAI `gen_ai.provider.name` (a well-known
   * value such as `anthropic`, `aws.bedrock`, `openai`). Default: the id.
   */
  readonly telemetryName?: string;
}

/** What a provider module may say of its provider besides its id and class (see {@link ProviderRegistration}). */
export interface ProviderRegistrationExtras {
  readonly telemetryName?: string;
}
