import './core/util/reflect-metadata.js';
import { Subject, type Observable } from './core/util/rxjs.js';
import { ConsumerHub, type ConsumerError } from './core/session/consumer-hub.js';
import { ConsumerErrors, ConsumerRegistry, ToolRegistry, coreModule } from './core/di/core-module.js';
import type { Artifacts } from './core/artifacts/artifacts.js';
import { providerArtifacts } from './core/artifacts/provider-artifacts.js';
import { ProviderCatalog } from './core/kernel/provider-catalog.js';
import { attachLog, type LogAttachment } from './core/session/log-attachment.js';
import { retentionFromConfig, startRetention } from './core/store/retention.js';
import { AgentRxConfigToken, ConfigSections } from './core/config/config-tokens.js';
import type { AgentRxConfig } from './core/config/agentrx.config.js';
import type { RemoteSession } from './distributed/remote-session.js';
import { remoteSessionsOf } from './distributed/distributed.module.js';
import type { RemoteSessions } from './distributed/distributed-placement.js';
import type { SubmitOptions } from './distributed/submit-options.js';
import type { ConfigSection } from './core/config/config-section.js';
import { configError, unknownProviderIssue } from './core/config/config-issue.js';
import { checkDecoratorMetadata } from './core/config/decorator-metadata.js';
import { loadConfig, validateConfig, type ConfigEnv } from './core/config/load-config.js';
import { Container, ContainerModule, type Newable } from './core/util/inversify.js';
import { AgentRxError, isAgentRxError } from './core/errors.js';
import { Kernel } from './core/kernel/kernel.js';
import { Provisions } from './core/kernel/provisions.js';
import { PluginRegistry } from './core/kernel/plugin-registry.js';
import { Logger } from './core/logger.js';
import type { AgentSpec, SessionResult, ToolDeclaration } from './core/model.js';
import { AgentProvider } from './core/plugin/agent-provider.js';
import { EventConsumer } from './core/plugin/event-consumer.js';
import { ToolHandler } from './core/plugin/tool-handler.js';
import { Session } from './core/session/session.js';
import { resolveSessionOptions, type SessionOptions } from './core/session/session-options.js';
import { SessionStore } from './core/store/session-store.js';
import { StoreRegistration } from './core/store/store-registration.js';
import { SessionPlacementToken, type SessionPlacement } from './core/plugin/session-placement.js';
import { bindSection, bindSessionFactory, hostModule, knownProviderIds } from './core/di/host-module.js';
import { ToolDispatcher } from './core/tools/tool-dispatcher.js';
import type { ToolRegistryImpl } from './core/tools/tool-registry.js';
import { declarationOf } from './core/tools/tool-schema.js';
import { defaultModules, type ProviderId } from './default-modules.js';

/**
 * A config object as `AgentRx.create` takes it: every section optional, defaults filled at
 * validation (which checks every field and lists every problem). `provider` is typed: a built-in
 * id, or one of `P`: the ids of the providers passed in `providers` (inferred from them), or of a
 * plugin provider a module registers, named as the type argument: `AgentRx.create<'my-host'>(…)`.
 * A config read from a file (a path) is checked at run time only.
 */
export interface AgentRxConfigInput<P extends string = string> {
  readonly provider?: ProviderId | NoInfer<P>;
  readonly [section: string]: unknown;
}

/** Options of `AgentRx.create`; `P`: provider ids beyond the built-in ones (see {@link AgentRxConfigInput}). */
export interface AgentRxCreateOptions<P extends string = string> {
  /** A config object, the path of a JSON config file, or undefined for all defaults. */
  readonly config?: AgentRxConfigInput<P> | string;
  /** Extra inversify ContainerModules (providers, tools, consumers, overrides). */
  readonly modules?: readonly ContainerModule[];
  /**
   * Tools, bound under ToolHandler: handler classes (`@injectable()`, one singleton each) or
   * handler objects (`defineTool({ name, description, inputSchema, handle })`, bound as they are).
   */
  readonly tools?: readonly (Newable<ToolHandler> | ToolHandler)[];
  /** Consumer classes or instances, bound under EventConsumer. */
  readonly consumers?: readonly (Newable<EventConsumer> | EventConsumer)[];
  /** Provider instances or classes, bound under AgentProvider; their ids are valid `config.provider` values. */
  readonly providers?: readonly (Newable<AgentProvider & { readonly id: P }> | (AgentProvider & { readonly id: P }))[];
  /** Load the built-in provider modules (default true). */
  readonly defaults?: boolean;
  /** `${VAR}` source for config interpolation (default process.env). */
  readonly env?: ConfigEnv;
  /** Wire SIGINT/SIGTERM to `stop()` (default false; the CLI turns it on). */
  readonly handleSignals?: boolean;
}

