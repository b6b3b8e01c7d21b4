import type { ToolContext, ToolHandler, ToolOutcome } from '../../core/plugin/tool-handler.js';
import { TOOL_NAME_PATTERN } from '../../core/tools/define-tool.js';
import { compileToolInput } from '../../core/tools/tool-input.js';
import { messageOf } from '../../core/util/async.js';
import type { McpServerOptions } from './mcp.config.js';

/** A tool as an MCP server lists it (the fields read). */
export interface McpListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  readonly execution?: { readonly taskSupport?: string };
}

/** Where the handlers of a server's tools call it, and where what is left out is reported. */
export interface McpToolSink {
  call(tool: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
  warn(what: string): void;
}

/**
 * The ToolHandlers of the tools `server` lists, named `<server>__<tool>`: filtered by its
 * `allow`/`deny`, with its approval and timeout settings; a tool that cannot run here (task-only,
 * an invalid name, an input schema that does not compile) is left out with a warning.
 */
export function mcpToolHandlers(server: string, options: McpServerOptions, listed: readonly McpListedTool[], sink: McpToolSink): ToolHandler[] {
  const o = options;
  const names = new Set(listed.map((t) => t.name));
  for (const n of [...(o.allow ?? []), ...(o.deny ?? [])]) if (!names.has(n)) sink.warn(`allow/deny names tool '${n}', which the server does not list`);
  const handlers: ToolHandler[] = [];
  for (const t of listed) {
    if ((o.allow !== undefined && !o.allow.includes(t.name)) || o.deny?.includes(t.name)) continue;
    const name = `${server}__${t.name}`;
    const skip = (why: string): void => sink.warn(`tool '${t.name}' is left out: ${why}`);
    if (t.execution?.taskSupport === 'required') {
      skip('it can only run as a task, which agentrx does not support');
      continue;
    }
    if (!TOOL_NAME_PATTERN.test(name)) {
      skip(`'${name}' is not a valid tool name (${String(TOOL_NAME_PATTERN)})`);
      continue;
    }
    const requireApproval = o.requireApproval === true || (Array.isArray(o.requireApproval) && o.requireApproval.includes(t.name));
    const handler: ToolHandler = {
      name,
      description: t.description ?? t.title ?? '',
      inputSchema: t.inputSchema,
      source: `mcp:${server}`,
      ...(requireApproval ? { requireApproval } : {}),
      ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
      handle: (input, ctx) => sink.call(t.name, input as Record<string, unknown>, ctx),
    };
    try {
      compileToolInput(handler);
    } catch (e) {
      skip(messageOf(e));
      continue;
    }
    handlers.push(Object.freeze(handler));
  }
  return handlers;
}
