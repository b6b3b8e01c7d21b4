import { Subject } from '../util/rxjs.js';
import type { AgentRxConfig } from '../config/agentrx.config.js';
import { AgentRxConfigToken } from '../config/config-tokens.js';
import { ProviderCatalog } from '../kernel/provider-catalog.js';
import { PluginRegistry } from '../kernel/plugin-registry.js';
import { openProvisionStore } from '../provision/open-provision-store.js';
import type { ProvisionStore } from '../provision/provision-store.js';
import { ProvisionStoreToken } from '../provision/provision-token.js';
import { Logger, StderrLogger } from '../logger.js';
import { AgentProvider } from '../plugin/agent-provider.js';
import { EventConsumer } from '../plugin/event-consumer.js';
import { ProviderRegistration } from '../plugin/provider-registration.js';
import { ToolHandler } from '../plugin/tool-handler.js';
import { ToolSource } from '../plugin/tool-source.js';
import { ConsumerHub, type ConsumerError } from '../session/consumer-hub.js';
import { coreStores } from '../store/core-stores.js';
import { openStore } from '../store/open-store.js';
import { SessionStore } from '../store/session-store.js';
import { StoreRegistration } from '../store/store-registration.js';
import { ToolDispatcher } from '../tools/tool-dispatcher.js';
import { ToolRegistryImpl } from '../tools/tool-registry.js';
import { ContainerModule, type ResolutionContext, type ServiceIdentifier } from '../util/inversify.js';

/**
 * The tools, by name: a `ToolRegistryImpl` merging the bound `ToolHandler`s with the current tools
 * of every bound `ToolSource` (it answers `all`/`ids`/`get`/`require` like a `PluginRegistry`).
 */
export const ToolRegistry = Symbol('ToolRegistry');
/** The event consumers, by id (`PluginRegistry<EventConsumer>`). */
export const ConsumerRegistry = Symbol('ConsumerRegistry');
/** Where every session's consumer faults are published (`Subject<ConsumerError>`); `rx.consumerErrors$` reads it. */
export const ConsumerErrors = Symbol('ConsumerErrors');

/**
 * The core services of one AgentRx instance, each a lazy singleton built from the validated config
 * (`AgentRxConfigToken`): Logger, SessionStore (opened through the `StoreRegistration` that
 * `store.type` names; memory and file are registered here), the ProvisionStore of that same
 * section (`ProvisionStoreToken`), the tool and consumer registries,
 * ToolDispatcher, ConsumerHub and the ProviderCatalog. Loaded last by `AgentRx.create`, and binding only what is
 * not bound yet, so a host module can bind its own (a Redis SessionStore, a Logger…).
 */
export const coreModule = new ContainerModule((options) => {
  const bindOnce = <T>(token: ServiceIdentifier<T>, build: (ctx: ResolutionContext, config: AgentRxConfig) => T): void => {
    if (!options.isBound(token))
      options
        .bind<T>(token)
        .toDynamicValue((ctx) => build(ctx, ctx.get<AgentRxConfig>(AgentRxConfigToken)))
        .inSingletonScope();
  };
  bindOnce<Logger>(Logger, (_ctx, config) => new StderrLogger(config.logLevel));
  // The built-in engines; others come with their modules (bindStore), loaded before this one.
  for (const registration of coreStores) options.bind<StoreRegistration>(StoreRegistration).toConstantValue(registration);
  if (!options.isBound(SessionStore)) {
    options
      .bind<SessionStore>(SessionStore)
      .toDynamicValue((ctx) => {
        const logger = ctx.get<Logger>(Logger);
        const onRepair = (where: string, what: string): void => logger.warn(`session store: ${what} (${where})`);
        return openStore(ctx.get<AgentRxConfig>(AgentRxConfigToken).store, ctx.getAll<StoreRegistration>(StoreRegistration), { onRepair });
      })
      .inSingletonScope()
      // A store with connections (Redis) closes them when the instance stops.
      .onDeactivation(async (store) => {
        await store.close?.();
      });
  }
  if (!options.isBound(ProvisionStoreToken)) {
    options
      .bind<ProvisionStore>(ProvisionStoreToken)
      .toDynamicValue((ctx) => {
        const logger = ctx.get<Logger>(Logger);
        const onRepair = (where: string, what: string): void => logger.warn(`provision store: ${what} (${where})`);
        return openProvisionStore(ctx.get<AgentRxConfig>(AgentRxConfigToken).store, ctx.getAll<StoreRegistration>(StoreRegistration), { onRepair });
      })
      .inSingletonScope()
      .onDeactivation(async (store) => {
        await store.close?.();
      });
  }
  bindOnce(ToolRegistry, (ctx) => new ToolRegistryImpl(ctx.getAll<ToolHandler>(ToolHandler), ctx.getAll<ToolSource>(ToolSource), ctx.get<Logger>(Logger)));
  bindOnce(
    ConsumerRegistry,
    (ctx) => new PluginRegistry<EventConsumer>('consumer', ctx.getAll<EventConsumer>(EventConsumer), (c) => c.id, ctx.get<Logger>(Logger)),
  );
  // The live registry, not a snapshot: a tool a source adds later is found at call time.
  bindOnce(ToolDispatcher, (ctx) => new ToolDispatcher(ctx.get<ToolRegistryImpl>(ToolRegistry)));
  bindOnce(ConsumerErrors, () => new Subject<ConsumerError>());
  bindOnce(
    ConsumerHub,
    (ctx, config) =>
      new ConsumerHub(ctx.get<PluginRegistry<EventConsumer>>(ConsumerRegistry).all, config.consumers, ctx.get<Subject<ConsumerError>>(ConsumerErrors)),
  );
  bindOnce(
    ProviderCatalog,
    (ctx, config) =>
      new ProviderCatalog(
        ctx.getAll<ProviderRegistration>(ProviderRegistration),
        ctx.getAll<AgentProvider>(AgentProvider),
        (r) => ctx.get(r.service),
        config.timeouts.providersPhaseMs,
        ctx.get<Logger>(Logger),
      ),
  );
});
