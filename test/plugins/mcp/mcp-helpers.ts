import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { validateConfig } from '../../../src/core/config/load-config.js';
import type { Logger } from '../../../src/core/logger.js';
import type { ToolResult } from '../../../src/core/model.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { ToolDispatcher, type DispatchOptions } from '../../../src/core/tools/tool-dispatcher.js';
import { ToolLedger } from '../../../src/core/tools/tool-ledger.js';
import type { ToolLookup } from '../../../src/core/tools/tool-registry.js';
import { mcpConfigSection, type McpOptions } from '../../../src/plugins/mcp/mcp.config.js';

const require = createRequire(import.meta.url);

/** Entry point of the real `mcp-server-everything` (stdio by default; `streamableHttp` as argv[2]). */
export const EVERYTHING = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
/** Entry point of the real `mcp-server-filesystem` (allowed directories as arguments). */
export const FILESYSTEM = join(dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')), 'dist', 'index.js');

/** A stdio server entry running `script` with this Node. */
export const nodeServer = (script: string, ...args: string[]): Record<string, unknown> => ({ command: process.execPath, args: [script, ...args] });

/** The validated `mcp` section for `servers` (as the facade would bind it). */
export function mcpOptions(servers: Record<string, unknown>): McpOptions {
  return validateConfig({ mcp: { servers } }, [mcpConfigSection]).sections.get('mcp') as McpOptions;
}

/** A Logger that keeps every line (level, message, fields as JSON). */
export class RecordingLogger implements Logger {
  readonly lines: string[] = [];
  debug(m: string, f?: Record<string, unknown>): void {
    this.lines.push(`debug ${m} ${JSON.stringify(f ?? {})}`);
  }
  info(m: string, f?: Record<string, unknown>): void {
    this.lines.push(`info ${m} ${JSON.stringify(f ?? {})}`);
  }
  warn(m: string, f?: Record<string, unknown>): void {
    this.lines.push(`warn ${m} ${JSON.stringify(f ?? {})}`);
  }
  error(m: string, f?: Record<string, unknown>): void {
    this.lines.push(`error ${m} ${JSON.stringify(f ?? {})}`);
  }
}

/** True while process `pid` exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `cond` until it holds or `timeoutMs` passes (then throws naming `what`). */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs one tool use through a real ToolDispatcher over `tools`. */
export async function callTool(
  tools: readonly ToolHandler[] | ToolLookup,
  name: string,
  input: Record<string, unknown>,
  extra: Partial<DispatchOptions> = {},
): Promise<ToolResult> {
  const [r] = await new ToolDispatcher(tools).dispatch([{ id: `call-${Math.random().toString(36).slice(2)}`, name, input }], {
    sessionId: 's',
    signal: new AbortController().signal,
    toolTimeoutMs: 10_000,
    concurrency: 1,
    ledger: new ToolLedger(),
    persist: async () => undefined,
    ...extra,
  });
  return r!;
}