/**
 * The composition root and facade: one inversify container holding core services, providers,
 * tools and consumers; validated config chooses the provider.
 */
export class AgentRx {
  /** Consumer faults (throws, rejections, hung hooks, overflow) of every session. */
  readonly consumerErrors$: Observable<ConsumerError>;
  private readonly sessions = new Set<Session>();
  private readonly provisions = new Provisions();
  private stopped = false;
  /** The store's retention schedule (`store.retention`), stopped with the instance. */
  private retention: { stop(): void } | undefined;
  /** The queue link, once `submit` or `remote` used it. */
  private remoteUsed: (RemoteSessions & { close?(): Promise<void> }) | undefined;

  private constructor(
    readonly container: Container,
    readonly config: AgentRxConfig,
    private readonly kernel: Kernel,
    private readonly providers: ProviderCatalog,
    private readonly toolRegistry: ToolRegistryImpl,
    private readonly consumerRegistry: PluginRegistry<EventConsumer>,
    private readonly logger: Logger,
    private readonly store: SessionStore,
    private readonly dispatcher: ToolDispatcher,
    private readonly hub: ConsumerHub,
    private readonly consumerErrors: Subject<ConsumerError>,
  ) {
    this.consumerErrors$ = this.consumerErrors.asObservable();
    this.consumerErrors$.subscribe((e) => this.logger.warn(`consumer '${e.consumerId}' ${e.phase}: ${e.message}`));
  }

  /**
   * Builds the container, validates all config (core + every plugin section, and that a
   * registered provider has the configured id) before anything starts, then runs the kernel's
   * start phases with the configured provider (the others are built only when a session selects
   * them). Throws `invalid_config` listing every issue, and `invalid_config` when a tool's input
   * class was compiled without decorator metadata (see `checkDecoratorMetadata`). Rejects with a
   * tool source's start-up error (an MCP server that could not be started, or whose tool names
   * collide with other tools: `invalid_config`) after stopping what had started.
   */
  static async create<P extends string = never>(opts: AgentRxCreateOptions<P> = {}): Promise<AgentRx> {
    const container = new Container();
    // A module listed twice (e.g. a built-in the caller also passes) is loaded once; the core
    // services load last and bind only what the host did not.
    container.load(...new Set([...(opts.defaults === false ? [] : defaultModules()), ...(opts.modules ?? [])]));
    const providerIds = knownProviderIds(container, opts);
    container.load(hostModule(opts), coreModule);
    const sections = container.isBound(ConfigSections) ? container.getAll<ConfigSection>(ConfigSections) : [];
    const stores = container.getAll<StoreRegistration>(StoreRegistration);
    const loaded =
      typeof opts.config === 'string'
        ? await loadConfig(opts.config, { sections, env: opts.env, providerIds, stores })
        : validateConfig(opts.config ?? {}, sections, opts.env, providerIds, stores);
    const config = loaded.config;
    container.bind(AgentRxConfigToken).toConstantValue(config);
    // Placements and workers start sessions of this process through the instance, built below.
    const built: { rx?: AgentRx } = {};
    bindSessionFactory(container, () => built.rx);
    for (const section of sections) if (!container.isBound(section.token)) bindSection(container, section, loaded.sections.get(section.key));
    const logger = container.get<Logger>(Logger);
    const tools = container.get<ToolRegistryImpl>(ToolRegistry);
    for (const tool of tools.all) if (tool.inputType) checkDecoratorMetadata(tool.inputType, `tool '${tool.name}'`);
    const providers = container.get(ProviderCatalog);
    try {
      providers.require(config.provider);
    } catch (e) {
      // A provider bound as a class is known only once built: the same issue as the early check.
      if (!isAgentRxError(e, 'unknown_plugin')) throw e;
      throw configError([unknownProviderIssue(config.provider, providers.ids)], typeof opts.config === 'string' ? opts.config : undefined);
    }
    // The kernel is the container's own lifecycle, so the composition root builds it.
    const kernel = new Kernel(
      [
        // The tool handlers, then the tool sources (MCP servers), whose start failures are kept.
        { name: 'tools', participants: tools.participants, timeoutMs: config.timeouts.toolsPhaseMs },
        // The catalog's live list: a provider a session selects later is stopped too.
        { name: 'providers', participants: providers.resolved, timeoutMs: config.timeouts.providersPhaseMs },
      ],
      logger,
      { run: () => container.unbindAllAsync(), timeoutMs: config.timeouts.cleanupMs },
    );
    const rx = new AgentRx(
      container,
      config,
      kernel,
      providers,
      tools,
      container.get<PluginRegistry<EventConsumer>>(ConsumerRegistry),
      logger,
      container.get<SessionStore>(SessionStore),
      container.get(ToolDispatcher),
      container.get(ConsumerHub),
      container.get<Subject<ConsumerError>>(ConsumerErrors),
    );
    built.rx = rx;
    await kernel.start();
    // The kernel only logs failed hooks; a tool source that did not start (an MCP server that
    // never answered) fails start-up instead, after stopping what did start.
    const toolSourceFailure = tools.startFailure;
    if (toolSourceFailure !== undefined) {
      await rx.stop();
      throw toolSourceFailure;
    }
    providers.markStarted();
    const store = container.get<SessionStore>(SessionStore);
    rx.retention = store.prune ? startRetention({ prune: (o) => store.prune!(o) }, retentionFromConfig(config.store.retention), logger) : undefined;
    if (opts.handleSignals) kernel.handleSignals(() => rx.cancelAll());
    return rx;
  }

