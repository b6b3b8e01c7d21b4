import { ConfigSections } from '../../core/config/config-tokens.js';
import { ContainerModule } from '../../core/util/inversify.js';
import { aguiHttpConfigSection } from './agui-http.config.js';

/**
 * Contributes the top-level `agui` config section, so a config file may carry the endpoint's
 * options (`{ "agui": { "port": 8080, "token": "${AGENTRX_TOKEN}" } }`) and have them validated
 * with the rest of the config. After `AgentRx.create({ modules: [aguiHttpModule] })` the
 * validated options (defaults when the section is absent) are bound under `AgUiHttpOptions`.
 */
export const aguiHttpModule = new ContainerModule((options) => {
  options.bind(ConfigSections).toConstantValue(aguiHttpConfigSection);
});
