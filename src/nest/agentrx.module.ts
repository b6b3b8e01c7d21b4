import {
  Inject,
  Module,
  Optional,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type FactoryProvider,
  type ModuleMetadata,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import { AgentRx, type AgentRxCreateOptions } from '../agentrx.js';
import { AgUiHttpOptions, type AgUiHttpOptionsInput } from '../servers/agui-http/agui-http.config.js';
import { createAgUiHandler, loadAgUiEndpoint, type AgUiHttpHandler } from '../servers/agui-http/agui-http.handler.js';
import { ContainerModule, type Newable } from '../core/util/inversify.js';
import { ToolHandler } from '../core/plugin/tool-handler.js';
import { AGENTRX_AGUI_HANDLER, createAgUiController, type AgUiMount } from './agentrx.controller.js';

/**
 * Injection token of the `AgentRx` facade in Nest: `@Inject(AGENTRX) rx: AgentRx`. The class
 * `AgentRx` itself is an alias of it, so `constructor(private readonly rx: AgentRx)` works too.
 */
export const AGENTRX = Symbol('AGENTRX');

/** Injection token of the resolved {@link AgentRxModuleOptions} (internal to the module, exported for tests and extensions). */
export const AGENTRX_MODULE_OPTIONS = Symbol('AGENTRX_MODULE_OPTIONS');

/**
 * Options of the AG-UI endpoint mounted by the module: the handler's options (`token`, `cors`,
 * `maxConcurrentRuns`, `retryAfterSeconds`, `maxBodyBytes`, `threadIdleMs`, `maxThreads`,
 * `page`; see `AgUiHttpOptionsClass`) plus the route prefix `path`. `port`, `host` and
 * `basePath` do not apply: Nest listens, and the controller routes.
 */
export interface AgentRxAgUiOptions extends Omit<AgUiHttpOptionsInput, 'port' | 'host' | 'basePath'>, AgUiMount {}

/**
 * What `AgentRxModule` builds the facade from: `AgentRx.create`'s options (one inversify
 * container inside the facade; Nest only holds the instance), minus `handleSignals` (Nest owns
 * shutdown: call `app.enableShutdownHooks()`), with `tools` also accepting instances.
 */
export interface AgentRxModuleOptions extends Omit<AgentRxCreateOptions, 'handleSignals' | 'tools'> {
  /**
   * Extra tools of the host app: `@injectable()` classes (built by the facade's inversify
   * container) or ready instances (for example built in a `forRootAsync` factory from Nest
   * services), bound as constants under `ToolHandler`. Names must be unique.
   */
  readonly tools?: readonly (Newable<ToolHandler> | ToolHandler)[];
  /**
   * Mount the AG-UI endpoint (`POST /agent` SSE, see `createAgUiHandler`) as a Nest controller.
   * `true` for the defaults, or options. Values given here win over the validated `agui` config
   * section when `aguiHttpModule` is among `modules`. Default off. With `forRootAsync`, whether
   * and where to mount (`path`, `page`) is given to `forRootAsync` itself; the factory's `agui`
   * object may still set the handler options.
   */
  readonly agui?: boolean | AgentRxAgUiOptions;
}

/** Options of `AgentRxModule.forRoot`. */
export interface AgentRxModuleRootOptions extends AgentRxModuleOptions {
  /** Register the module globally, so every module can inject `AGENTRX` without importing it. Default false. */
  readonly isGlobal?: boolean;
}

/** Options of `AgentRxModule.forRootAsync`: a Nest factory provider for {@link AgentRxModuleOptions}. */
export interface AgentRxModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Returns the options; may be async. Receives the `inject` dependencies in order. */
  readonly useFactory: (...args: never[]) => AgentRxModuleOptions | Promise<AgentRxModuleOptions>;
  /** Nest providers passed to `useFactory` (from this module's `imports` or global modules). */
  readonly inject?: FactoryProvider['inject'];
  /** Register the module globally. Default false. */
  readonly isGlobal?: boolean;
  /**
   * Mount the AG-UI controller: `true`, or where (`path`) and whether with the page (`page`).
   * Decided here because Nest fixes controllers when the module is declared. Default off.
   */
  readonly agui?: boolean | AgUiMount;
}

/**
 * Provides the `AgentRx` facade to Nest providers. The facade keeps its own single inversify
 * container (providers, tools, consumers, config); Nest's container only holds the facade
 * instance, under {@link AGENTRX} and the `AgentRx` class. Host tools and consumers go in
 * through `tools` / `consumers` / `modules`, as for `AgentRx.create`.
 *
 * ```ts
 * @Module({ imports: [AgentRxModule.forRoot({ config: 'agentrx.json', tools: [MyTool], agui: true })] })
 * export class AppModule {}
 *
 * @Injectable()
 * export class AskService {
 *   constructor(@Inject(AGENTRX) private readonly rx: AgentRx) {}
 *   ask(prompt: string) { return this.rx.run({ prompt }); }
 * }
 * ```
 *
 * Shutdown (`app.close()`, or a signal with `app.enableShutdownHooks()`): before the HTTP server
 * closes, the AG-UI endpoint (when mounted) refuses new runs and ends its open streams, then
 * `rx.stop()` cancels the remaining sessions and stops the kernel, once. Invalid config fails
 * the app's start with `invalid_config`.
 */