  /** The store every session of this instance is kept in (its records, ledgers and logs). */
  get sessionStore(): SessionStore {
    return this.store;
  }

  /** Tool declarations as the host sees them. */
  get tools(): ToolDeclaration[] {
    return this.toolRegistry.all.map(declarationOf);
  }

  /** Ids of the registered providers and consumers. */
  get pluginIds(): { providers: string[]; tools: string[]; consumers: string[] } {
    return { providers: this.providers.ids, tools: this.toolRegistry.ids, consumers: this.consumerRegistry.ids };
  }

  /** Runs one request to its terminal and closes the session. Rejects with a typed AgentRxError. */
  async run<O = unknown>(opts: SessionOptions<O> = {}): Promise<SessionResult<O>> {
    const session = this.openSession(opts, false);
    try {
      return (await session.result) as SessionResult<O>;
    } finally {
      session.close();
      await session.closed;
    }
  }

  /** Starts a live session: it stays open for `message()` after each terminal until `close()`/`cancel()`. */
  start(opts: SessionOptions = {}): Session {
    return this.openSession(opts, true);
  }

  /**
   * Attaches a reader to a session's log in the store, from any process sharing it: the envelopes
   * after `afterSeq` (default 0: all), then live ones as they are appended, and their AG-UI
   * translation tagged with `seq`. Unsubscribe to detach; nothing is started or resumed.
   */
  attach(sessionId: string, opts: { readonly afterSeq?: number } = {}): LogAttachment {
    const afterSeq = opts.afterSeq ?? 0;
    if (typeof sessionId !== 'string' || sessionId.length === 0)
      throw new AgentRxError('invalid_options', 'attach(sessionId): sessionId must be a non-empty string');
    if (!Number.isInteger(afterSeq) || afterSeq < 0)
      throw new AgentRxError('invalid_options', `attach: afterSeq must be an integer ≥ 0; got ${JSON.stringify(opts.afterSeq)}`);
    return attachLog(this.store, sessionId, afterSeq);
  }

  /**
   * The files of the provider-side session `sessionId` (list, fetch, put, delete by name; see
   * `Artifacts`), on the configured provider or `opts.provider`. Throws `unsupported` naming the
   * provider when it has no session storage (Local), `invalid_config` when it is not configured.
   */
  artifacts(sessionId: string, opts: { readonly provider?: string } = {}): Artifacts {
    return providerArtifacts(this.providers.require(opts.provider ?? this.config.provider), sessionId);
  }

  /**
   * `runtime.mode: 'distributed'`: enqueues a session request (the options of `start`, minus
   * functions) for the pool of workers (`agentrx worker`) and returns a handle with the surface of
   * a live Session (`events$`, `agui$`, `results$`, `result`, `message`, `sendEvent`, `cancel`,
   * `close`), fed from Redis. Its `id` re-opens it from any process with `remote(id)`.
   */
  async submit(opts: SubmitOptions = {}): Promise<RemoteSession> {
    return this.remoteSessions().submit(opts);
  }

  /** A handle on a submitted session by its id (`submit()`'s `handle.id`), from any process; `afterSeq` as in `attach`. */
  async remote(submissionId: string, opts: { readonly afterSeq?: number } = {}): Promise<RemoteSession> {
    return this.remoteSessions().open(submissionId, opts);
  }

  /**
   * Where this instance's sessions run, as the config chose (`runtime.mode`): in this process, or
   * on the worker pool. Servers open, find and follow sessions through it (`createAgUiHandler`).
   */
  get placement(): SessionPlacement {
    return this.container.get<SessionPlacement>(SessionPlacementToken);
  }

  /** The queue link (`remoteSessionsOf`), kept to be closed before the store at `stop()`. */
  private remoteSessions(): RemoteSessions {
    return (this.remoteUsed ??= remoteSessionsOf(this.container));
  }

