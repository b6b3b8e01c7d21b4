import type { AgentProvider } from '../plugin/agent-provider.js';
import { ProviderRegistration, type ProviderRegistrationExtras } from '../plugin/provider-registration.js';
import { ContainerModule, type ContainerModuleLoadOptions, type Newable, type ServiceIdentifier } from '../util/inversify.js';

/**
 * Binds `impl` to itself in singleton scope, then each extension-point token to that one
 * instance (Theia's `bindToolProvider` pattern): one shared instance per plugin.
 */
export function bindPlugin<T>(options: ContainerModuleLoadOptions, impl: Newable<T>, ...tokens: ServiceIdentifier<unknown>[]): void {
  options.bind(impl).toSelf().inSingletonScope();
  for (const token of tokens) options.bind(token).toService(impl);
}

/** A ContainerModule that binds each class under `token` (used for host-supplied tools/consumers). */
export function pluginModule(token: ServiceIdentifier<unknown>, ...impls: Newable<unknown>[]): ContainerModule {
  return new ContainerModule((options) => {
    for (const impl of impls) bindPlugin(options, impl, token);
  });
}

/**
 * Registers a provider class under its id without resolving it: one singleton, built only when a
 * session selects `id` (see {@link ProviderRegistration}).
 */
export function bindProvider(options: ContainerModuleLoadOptions, id: string, impl: Newable<AgentProvider>, extras: ProviderRegistrationExtras = {}): void {
  options.bind(impl).toSelf().inSingletonScope();
  options.bind<ProviderRegistration>(ProviderRegistration).toConstantValue({ id, service: impl, ...extras });
}
