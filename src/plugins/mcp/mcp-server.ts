import { statSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AgentRxError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { ToolContext, ToolHandler, ToolOutcome } from '../../core/plugin/tool-handler.js';
import { messageOf } from '../../core/util/async.js';
import { backoffDelay } from '../../core/util/backoff.js';
import type { McpServerOptions } from './mcp.config.js';
import { DEFAULT_MCP_QUIET_MS, type McpProgressEvent } from './mcp-progress.js';
import { toToolOutcome, type McpCallResult } from './mcp-result.js';
import type { McpSdk } from './mcp-sdk.js';
import { appendTail, describeTarget, redactedTail, redactSecrets } from './mcp-secrets.js';
import { listPage, mcpToolHandlers, type McpListedTool } from './mcp-tools.js';

/** How much of a server's stderr is kept for start-up errors (characters). */
const STDERR_TAIL_CHARS = 2_000;

/** A connection that restarted stays counted as crash-looping unless it lived this long (ms). */
const STABLE_AFTER_MS = 60_000;

/** How agentrx names itself to servers (`clientInfo` of `initialize`). */
const CLIENT_INFO = { name: 'agentrx', version: '0.1.0' };

/** Longest command line shown in a `starting` progress event (characters). */

/** An event of {@link McpProgressEvent} without what the server adds (its name, the time). */
type McpProgressStep = McpProgressEvent extends infer E ? (E extends McpProgressEvent ? Omit<E, 'server' | 'elapsedMs'> : never) : never;

/** How a server reports its start-up (see {@link McpProgressEvent}). */
export interface McpStartupReporter {
  /** Receives each event; must not throw. */
  readonly report: (event: McpProgressEvent) => void;
  /** How long a stdio server may take to answer `initialize` before its `waiting` event, in ms. */
  readonly quietMs?: number;
}

/** One live connection to the server (a new one after each restart). */
interface Conn {
  readonly client: Client;
  readonly transport: Transport & { readonly pid?: number | null };
  readonly since: number;
  /** Set when the transport closed without `stop()` asking (the server exited or dropped us). */
  exited: boolean;
}

/**
 * One configured MCP server: connects it (spawning a stdio child, or over Streamable HTTP),
 * keeps its tool list as ToolHandlers named `<server>__<tool>`, refreshes the list on
 * `notifications/tools/list_changed`, calls tools with the caller's abort signal and deadline,
 * and restarts a stdio server that exits (the shared backoff, up to `maxRestarts` in a row; calls
 * in flight get an `is_error` result "MCP server <name> exited").
 */
export class McpServer {
  private conn: Conn | undefined;
  private handlers: readonly ToolHandler[] = [];
  private stopping = false;
  private restarts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private stderrTail = '';
  /** Warnings already logged (a refresh lists the same tools again). */
  private readonly warned = new Set<string>();

  /**
   * @param options the validated server options (`name` set from its key).
   * @param onToolsChanged called after the tool list changed (a refresh, a restart, giving up).
   * @param startup where `start` reports its progress (default: nowhere).
   */
  constructor(
    private readonly options: McpServerOptions,
    private readonly sdk: McpSdk,
    private readonly logger: Logger,
    private readonly onToolsChanged: () => void,
    private readonly startup: McpStartupReporter = { report: () => undefined },
  ) {}

  get name(): string {
    return this.options.name;
  }

  /** The current tools of this server, as ToolHandlers. */
  get tools(): readonly ToolHandler[] {
    return this.handlers;
  }

  /** The pid of the stdio child while one runs (undefined over HTTP or while down). */
  get pid(): number | undefined {
    return this.conn?.transport.pid ?? undefined;
  }

  /**
   * Connects and lists the tools, all within `startTimeoutMs`. Throws naming the server (and, for
   * a stdio server, the tail of its stderr) when it cannot be started, does not answer
   * `initialize` in time (naming `mcp.servers.<name>.startTimeoutMs`), or refuses the connection
   * (an HTTP 401…); nothing is left running. Reports `starting`, then `ready` or `failed` (and, for
   * a stdio server that has not answered after `quietMs`, one `waiting` between) to the reporter.
   */
  async start(): Promise<void> {
    const o = this.options;
    const began = Date.now();
    const report = (step: McpProgressStep): void => this.startup.report({ server: this.name, elapsedMs: Date.now() - began, ...step } as McpProgressEvent);
    report({ state: 'starting', target: describeTarget(this.options), transport: o.url !== undefined ? 'http' : 'stdio' });
    // A stdio server that has not answered `initialize` after `quietMs` (a first `npx` run is
    // still downloading): said once.
    const quiet =
      o.command === undefined
        ? undefined
        : setTimeout(() => report({ state: 'waiting', startTimeoutMs: o.startTimeoutMs }), this.startup.quietMs ?? DEFAULT_MCP_QUIET_MS);
    const quietDone = (): void => clearTimeout(quiet);
    // Reported when the failure is known, before the (up to seconds long) close of the child.
    let failed = false;
    const fail = (e: unknown): void => {
      quietDone();
      if (failed) return;
      failed = true;
      report({ state: 'failed', error: messageOf(e) });
    };
    try {
      const conn = await this.connect(began + o.startTimeoutMs, fail);
      quietDone();
      this.conn = conn;
      try {
        this.handlers = await this.listWithin(conn, began + o.startTimeoutMs);
      } catch (e) {
        const error = this.startError(e);
        fail(error);
        this.conn = undefined;
        conn.exited = true;
        await closeQuietly(conn);
        throw error;
      }
    } catch (e) {
      fail(e);
      throw e;
    }
    report({ state: 'ready', tools: this.handlers.length });
  }

  /** Closes the connection; a stdio child is ended (stdin closed, then SIGTERM, then SIGKILL) and awaited. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const conn = this.conn;
    this.conn = undefined;
    if (conn) await closeQuietly(conn);
  }

  /** Calls tool `tool` of this server: the outcome the model reads; never throws but for the caller's abort. */
  async call(tool: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
    const conn = this.conn;
    if (!conn || conn.exited)
      return { content: `MCP server ${this.name} is not running (it exited and is being restarted); tool '${tool}' was not called`, isError: true };
    try {
      const result = (await conn.client.callTool({ name: tool, arguments: args }, undefined, {
        signal: ctx.signal,
        // The dispatcher enforces the deadline (and aborts, which sends notifications/cancelled);
        // the SDK's own timeout only backs it up.
        timeout: Math.max(1, ctx.deadline - Date.now() + 1_000),
      })) as McpCallResult;
      return toToolOutcome(result, this.options.maxResultChars);
    } catch (e) {
      if (conn.exited && !this.stopping)
        return { content: `MCP server ${this.name} exited while tool '${tool}' was running; it is being restarted`, isError: true };
      if (ctx.signal.aborted) throw ctx.signal.reason;
      return { content: `MCP server ${this.name}: tool '${tool}' failed: ${redactSecrets(this.options, messageOf(e))}`, isError: true };
    }
  }

  /**
   * Spawns or connects and runs `initialize`, by `deadline` (epoch ms); throws the start error
   * (given to `onFailure` first, before the connection is closed).
   */
  private async connect(deadline: number, onFailure?: (error: AgentRxError) => void): Promise<Conn> {
    const o = this.options;
    const transport = this.transport();
    const client = new this.sdk.Client(CLIENT_INFO, { capabilities: {} });
    const conn: Conn = { client, transport, since: Date.now(), exited: false };
    client.onclose = () => this.onClosed(conn);
    // Transport errors also surface as failed requests or a close; logging them is enough here.
    client.onerror = (e) => this.logger.debug(`MCP server ${this.name}: ${redactSecrets(this.options, messageOf(e))}`);
    client.setNotificationHandler(this.sdk.ToolListChangedNotificationSchema, () => this.refresh());
    try {
      // The SDK's own request timeout (60 s by default) only backs ours up: ours names the option.
      const ms = Math.max(1, deadline - Date.now());
      await within(
        client.connect(transport, { timeout: ms + 5_000 }),
        ms,
        () =>
          new AgentRxError(
            'timeout',
            `did not answer initialize within ${o.startTimeoutMs} ms (raise mcp.servers.${this.name}.startTimeoutMs if it needs longer to start)`,
          ),
      );
    } catch (e) {
      const error = this.startError(e);
      onFailure?.(error);
      conn.exited = true;
      await closeQuietly(conn);
      throw error;
    }
    return conn;
  }

  /** The tools of `conn`, listed by `deadline` (epoch ms; a `timeout` error naming the option past it). */
  private listWithin(conn: Conn, deadline: number): Promise<ToolHandler[]> {
    const o = this.options;
    const ms = Math.max(1, deadline - Date.now());
    return within(
      this.listHandlers(conn, ms + 5_000),
      ms,
      () =>
        new AgentRxError(
          'timeout',
          `did not list its tools within ${o.startTimeoutMs} ms of starting (raise mcp.servers.${this.name}.startTimeoutMs if it needs longer to start)`,
        ),
    );
  }

  private transport(): Conn['transport'] {
    const o = this.options;
    if (o.url !== undefined) {
      const headers = Object.fromEntries(Object.entries(o.headers ?? {}).map(([k, v]) => [k, v.reveal()]));
      return new this.sdk.StreamableHTTPClientTransport(new URL(o.url), { requestInit: { headers } });
    }
    this.stderrTail = '';
    const transport = new this.sdk.StdioClientTransport({
      command: o.command!,
      args: o.args ?? [],
      env: Object.fromEntries(Object.entries(o.env ?? {}).map(([k, v]) => [k, v.reveal()])),
      ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer | string) => {
      this.stderrTail = appendTail(o, this.stderrTail, chunk.toString(), STDERR_TAIL_CHARS);
    });
    return transport;
  }

  private startError(e: unknown): AgentRxError {
    const code = (e as { code?: unknown }).code;
    const status = typeof code === 'number' && code >= 400 && code < 600 ? code : undefined;
    const hint = status === 401 || status === 403 ? ` (check mcp.servers.${this.name}.headers)` : '';
    const cwd = this.options.cwd;
    // A spawn in a missing folder fails with ENOENT too, naming the command.
    const noCwd = code === 'ENOENT' && cwd !== undefined && !statSync(cwd, { throwIfNoEntry: false })?.isDirectory();
    const what = noCwd
      ? `cannot be started: its cwd '${cwd}' does not exist or is not a folder (mcp.servers.${this.name}.cwd)`
      : code === 'ENOENT'
        ? `command '${this.options.command}' was not found (is it installed and on PATH?)`
        : e instanceof AgentRxError
          ? e.message
          : status !== undefined
            ? `could not be started: HTTP ${status}${hint}: ${messageOf(e)}`
            : `could not be started: ${messageOf(e)}`;
    // Redacted before it is cut to its last characters, so no secret shows in part.
    const tail = redactedTail(this.options, this.stderrTail, STDERR_TAIL_CHARS).trim();
    const message = `${redactSecrets(this.options, `MCP server ${this.name} ${what}`)}${tail ? `; its stderr ended with:\n${tail}` : ''}`;
    return new AgentRxError(e instanceof AgentRxError ? e.code : code === 'ENOENT' ? 'invalid_config' : 'provider_error', message, { server: this.name });
  }

  /** The server's tools (every page), filtered and mapped to handlers; `timeoutMs`: the SDK's bound of each request. */
  private async listHandlers(conn: Conn, timeoutMs?: number): Promise<ToolHandler[]> {
    const listed: McpListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await listPage(conn.client, this.sdk, cursor, timeoutMs, (what) => this.warnOnce(what));
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && listed.length < 10_000);
    return mcpToolHandlers(this.name, this.options, listed, { call: (tool, input, ctx) => this.call(tool, input, ctx), warn: (what) => this.warnOnce(what) });
  }

  private warnOnce(what: string): void {
    if (this.warned.has(what)) return;
    this.warned.add(what);
    this.logger.warn(`MCP server ${this.name}: ${what}`);
  }

  /** Re-lists the tools (one refresh at a time; a notification during one runs another after it). */
  private refresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    const conn = this.conn;
    if (!conn || conn.exited) return;
    this.refreshing = this.listHandlers(conn)
      .then((handlers) => {
        if (this.conn !== conn || this.stopping) return;
        this.handlers = handlers;
        this.onToolsChanged();
      })
      .catch((e: unknown) =>
        this.logger.warn(`MCP server ${this.name}: refreshing its tool list failed; keeping the previous one`, {
          error: redactSecrets(this.options, messageOf(e)),
        }),
      )
      .finally(() => {
        this.refreshing = undefined;
        if (this.refreshAgain) {
          this.refreshAgain = false;
          this.refresh();
        }
      });
  }

  /** The transport closed: unless stopping, the server exited; restart it with the shared backoff. */
  private onClosed(conn: Conn): void {
    conn.exited = true;
    if (this.stopping || this.conn !== conn) return;
    if (Date.now() - conn.since >= STABLE_AFTER_MS) this.restarts = 0;
    this.logger.warn(`MCP server ${this.name} exited; restarting it`, { restart: this.restarts + 1, of: this.options.maxRestarts });
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.stopping) return;
    if (this.restarts >= this.options.maxRestarts) {
      this.logger.error(`MCP server ${this.name} gave up after ${this.restarts} restarts; its tools are removed`);
      this.conn = undefined;
      this.handlers = [];
      this.onToolsChanged();
      return;
    }
    // A close and a failed restart may both ask: one pending restart at a time.
    clearTimeout(this.restartTimer);
    this.restarts += 1;
    const delay = backoffDelay(this.restarts, { baseMs: this.options.restartBaseMs });
    this.restartTimer = setTimeout(() => void this.restart(), delay);
  }

  private async restart(): Promise<void> {
    if (this.stopping) return;
    try {
      const deadline = Date.now() + this.options.startTimeoutMs;
      const conn = await this.connect(deadline);
      if (this.stopping) {
        await closeQuietly(conn);
        return;
      }
      this.conn = conn;
      try {
        this.handlers = await this.listWithin(conn, deadline);
      } catch (e) {
        this.conn = undefined;
        conn.exited = true;
        await closeQuietly(conn);
        throw e;
      }
      this.logger.info(`MCP server ${this.name} restarted`);
      this.onToolsChanged();
    } catch (e) {
      this.logger.warn(`MCP server ${this.name}: restart failed`, { error: messageOf(e) });
      this.scheduleRestart();
    }
  }
}

async function closeQuietly(conn: Conn): Promise<void> {
  try {
    await conn.client.close();
  } catch {
    // Already closed or the child already gone: nothing left to release.
  }
  // A client that never finished connecting may not own the transport yet.
  try {
    await conn.transport.close();
  } catch {
    // idem
  }
}

/** `p`, or a rejection with `error()` once `ms` have passed (the timer is cleared when `p` settles). */
function within<T>(p: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}
