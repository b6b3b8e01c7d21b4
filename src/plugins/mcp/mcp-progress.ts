import { ContainerModule } from '../../core/util/inversify.js';

/**
 * Token of the {@link McpProgressOptions} the MCP tool source reports each server's start-up to
 * (optional; bind it with {@link mcpProgressModule}). Unbound, the source logs each event at
 * `info` level instead (`logLevel: "info"` shows them).
 */
export const McpProgressToken = Symbol('McpProgress');

/** Default time a stdio server may take to answer `initialize` before its `waiting` event, in ms. */
export const DEFAULT_MCP_QUIET_MS = 3_000;

/**
 * One step of one server's start-up, reported once per state change: `starting`, then at most
 * one `waiting` (a stdio server that has not answered `initialize` for a while: a first
 * `npx`/`uvx` run is downloading its package), then `ready` or `failed`.
 */
export type McpProgressEvent = {
  /** The server's name (its key in `mcp.servers`). */
  readonly server: string;
  /** Time since this server's start-up began, in ms. */
  readonly elapsedMs: number;
} & (
  | {
      readonly state: 'starting';
      /** The command line of a stdio server (`npx -y @modelcontextprotocol/server-filesystem .`), or the URL of an HTTP one (no query). */
      readonly target: string;
      readonly transport: 'stdio' | 'http';
    }
  | {
      readonly state: 'waiting';
      /** The server's `startTimeoutMs`: how long start-up still waits in all. */
      readonly startTimeoutMs: number;
    }
  | {
      readonly state: 'ready';
      /** How many of its tools are offered. */
      readonly tools: number;
    }
  | {
      readonly state: 'failed';
      /** The start-up error's message (secrets redacted). */
      readonly error: string;
    }
);

/** Where the MCP tool source reports start-up progress. */
export interface McpProgressOptions {
  /** Called once per event; a listener that throws is logged and ignored. */
  readonly onProgress: (event: McpProgressEvent) => void;
  /** How long a stdio server may take to answer `initialize` before its `waiting` event, in ms (default {@link DEFAULT_MCP_QUIET_MS}). */
  readonly quietMs?: number;
}

/**
 * A module binding {@link McpProgressToken}: the MCP tool source then reports each server's
 * start-up to `onProgress` (and no longer logs it at `info`).
 *
 * ```ts
 * const rx = await AgentRx.create({ config, modules: [mcpProgressModule((e) => console.error(formatMcpProgress(e)))] });
 * ```
 */
export function mcpProgressModule(onProgress: (event: McpProgressEvent) => void, opts: { readonly quietMs?: number } = {}): ContainerModule {
  const options: McpProgressOptions = { onProgress, ...(opts.quietMs !== undefined ? { quietMs: opts.quietMs } : {}) };
  return new ContainerModule((o) => {
    o.bind<McpProgressOptions>(McpProgressToken).toConstantValue(options);
  });
}

/**
 * One line for an event, without a trailing newline:
 * `mcp files: starting (npx -y @modelcontextprotocol/server-filesystem .)`,
 * `mcp files: no answer yet after 3.0 s; it may be downloading packages (first npx run), waiting up to 60 s (mcp.servers.files.startTimeoutMs)`,
 * `mcp files: ready, 14 tools in 8.2 s`, `mcp files: failed after 60.0 s`.
 */
export function formatMcpProgress(e: McpProgressEvent): string {
  const head = `mcp ${e.server}: `;
  switch (e.state) {
    case 'starting':
      return `${head}starting (${e.target})`;
    case 'waiting':
      return `${head}no answer yet after ${seconds(e.elapsedMs)}; it may be downloading packages (first npx run), waiting up to ${seconds(e.startTimeoutMs, true)} (mcp.servers.${e.server}.startTimeoutMs)`;
    case 'ready':
      return `${head}ready, ${e.tools} tool${e.tools === 1 ? '' : 's'} in ${seconds(e.elapsedMs)}`;
    case 'failed':
      return `${head}failed after ${seconds(e.elapsedMs)}`;
  }
}

/** `8.2 s`; `60 s` for a whole number of seconds when `whole` is set. */
function seconds(ms: number, whole = false): string {
  const s = ms / 1000;
  return `${whole && Number.isInteger(s) ? String(s) : s.toFixed(1)} s`;
}
