import { bindPlugin } from '../../../core/di/bind-plugin.js';
import { ContainerModule } from '../../../core/di/inversify.js';
import { ConfigSections } from '../../../core/config/config-tokens.js';
import { AgentProvider } from '../../../core/plugin/agent-provider.js';
import { localConfigSection } from './local.config.js';
import { LocalAgentProvider } from './local.provider.js';

/**
 * Binds the `local` provider as an `AgentProvider` (one singleton) and contributes its config
 * section (`providers.local`). The facade binds the validated `LocalProviderOptions`,
 * `HttpClientFactory` and `Logger`.
 */
export const localProviderModule = new ContainerModule((options) => {
  bindPlugin(options, LocalAgentProvider, AgentProvider);
  options.bind(ConfigSections).toConstantValue(localConfigSection);
});
