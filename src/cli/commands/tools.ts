import type { RegisterCommand } from '../cli-io.js';
import { collect, DEMO_TOOLS_HELP, MODULE_HELP } from '../flags.js';

/** Flags of `agentrx tools`. */
export interface ToolsFlags {
  config?: string;
  mcp: string[];
  module: string[];
  demoTools?: boolean;
  json?: boolean;
}

/** `agentrx tools`: starts the configured instance (MCP servers included), lists its tools, stops it. */
export const registerToolsCommand: RegisterCommand = (program, ctx) => {
  const { io } = ctx;
  program
    .command('tools')
    .description('list every tool the configured instance offers (local, schema-defined, MCP) with its input schema')
    .option('-c, --config <file>', 'JSON config file (${VAR} interpolation applies)')
    .option('--mcp <server>', "also an MCP server, '<name>=<command …>' (repeatable)", collect, [])
    .option('--module <file>', MODULE_HELP, collect, [])
    .option('--demo-tools', DEMO_TOOLS_HELP)
    .option('--json', 'print the tools as JSON')
    .action(async (flags: ToolsFlags) => {
      ctx.exit(await (await import('./tools.action.js')).toolsCommand(flags, io));
    });
};
