import { ConfigSections } from '../../../core/config/config-tokens.js';
import { bindProvider } from '../../../core/di/bind-plugin.js';
import { ContainerModule } from '../../../core/util/inversify.js';
import { cmaConfigSection } from './cma.config.js';
import { CmaAgentProvider } from './cma.provider.js';
import { CMA_PROVIDER_ID } from '../provider-ids.js';

/** The id of the provider for Claude Managed Agents (what `provider` in the config names). */
export { CMA_PROVIDER_ID } from '../provider-ids.js';

/**
 * Registers the `claude-managed-agents` provider by id (built and started only when a session
 * selects it) and contributes its config section (`providers.claude-managed-agents`), which is
 * required when this provider is the configured one. The facade binds the validated
 * `CmaProviderOptions`, `HttpClientFactory` and `Logger`. Loading it never breaks a config that
 * selects another provider.
 */
export const cmaProviderModule = new ContainerModule((options) => {
  bindProvider(options, CMA_PROVIDER_ID, CmaAgentProvider, { telemetryName: 'anthropic' });
  options.bind(ConfigSections).toConstantValue(cmaConfigSection);
});
