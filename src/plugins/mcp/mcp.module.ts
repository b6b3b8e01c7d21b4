import { ConfigSections } from '../../core/config/config-tokens.js';
import { bindPlugin } from '../../core/di/bind-plugin.js';
import { ContainerModule } from '../../core/util/inversify.js';
import { ToolSource } from '../../core/plugin/tool-source.js';
import { mcpConfigSection } from './mcp.config.js';
import { McpToolSource } from './mcp.source.js';

/**
 * The MCP tool source: contributes the top-level `mcp` config section and binds
 * {@link McpToolSource} under `ToolSource`. With no servers configured it does nothing (and never
 * loads `@modelcontextprotocol/sdk`).
 *
 * ```ts
 * const rx = await AgentRx.create({ modules: [mcpModule], config: { mcp: { servers: { files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] } } } } });
 * ```
 */
export const mcpModule = new ContainerModule((options) => {
  options.bind(ConfigSections).toConstantValue(mcpConfigSection);
  bindPlugin(options, McpToolSource, ToolSource);
});