@Module({})
export class AgentRxModule implements BeforeApplicationShutdown, OnApplicationShutdown {
  private stopping: Promise<void> | undefined;

  constructor(
    @Inject(AGENTRX) private readonly rx: AgentRx,
    @Optional() @Inject(AGENTRX_AGUI_HANDLER) private readonly agui?: AgUiHttpHandler,
  ) {}

  /** A module with the facade built from static options. */
  static forRoot(options: AgentRxModuleRootOptions = {}): DynamicModule {
    const { isGlobal, ...rest } = options;
    return AgentRxModule.build({ provide: AGENTRX_MODULE_OPTIONS, useValue: rest }, [], isGlobal, mountOf(options.agui));
  }

  /** A module with the facade built from options a Nest factory returns (config services etc.). */
  static forRootAsync(options: AgentRxModuleAsyncOptions): DynamicModule {
    const provider: FactoryProvider = { provide: AGENTRX_MODULE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] };
    return AgentRxModule.build(provider, options.imports ?? [], options.isGlobal, mountOf(options.agui));
  }

  /** Ends the AG-UI streams and stops the facade before the HTTP server closes (so open streams do not hold it). */
  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /** Makes sure the facade is stopped (already done before the server closed). */
  onApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  private stop(): Promise<void> {
    this.stopping ??= (async () => {
      try {
        await this.agui?.close();
      } finally {
        await this.rx.stop();
      }
    })();
    return this.stopping;
  }

  private static build(
    options: Provider,
    imports: NonNullable<ModuleMetadata['imports']>,
    isGlobal: boolean | undefined,
    mount: AgUiMount | undefined,
  ): DynamicModule {
    const providers: Provider[] = [
      options,
      { provide: AGENTRX, useFactory: (opts: AgentRxModuleOptions) => createAgentRx(opts), inject: [AGENTRX_MODULE_OPTIONS] },
      { provide: AgentRx, useExisting: AGENTRX },
    ];
    const exported: (symbol | typeof AgentRx)[] = [AGENTRX, AgentRx];
    if (mount) {
      providers.push({
        provide: AGENTRX_AGUI_HANDLER,
        // The endpoint's code is in place before the app listens (as startAgUiServer does).
        useFactory: async (rx: AgentRx, opts: AgentRxModuleOptions) => {
          await loadAgUiEndpoint();
          return createAgUiHandler({ ...handlerOptions(rx, opts.agui, mount), rx });
        },
        inject: [AGENTRX, AGENTRX_MODULE_OPTIONS],
      });
      exported.push(AGENTRX_AGUI_HANDLER);
    }
    return {
      module: AgentRxModule,
      global: isGlobal === true,
      imports,
      providers,
      exports: exported,
      controllers: mount ? [createAgUiController(mount)] : [],
    };
  }
}

/** Builds the facade: tool instances become a ContainerModule of constants; signals stay Nest's. */
export async function createAgentRx(options: AgentRxModuleOptions): Promise<AgentRx> {
  const { tools = [], modules = [], agui: _agui, ...rest } = options;
  const classes = tools.filter((t): t is Newable<ToolHandler> => typeof t === 'function');
  const instances = tools.filter((t): t is ToolHandler => typeof t !== 'function');
  const toolInstances = new ContainerModule((bind) => {
    for (const tool of instances) bind.bind<ToolHandler>(ToolHandler).toConstantValue(tool);
  });
  return AgentRx.create({ ...rest, tools: classes, modules: instances.length > 0 ? [...modules, toolInstances] : modules, handleSignals: false });
}

function mountOf(agui: boolean | AgUiMount | undefined): AgUiMount | undefined {
  if (agui === undefined || agui === false) return undefined;
  if (agui === true) return {};
  return { ...(agui.path !== undefined ? { path: agui.path } : {}), ...(agui.page !== undefined ? { page: agui.page } : {}) };
}

/** The handler's options: the validated `agui` config section if bound, then the module's options; `page` follows the mount. */
function handlerOptions(rx: AgentRx, agui: AgentRxModuleOptions['agui'], mount: AgUiMount): AgUiHttpOptionsInput {
  const fromConfig: AgUiHttpOptionsInput = rx.container.isBound(AgUiHttpOptions) ? rx.container.get<AgUiHttpOptions>(AgUiHttpOptions) : {};
  const { path: _path, ...given } = typeof agui === 'object' ? agui : ({} as AgentRxAgUiOptions);
  return { ...fromConfig, ...given, basePath: '', page: mount.page !== false };
}
