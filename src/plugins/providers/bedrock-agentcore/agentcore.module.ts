import { bindPlugin } from '../../../core/di/bind-plugin.js';
import { ContainerModule } from '../../../core/di/inversify.js';
import { ConfigSections } from '../../../core/config/config-tokens.js';
import { AgentProvider } from '../../../core/plugin/agent-provider.js';
import { agentCoreConfigSection } from './agentcore.config.js';
import { AgentCoreAgentProvider } from './agentcore.provider.js';

/**
 * Binds the `bedrock-agentcore` provider as an `AgentProvider` (one singleton) and contributes
 * its config section (`providers.bedrock-agentcore`). The facade binds the validated
 * `AgentCoreProviderOptions` (all options have valid defaults, so loading this module never
 * breaks a config that selects another provider) and the `Logger`.
 */
export const agentCoreProviderModule = new ContainerModule((options) => {
  bindPlugin(options, AgentCoreAgentProvider, AgentProvider);
  options.bind(ConfigSections).toConstantValue(agentCoreConfigSection);
});
