import { ContainerModule } from '../util/inversify.js';
import type { StoreConfig } from '../config/store-config.js';
import { defineStore, type ProvisionFactory, type StoreFactory, StoreRegistration } from './store-registration.js';

/** A ContainerModule that registers one store engine, with that registration at hand (the CLI opens stores without a container). */
export type StoreModule = ContainerModule & { readonly registration: StoreRegistration };

/**
 * Registers a store engine: a ContainerModule binding its {@link StoreRegistration} (type,
 * section class, factory) under `StoreRegistration`, like `bindProvider` for providers. Nothing is
 * built until the configured `store.type` selects the engine. Adding an engine is one folder with
 * its section class and its store, and one such module passed to `AgentRx.create`. `provisions`
 * builds the engine's provision store (default: one in memory, see `defineStore`).
 *
 * ```ts
 * export const postgresStoreModule = bindStore('postgres', (s, { onRepair }) => new PostgresSessionStore(s.url, onRepair), PostgresStoreConfig);
 * ```
 */
export function bindStore<C extends StoreConfig>(type: string, factory: StoreFactory<C>, options: new () => C, provisions?: ProvisionFactory<C>): StoreModule {
  const registration = defineStore(type, factory, options, provisions);
  return Object.assign(new ContainerModule((bind) => void bind.bind<StoreRegistration>(StoreRegistration).toConstantValue(registration)), { registration });
}
