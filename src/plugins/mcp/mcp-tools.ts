import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ToolContext, ToolHandler, ToolOutcome } from '../../core/plugin/tool-handler.js';
import { TOOL_NAME_PATTERN } from '../../core/tools/define-tool.js';
import { compileToolInput } from '../../core/tools/tool-input.js';
import { messageOf } from '../../core/util/async.js';
import type { McpServerOptions } from './mcp.config.js';
import type { McpSdk } from './mcp-sdk.js';

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

/** One page of a server's tool list. */
export interface McpToolPage {
  readonly tools: readonly McpListedTool[];
  readonly nextCursor?: string;
}

/**
 * One page of `tools/list`. The SDK checks a page as a whole, so one tool the protocol does not
 * allow (an input schema whose root is not an object) would fail the list and the server's
 * start: such a page is read again loosely and its tools checked one by one, each bad one left
 * out with a warning naming it (given to `warn`). The SDK then keeps no output schemas of that
 * page's tools, so their structured results are not checked against them.
 */
export async function listPage(
  client: Client,
  sdk: McpSdk,
  cursor: string | undefined,
  timeoutMs: number | undefined,
  warn: (what: string) => void,
): Promise<McpToolPage> {
  const params = cursor === undefined ? undefined : { cursor };
  const options = timeoutMs === undefined ? undefined : { timeout: timeoutMs };
  try {
    const page = await client.listTools(params, options);
    return { tools: page.tools, ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}) };
  } catch (e) {
    // Anything but a result that does not pass the SDK's schema (a ZodError) is the server's failure.
    if (!Array.isArray((e as { issues?: unknown } | null)?.issues)) throw e;
  }
  const loose = await client.request({ method: 'tools/list', ...(params ? { params } : {}) }, sdk.PaginatedResultSchema, options);
  const raw: unknown = (loose as Record<string, unknown>)['tools'];
  const tools: McpListedTool[] = [];
  for (const [i, item] of (Array.isArray(raw) ? raw : []).entries()) {
    const parsed = sdk.ToolSchema.safeParse(item);
    if (parsed.success) {
      tools.push(parsed.data);
      continue;
    }
    const name = (item as { name?: unknown } | null)?.name;
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    const label = typeof name === 'string' ? `tool '${name}'` : `tool #${i + 1} of the list`;
    warn(
      `${label} is left out: the server lists it with a definition MCP does not allow (${where}${issue?.message ?? 'invalid'}; an input schema must be an object schema)`,
    );
  }
  return { tools, ...(typeof loose.nextCursor === 'string' ? { nextCursor: loose.nextCursor } : {}) };
}
