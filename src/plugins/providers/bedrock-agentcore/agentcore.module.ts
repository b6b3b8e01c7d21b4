import { bindProvider } from '../../../core/di/bind-plugin.js';
import { ContainerModule } from '../../../core/util/inversify.js';
import { ConfigSections } from '../../../core/config/config-tokens.js';
import { agentCoreConfigSection } from './agentcore.config.js';
import { AgentCoreAgentProvider } from './agentcore.provider.js';

/**
 * Registers the `bedrock-agentcore` provider by id (built and started only when a session selects
 * it) and contributes its config section (`providers.bedrock-agentcore`). The facade binds the
 * validated `AgentCoreProviderOptions` and the `Logger`. Loading it never breaks a config that
 * selects another provider.
 */
export const agentCoreProviderModule = new ContainerModule((options) => {
  bindProvider(options, 'bedrock-agentcore', AgentCoreAgentProvider);
  options.bind(ConfigSections).toConstantValue(agentCoreConfigSection);
});
