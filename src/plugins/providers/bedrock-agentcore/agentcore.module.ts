import { bindProvider } from '../../../core/di/bind-plugin.js';
import { ContainerModule } from '../../../core/util/inversify.js';
import { ConfigSections } from '../../../core/config/config-tokens.js';
import { agentCoreConfigSection } from './agentcore.config.js';
import { AgentCoreAgentProvider } from './agentcore.provider.js';
import { AGENTCORE_PROVIDER_ID } from '../provider-ids.js';

/** The id of the provider for Bedrock AgentCore (what `provider` in the config names). */
export { AGENTCORE_PROVIDER_ID } from '../provider-ids.js';

/**
 * Registers the `bedrock-agentcore` provider by id (built and started only when a session selects
 * it) and contributes its config section (`providers.bedrock-agentcore`). The facade binds the
 * validated `AgentCoreProviderOptions` and the `Logger`. Loading it never breaks a config that
 * selects another provider.
 */
export const agentCoreProviderModule = new ContainerModule((options) => {
  bindProvider(options, AGENTCORE_PROVIDER_ID, AgentCoreAgentProvider, { telemetryName: 'aws.bedrock' });
  options.bind(ConfigSections).toConstantValue(agentCoreConfigSection);
});
