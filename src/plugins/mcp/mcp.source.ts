import { AgentRxError, isAgentRxError } from '../../core/errors.js';
import { inject, injectable, optional } from '../../core/util/inversify.js';
import { Logger } from '../../core/logger.js';
import type { ToolHandler } from '../../core/plugin/tool-handler.js';
import type { ToolSource, ToolSourceSubscription } from '../../core/plugin/tool-source.js';
import { messageOf } from '../../core/util/async.js';
import { McpOptions, McpOptionsToken } from './mcp.config.js';
import { formatMcpProgress, McpProgressToken, type McpProgressEvent, type McpProgressOptions } from './mcp-progress.js';
import { loadMcpSdk } from './mcp-sdk.js';
import { McpServer, type McpStartupReporter } from './mcp-server.js';

/**
 * What the source's start budget ({@link McpToolSource.startTimeoutMs}) adds to the longest
 * server `startTimeoutMs`: loading the SDK, and closing the servers after one failed (a stdio
 * child gets 2 s to exit on stdin's end, then 2 s after SIGTERM), so that a server's own timeout
 * error always comes out before the kernel's bound.
 */
export const MCP_START_MARGIN_MS = 15_000;

/**
 * Imports one module of `@modelcontextprotocol/sdk` (default: `import()`); a seam for embedders
 * with their own loader and for the "not installed" test. Declared here, not beside the loader,
 * so that the public types never reference the SDK's own (an optional peer dependency).
 */
export type McpSdkImporter = (specifier: string) => Promise<Record<string, unknown>>;

/** Token of the importer the source loads the SDK with (tests bind one that fails). */
export const McpSdkImporterToken = Symbol('McpSdkImporter');

/**
 * The `mcp` tool source: every server of `mcp.servers` connected at start (in parallel), its
 * tools offered as `<server>__<tool>` and kept current on `notifications/tools/list_changed`.
 * Loads `@modelcontextprotocol/sdk` only when at least one server is configured.
 *
 * Start fails when any server fails (naming each, with a stdio server's stderr tail); the servers
 * that did start are stopped again. Stop ends every server (stdio children are reaped).
 *
 * Start-up progress (each server `starting`, `waiting` once when a stdio server has not answered
 * after a few seconds, `ready` or `failed`) goes to the {@link McpProgressToken} listener when one is bound, else to the logger
 * at `info`. The source declares its own start budget ({@link startTimeoutMs}), which the kernel
 * honours over `timeouts.toolsPhaseMs`.
 *
 * Providers that fix the agent's tools when it is provisioned (Claude Managed Agents, Bedrock
 * AgentCore) see the tools listed when the agent is provisioned; a tool that appears later is
 * offered to them only once the agent is provisioned again (a new instance). The local provider
 * reads the list when each session starts.
 */
@injectable()
export class McpToolSource implements ToolSource {
  readonly id = 'mcp';
  private servers: McpServer[] = [];
  private current: readonly ToolHandler[] = [];
  private readonly listeners = new Set<() => void>();
  private stopped = false;
  private starting: Promise<void> | undefined;

  constructor(
    @inject(Logger) private readonly logger: Logger,
    @inject(McpOptionsToken) @optional() private readonly options: McpOptions | undefined,
    @inject(McpSdkImporterToken) @optional() private readonly importer: McpSdkImporter | undefined,
    @inject(McpProgressToken) @optional() private readonly progress?: McpProgressOptions,
  ) {}

  /**
   * How long `start` may take (ms): the longest server `startTimeoutMs` plus
   * {@link MCP_START_MARGIN_MS}; the kernel bounds `start` by this when it is longer than
   * `timeouts.toolsPhaseMs`. Undefined without servers.
   */
  get startTimeoutMs(): number | undefined {
    const servers = [...(this.options?.servers.values() ?? [])];
    if (servers.length === 0) return undefined;
    return Math.max(...servers.map((s) => s.startTimeoutMs)) + MCP_START_MARGIN_MS;
  }

  /** Connects every configured server; rejects naming every server that failed. Runs once; later calls share the first. */
  start(): Promise<void> {
    this.starting ??= this.startServers();
    return this.starting;
  }

  private async startServers(): Promise<void> {
    const configured = [...(this.options?.servers.values() ?? [])];
    if (configured.length === 0) return;
    const sdk = await loadMcpSdk(this.importer);
    const startup = this.reporter();
    const servers = configured.map((o) => new McpServer(o, sdk, this.logger, () => this.changed(), startup));
    const results = await Promise.allSettled(servers.map((s) => s.start()));
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failures.length > 0 || this.stopped) {
      await Promise.allSettled(servers.map((s) => s.stop()));
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1) {
        // One code when they agree (every server timed out: `timeout`), so callers can tell.
        const codes = new Set(failures.map((f) => (isAgentRxError(f) ? f.code : 'provider_error')));
        const code = codes.size === 1 ? [...codes][0]! : 'provider_error';
        const named = failures.flatMap((f) => (isAgentRxError(f) && typeof f.details?.['server'] === 'string' ? [f.details['server']] : []));
        throw new AgentRxError(code, `${failures.length} MCP servers failed to start:\n${failures.map((f) => `- ${messageOf(f)}`).join('\n')}`, {
          failures: failures.map(messageOf),
          servers: named,
        });
      }
      return;
    }
    this.servers = servers;
    this.changed();
  }

  /** Stops every server (in parallel); a stdio child's exit is awaited. */
  async stop(): Promise<void> {
    this.stopped = true;
    // A start still connecting stops what it started itself (it sees `stopped`).
    await this.starting?.catch(() => undefined);
    const servers = this.servers;
    await Promise.allSettled(servers.map((s) => s.stop()));
  }

  tools(): readonly ToolHandler[] {
    return this.current;
  }

  onDidChangeTools(listener: () => void): ToolSourceSubscription {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The pid of each running stdio server, by name (undefined for HTTP servers or while one is down). */
  get pids(): Record<string, number | undefined> {
    return Object.fromEntries(this.servers.map((s) => [s.name, s.pid]));
  }

  /** Where the servers report start-up: the bound listener, else the logger at `info`. */
  private reporter(): McpStartupReporter {
    const listener = this.progress;
    const report = (event: McpProgressEvent): void => {
      if (!listener) {
        this.logger.info(formatMcpProgress(event));
        return;
      }
      try {
        listener.onProgress(event);
      } catch (e) {
        this.logger.error('mcp: the start-up progress listener failed', { error: messageOf(e) });
      }
    };
    return { report, ...(listener?.quietMs !== undefined ? { quietMs: listener.quietMs } : {}) };
  }

  private changed(): void {
    this.current = this.servers.flatMap((s) => s.tools);
    for (const l of this.listeners) {
      try {
        l();
      } catch (e) {
        this.logger.error('mcp: a tool-list listener failed', { error: messageOf(e) });
      }
    }
  }
}
