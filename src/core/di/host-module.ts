import { plainToInstance } from '../util/class-transformer.js';
import { validateSync } from '../util/class-validator.js';
import type { ConfigSection } from '../config/config-section.js';
import { AgentRxError } from '../errors.js';
import { AgentProvider } from '../plugin/agent-provider.js';
import { EventConsumer } from '../plugin/event-consumer.js';
import { ProviderRegistration } from '../plugin/provider-registration.js';
import { SessionFactoryToken, SessionPlacementToken, type SessionFactory, type SessionPlacement } from '../plugin/session-placement.js';
import { ToolHandler } from '../plugin/tool-handler.js';
import { InProcessPlacement } from '../session/in-process-placement.js';
import { SessionStore } from '../store/session-store.js';
import { Container, ContainerModule, type Newable } from '../util/inversify.js';
import { bindPlugin } from './bind-plugin.js';

/** What a host passes to `AgentRx.create` as classes or instances. */
export interface HostParts {
  readonly tools?: readonly (Newable<ToolHandler> | ToolHandler)[];
  readonly consumers?: readonly (Newable<EventConsumer> | EventConsumer)[];
  readonly providers?: readonly (Newable<AgentProvider> | AgentProvider)[];
}

/**
 * Binds a section's validated instance under its token; a section that was neither given nor
 * required gets its defaults when they are valid, and stays unbound otherwise (an `@optional()`
 * injection sees undefined). The defaults are built and validated when the token is first
 * resolved or checked, not at `create`: most sections of an instance are never read.
 */
export function bindSection(container: Container, section: ConfigSection, given: object | undefined): void {
  if (given !== undefined) {
    container.bind(section.token).toConstantValue(given);
    return;
  }
  let defaults: { value: object | undefined } | undefined;
  const valid = (): object | undefined => (defaults ??= { value: defaultsOf(section) }).value;
  container
    .bind(section.token)
    .toDynamicValue(() => valid())
    .inSingletonScope()
    .when(() => valid() !== undefined);
}

/** A section's default instance, or undefined when its defaults alone are not valid. */
function defaultsOf(section: ConfigSection): object | undefined {
  const value = plainToInstance(section.options, {}, { exposeDefaultValues: true });
  return validateSync(value, { forbidUnknownValues: false }).length === 0 ? value : undefined;
}

/**
 * The provider ids known before the config is validated (bound by `bindProvider`, or instances
 * passed as `providers`), so that an unknown `provider` is listed with the other config issues.
 * Undefined when a provider is bound as a class under `AgentProvider`: its id is known only once
 * it is built, which needs the config.
 */
export function knownProviderIds(container: Container, opts: HostParts): string[] | undefined {
  if (container.isBound(AgentProvider) || (opts.providers ?? []).some((p) => typeof p === 'function')) return undefined;
  const registered = container.isBound(ProviderRegistration) ? container.getAll<ProviderRegistration>(ProviderRegistration).map((r) => r.id) : [];
  return [...registered, ...(opts.providers ?? []).map((p) => (p as AgentProvider).id)];
}

/** Binds what the caller passed to `create` as classes or instances. */
export function hostModule(opts: HostParts): ContainerModule {
  return new ContainerModule((options) => {
    for (const t of opts.tools ?? []) {
      if (typeof t === 'function') bindPlugin(options, t, ToolHandler);
      else options.bind(ToolHandler).toConstantValue(t);
    }
    for (const c of opts.consumers ?? []) {
      if (typeof c === 'function') bindPlugin(options, c, EventConsumer);
      else options.bind(EventConsumer).toConstantValue(c);
    }
    for (const p of opts.providers ?? []) {
      if (typeof p === 'function') bindPlugin(options, p, AgentProvider);
      else options.bind(AgentProvider).toConstantValue(p);
    }
  });
}

/**
 * Binds the {@link SessionFactory} of an instance (placements and workers start sessions of this
 * process through it; `instance()` is the facade once built) and, when no module bound a
 * placement (the distributed module does), the in-process one.
 */
export function bindSessionFactory(container: Container, instance: () => SessionFactory | undefined): void {
  const factory: SessionFactory = {
    start: (opts) => {
      const host = instance();
      if (!host) throw new AgentRxError('session_closed', 'this AgentRx instance is still starting');
      return host.start(opts);
    },
  };
  container.bind<SessionFactory>(SessionFactoryToken).toConstantValue(factory);
  if (!container.isBound(SessionPlacementToken)) {
    container
      .bind<SessionPlacement>(SessionPlacementToken)
      .toDynamicValue((ctx) => new InProcessPlacement(factory, ctx.get<SessionStore>(SessionStore)))
      .inSingletonScope();
  }
}