  /** Cancels every running session, as a shutdown: their `results$` complete, their `result` rejects with `cancelled`. */
  cancelAll(): void {
    for (const s of this.sessions) s.cancelForShutdown();
  }

  /**
   * Removes the provider-side resources this instance provisioned and created (a Claude Managed
   * Agents agent and environment, a Bedrock AgentCore harness). Resources it adopted by their
   * content-addressed name are left alone: another process may be using them. Nothing is removed
   * by `stop()`: provisioned resources are meant to outlive a run. Call it once the sessions that
   * use them have finished; a later session provisions again. Every provider is tried; failures
   * are reported together in one `provider_error`.
   */
  async teardown(signal: AbortSignal = AbortSignal.timeout(this.config.limits.runTimeoutMs)): Promise<void> {
    await this.provisions.teardown((id) => this.providers.get(id), signal);
  }

  /**
   * Cancels running sessions, waits for them to close, ends the log reads of the handles `submit`
   * and `remote` gave (their `events$`/`agui$` complete; the sessions go on in their workers), then
   * stops the kernel. Idempotent.
   */
  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      const closing = [...this.sessions].map((s) => s.closed);
      this.cancelAll();
      await Promise.all(closing);
    }
    this.retention?.stop();
    // The handles' log reads end before the store closes under them.
    await this.remoteUsed?.close?.();
    await this.kernel.stop();
    this.consumerErrors.complete();
  }

  private openSession(opts: SessionOptions<unknown>, live: boolean): Session {
    if (this.stopped) throw new AgentRxError('session_closed', 'this AgentRx instance is stopped; create a new one');
    const provider = this.providers.require(opts.provider ?? this.config.provider);
    const limits = this.config.limits;
    const resolved = resolveSessionOptions(
      opts,
      {
        timeoutMs: limits.runTimeoutMs,
        maxTurns: limits.maxTurns,
        maxReprompts: limits.maxReprompts,
        retainEvents: this.config.retainEvents,
        toolTimeoutMs: limits.toolTimeoutMs,
        toolConcurrency: limits.toolConcurrency,
        reconnectAttempts: limits.reconnectAttempts,
        reconnectBaseMs: limits.reconnectBaseMs,
        dedupeWindow: limits.dedupeWindow,
      },
      {
        toolNames: this.toolRegistry.ids,
        supportsOutcomes: provider.supportsOutcomes === true,
        providerId: provider.id,
        toolsPerCall: provider.toolsPerCall === true,
        runSettings: provider.runSettings,
      },
    );
    const { spec, dispatcher } = this.toolsOf(resolved.tools);
    const session: Session = new Session(
      {
        provider,
        dispatcher,
        store: this.store,
        spec,
        logger: this.logger,
        provision: () => this.providers.ready(provider).then(() => this.provisions.provision(provider, spec, this.config.limits.runTimeoutMs)),
        attachConsumers: (translated$, sessionId) => this.hub.attach(translated$, sessionId),
        interruptTimeoutMs: this.config.timeouts.interruptMs,
        onClosed: () => this.sessions.delete(session),
      },
      resolved,
      live,
    );
    this.sessions.add(session);
    return session;
  }

  /**
   * The spec and dispatcher of a session: the agent's, or with `own` tools of the session added
   * (offered after the agent's, looked up first by the dispatcher; names were checked distinct).
   */
  private toolsOf(own: readonly ToolHandler[]): { spec: AgentSpec; dispatcher: ToolDispatcher } {
    if (own.length === 0) return { spec: this.spec(), dispatcher: this.dispatcher };
    const registry = this.toolRegistry;
    const byName = new Map(own.map((t) => [t.name, t]));
    const declarations = own.map((t) => declarationOf(t));
    const agent = this.spec();
    const tools = (): ToolDeclaration[] => [...agent.tools, ...declarations];
    const spec: AgentSpec = {
      name: agent.name,
      model: agent.model,
      systemPrompt: agent.systemPrompt,
      get tools() {
        return tools();
      },
    };
    const dispatcher = new ToolDispatcher({
      get: (name) => byName.get(name) ?? registry.get(name),
      get ids() {
        return [...registry.ids, ...byName.keys()];
      },
    });
    return { spec, dispatcher };
  }

  /**
   * The agent as the host sees it. `tools` is read from the live registry each time, so a host
   * that sends its tools with every call (Local) offers a ToolSource's new tools from the next turn.
   */
  private spec(): AgentSpec {
    const a = this.config.agent;
    const tools = (): ToolDeclaration[] => this.tools;
    return {
      name: a.name,
      model: a.model,
      systemPrompt: a.systemPrompt,
      get tools() {
        return tools();
      },
    };
  }
}
