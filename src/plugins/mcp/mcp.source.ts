import { AgentRxError } from '../../core/errors.js';
import { inject, injectable, optional } from '../../core/di/inversify.js';
import { Logger } from '../../core/logger.js';
import type { ToolHandler } from '../../core/plugin/tool-handler.js';
import type { ToolSource, ToolSourceSubscription } from '../../core/plugin/tool-source.js';
import { messageOf } from '../../core/util/async.js';
import { McpOptions, McpOptionsToken } from './mcp.config.js';
import { loadMcpSdk } from './mcp-sdk.js';
import { McpServer } from './mcp-server.js';

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
  ) {}

  /** Connects every configured server; rejects naming every server that failed. Runs once; later calls share the first. */
  start(): Promise<void> {
    this.starting ??= this.startServers();
    return this.starting;
  }

  private async startServers(): Promise<void> {
    const configured = [...(this.options?.servers.values() ?? [])];
    if (configured.length === 0) return;
    const sdk = await loadMcpSdk(this.importer);
    const servers = configured.map((o) => new McpServer(o, sdk, this.logger, () => this.changed()));
    const results = await Promise.allSettled(servers.map((s) => s.start()));
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failures.length > 0 || this.stopped) {
      await Promise.allSettled(servers.map((s) => s.stop()));
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1) {
        throw new AgentRxError('provider_error', `${failures.length} MCP servers failed to start:\n${failures.map((f) => `- ${messageOf(f)}`).join('\n')}`, { failures: failures.map(messageOf) });
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
