import { aguiHttpModule } from './servers/agui-http/agui-http.module.js';
import { ContainerModule } from './core/util/inversify.js';
import { HttpClientFactory, HttpClientFactoryImpl } from './core/http/http-client-factory.js';
import { mcpModule } from './plugins/mcp/mcp.module.js';
import { agentCoreProviderModule } from './plugins/providers/bedrock-agentcore/agentcore.module.js';
import { cmaProviderModule } from './plugins/providers/claude-managed-agents/cma.module.js';
import { localProviderModule } from './plugins/providers/local/local.module.js';
import { distributedModule } from './distributed/distributed.module.js';
import { BUILTIN_PROVIDER_IDS } from './plugins/providers/provider-ids.js';

/** The ids of the built-in providers (each declared by its provider's module); `AgentRxConfig.provider` picks one, or the id of a provider the host registers. */
export type ProviderId = (typeof BUILTIN_PROVIDER_IDS)[number];

export { BUILTIN_PROVIDER_IDS };

/** Core services every provider may inject; a host module may bind its own first. */
export const coreServicesModule = new ContainerModule((options) => {
  if (!options.isBound(HttpClientFactory)) options.bind(HttpClientFactory).to(HttpClientFactoryImpl).inSingletonScope();
});

/**
 * The built-in modules loaded by `AgentRx.create` unless `defaults: false`: the three providers,
 * the MCP tool source (it loads the MCP SDK only when `mcp.servers` lists a server), the `agui`
 * config section (so the config file of `agentrx serve` is valid for every command), and the worker
 * pool (`distributedModule`: the Redis store engine and the pool's placement; ioredis and BullMQ
 * load only when the config uses them). The memory and file
 * engines register from core.
 */
export function defaultModules(): ContainerModule[] {
  return [coreServicesModule, localProviderModule, cmaProviderModule, agentCoreProviderModule, mcpModule, aguiHttpModule, distributedModule];
}
