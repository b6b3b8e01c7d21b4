import type { AgentRxConfig } from '../core/config/agentrx.config.js';
import { AgentRxConfigToken } from '../core/config/config-tokens.js';
import { AgentRxError } from '../core/errors.js';
import { SessionFactoryToken, SessionPlacementToken, type SessionFactory, type SessionPlacement } from '../core/plugin/session-placement.js';
import { InProcessPlacement } from '../core/session/in-process-placement.js';
import { SessionStore } from '../core/store/session-store.js';
import { ContainerModule, type Container } from '../core/util/inversify.js';
import { DistributedPlacement, type RemoteSessions } from './distributed-placement.js';
import { QueueLink } from './queue-link.js';
import { redisStoreConfigOf } from './redis-store/redis-store.config.js';
import { redisStoreModule } from './redis-store/redis-store.module.js';
import { StoreRegistration } from '../core/store/store-registration.js';
import { ConfigSections } from '../core/config/config-tokens.js';
import { RuntimeConfigToken, runtimeConfigSection, type RuntimeConfig } from './runtime.config.js';

/** DI token of the instance's link to the worker pool's queue ({@link RemoteSessions}: `rx.submit`, `rx.remote`). */
export const RemoteSessionsToken = Symbol('RemoteSessions');

/** What `submit`/`remote` answer when the config runs sessions in this process. */
const EMBEDDED: RemoteSessions & { close(): Promise<void> } = {
  submit: () => Promise.reject(notDistributed()),
  open: () => Promise.reject(notDistributed()),
  close: () => Promise.resolve(),
};

function notDistributed(): AgentRxError {
  return new AgentRxError(
    'invalid_config',
    "submit() needs runtime: { mode: 'distributed' } and store: { type: 'redis', url } in the config; use start() to run a session in this process",
  );
}

/**
 * The worker pool, one of the default modules: the Redis store engine (`store.type: 'redis'`;
 * ioredis is loaded at the store's first call), and, with `runtime.mode: 'distributed'`, the
 * placement that enqueues sessions for the workers (`agentrx worker`) and reads them from Redis
 * and the queue link `rx.submit` and `rx.remote` use (BullMQ is loaded at the first submission);
 * otherwise sessions stay in this process (the in-process placement). Workers run sessions from
 * the factory they are given (`startWorker`).
 */
/**
 * The queue link of `container` (`runtime.mode: 'distributed'`; the link refuses otherwise);
 * `invalid_config` when the distributed module is not loaded.
 */
export function remoteSessionsOf(container: Container): RemoteSessions & { close?(): Promise<void> } {
  if (!container.isBound(RemoteSessionsToken)) {
    throw new AgentRxError(
      'invalid_config',
      "submit() needs the distributed module (a default module: leave defaults on, or pass distributedModule in modules), runtime: { mode: 'distributed' } and store: { type: 'redis', url }",
    );
  }
  return container.get<RemoteSessions & { close?(): Promise<void> }>(RemoteSessionsToken);
}

export const distributedModule = new ContainerModule((options) => {
  options.bind<StoreRegistration>(StoreRegistration).toConstantValue(redisStoreModule.registration);
  options.bind(ConfigSections).toConstantValue(runtimeConfigSection);
  if (!options.isBound(RemoteSessionsToken)) {
    options
      .bind<RemoteSessions & { close(): Promise<void> }>(RemoteSessionsToken)
      .toDynamicValue((ctx) => {
        const runtime = ctx.get<RuntimeConfig>(RuntimeConfigToken);
        if (runtime.mode !== 'distributed') return EMBEDDED;
        const config = ctx.get<AgentRxConfig>(AgentRxConfigToken);
        return new QueueLink(
          redisStoreConfigOf(config.store, "runtime.mode 'distributed'"),
          ctx.get<SessionStore>(SessionStore),
          runtime.queueName,
          runtime.clientLeaseMs,
        );
      })
      .inSingletonScope()
      .onDeactivation((link) => link.close());
  }
  if (!options.isBound(SessionPlacementToken)) {
    options
      .bind<SessionPlacement>(SessionPlacementToken)
      .toDynamicValue((ctx) => {
        const store = ctx.get<SessionStore>(SessionStore);
        if (ctx.get<RuntimeConfig>(RuntimeConfigToken).mode !== 'distributed')
          return new InProcessPlacement(ctx.get<SessionFactory>(SessionFactoryToken), store);
        const redis = redisStoreConfigOf(ctx.get<AgentRxConfig>(AgentRxConfigToken).store, "runtime.mode 'distributed'");
        return new DistributedPlacement({
          sessions: ctx.get<RemoteSessions>(RemoteSessionsToken),
          store,
          redis: { url: redis.url, keyPrefix: redis.keyPrefix },
        });
      })
      .inSingletonScope()
      .onDeactivation((placement) => placement.close());
  }
});
