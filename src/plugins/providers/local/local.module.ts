import { bindProvider } from '../../../core/di/bind-plugin.js';
import { ContainerModule } from '../../../core/util/inversify.js';
import { ConfigSections } from '../../../core/config/config-tokens.js';
import { localConfigSection } from './local.config.js';
import { LocalAgentProvider } from './local.provider.js';
import { LOCAL_PROVIDER_ID } from '../provider-ids.js';

/** The id of the provider for an OpenAI-compatible chat endpoint (what `provider` in the config names). */
export { LOCAL_PROVIDER_ID } from '../provider-ids.js';

/**
 * Registers the `local` provider by id (built and started only when a session selects it) and
 * contributes its config section (`providers.local`). The facade binds the validated
 * `LocalProviderOptions`, `HttpClientFactory` and `Logger`.
 */
export const localProviderModule = new ContainerModule((options) => {
  bindProvider(options, LOCAL_PROVIDER_ID, LocalAgentProvider, { telemetryName: 'openai' });
  options.bind(ConfigSections).toConstantValue(localConfigSection);
});
