import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaginatedResultSchema, ToolListChangedNotificationSchema, ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { AgentRxError } from '../../core/errors.js';
import { messageOf } from '../../core/util/async.js';
import type { McpSdkImporter } from './mcp.source.js';

/** The parts of `@modelcontextprotocol/sdk` the MCP tool source uses, loaded on demand. */
export interface McpSdk {
  readonly Client: typeof Client;
  readonly StdioClientTransport: typeof StdioClientTransport;
  readonly StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  readonly ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
  /** One tool of a `tools/list` result, to check tools one by one when a list does not pass as a whole. */
  readonly ToolSchema: typeof ToolSchema;
  /** A `tools/list` result read loosely (its tools unchecked). */
  readonly PaginatedResultSchema: typeof PaginatedResultSchema;
}

const defaultImporter: McpSdkImporter = (specifier) => import(specifier) as Promise<Record<string, unknown>>;

/**
 * Loads `@modelcontextprotocol/sdk`, an optional peer dependency: only when `mcp.servers` is not
 * empty, so an instance without MCP servers never needs it. Throws `invalid_config` saying to
 * install it when it is missing, and `unsupported` when it is there but does not have what is
 * used (an incompatible version).
 */
export async function loadMcpSdk(importer: McpSdkImporter = defaultImporter): Promise<McpSdk> {
  const mods: Record<string, unknown>[] = [];
  try {
    // One after another: the modules share dependencies, and concurrent first loads of one module
    // graph trip some ESM loaders (jest's vm modules: "request for 'zod/v4' is not in cache").
    for (const specifier of [
      '@modelcontextprotocol/sdk/client/index.js',
      '@modelcontextprotocol/sdk/client/stdio.js',
      '@modelcontextprotocol/sdk/client/streamableHttp.js',
      '@modelcontextprotocol/sdk/types.js',
    ]) {
      mods.push(await importer(specifier));
    }
  } catch (e) {
    const code = (e as { code?: unknown } | undefined)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /Cannot find (module|package)/.test(messageOf(e))) {
      throw new AgentRxError(
        'invalid_config',
        'mcp.servers is configured but @modelcontextprotocol/sdk is not installed: install @modelcontextprotocol/sdk to use mcp servers (npm install @modelcontextprotocol/sdk)',
      );
    }
    throw new AgentRxError('unsupported', `@modelcontextprotocol/sdk could not be loaded: ${messageOf(e)}`);
  }
  const [client, stdio, http, types] = mods as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
  const found = {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    ToolSchema: types.ToolSchema,
    PaginatedResultSchema: types.PaginatedResultSchema,
  };
  const missing = Object.entries(found)
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);
  if (missing.length > 0) throw new AgentRxError('unsupported', `@modelcontextprotocol/sdk lacks ${missing.join(', ')}; install a 1.x version ≥ 1.24`);
  // Present, and of the SDK line the types were taken from (a 1.x ≥ 1.24, as the peer range says).
  return {
    Client: found.Client as McpSdk['Client'],
    StdioClientTransport: found.StdioClientTransport as McpSdk['StdioClientTransport'],
    StreamableHTTPClientTransport: found.StreamableHTTPClientTransport as McpSdk['StreamableHTTPClientTransport'],
    ToolListChangedNotificationSchema: found.ToolListChangedNotificationSchema as McpSdk['ToolListChangedNotificationSchema'],
    ToolSchema: found.ToolSchema as McpSdk['ToolSchema'],
    PaginatedResultSchema: found.PaginatedResultSchema as McpSdk['PaginatedResultSchema'],
  };
}
