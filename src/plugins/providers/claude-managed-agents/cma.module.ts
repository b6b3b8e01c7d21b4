import { ConfigSections } from '../../../core/config/config-tokens.js';
import { bindPlugin } from '../../../core/di/bind-plugin.js';
import { ContainerModule } from '../../../core/di/inversify.js';
import { AgentProvider } from '../../../core/plugin/agent-provider.js';
import { cmaConfigSection } from './cma.config.js';
import { CmaAgentProvider } from './cma.provider.js';

/**
 * Binds the `claude-managed-agents` provider as an `AgentProvider` (one singleton) and contributes
 * its config section (`providers.claude-managed-agents`). The facade binds the validated
 * `CmaProviderOptions` (only when the section is valid; the provider injects it `@optional()` and
 * rejects calls with `invalid_config` without it), `HttpClientFactory` and `Logger`. Loading it
 * never breaks a config that selects another provider.
 */
export const cmaProviderModule = new ContainerModule((options) => {
  bindPlugin(options, CmaAgentProvider, AgentProvider);
  options.bind(ConfigSections).toConstantValue(cmaConfigSection);
});
