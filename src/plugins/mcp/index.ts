export { DEFAULT_MCP_START_TIMEOUT_MS, MCP_SERVER_NAME, McpOptions, McpOptionsToken, McpServerOptions, mcpConfigSection } from './mcp.config.js';
export { mcpModule } from './mcp.module.js';
export { MCP_START_MARGIN_MS, McpSdkImporterToken, McpToolSource, type McpSdkImporter } from './mcp.source.js';
export {
  DEFAULT_MCP_QUIET_MS,
  formatMcpProgress,
  mcpProgressModule,
  McpProgressToken,
  type McpProgressEvent,
  type McpProgressOptions,
} from './mcp-progress.js';
export { toToolOutcome, type McpCallResult, type McpContent } from './mcp-result.js';
