import type { Writable } from 'node:stream';
import { AgentRxError } from '../core/errors.js';
import type { ContainerModule } from '../core/util/inversify.js';
import { MCP_SERVER_NAME } from '../plugins/mcp/mcp.config.js';
import { formatMcpProgress, mcpProgressModule } from '../plugins/mcp/mcp-progress.js';

/** One `--mcp` flag as a `mcp.servers` entry. */
export interface McpFlagServer {
  readonly name: string;
  readonly server: { readonly command: string; readonly args: string[] };
}

/**
 * Parses one `--mcp '<name>=<command …>'` value (`files=npx -y @modelcontextprotocol/server-filesystem .`)
 * into a stdio server entry. The command line is split like a POSIX shell splits words (single
 * and double quotes, backslash escapes), without expansion: it is never run through a shell.
 * Throws `invalid_options` saying what is wrong.
 */
export function parseMcpFlag(value: string): McpFlagServer {
  const eq = value.indexOf('=');
  const name = eq < 0 ? '' : value.slice(0, eq).trim();
  if (eq < 0 || !MCP_SERVER_NAME.test(name)) {
    throw new AgentRxError(
      'invalid_options',
      `--mcp ${JSON.stringify(value)}: expected <name>=<command …> with a name of letters, digits and "-" (e.g. --mcp 'files=npx -y @modelcontextprotocol/server-filesystem .')`,
    );
  }
  const words = splitWords(value.slice(eq + 1), `--mcp ${name}`);
  if (words.length === 0) throw new AgentRxError('invalid_options', `--mcp ${name}: no command after "="`);
  return { name, server: { command: words[0]!, args: words.slice(1) } };
}

/**
 * Every `--mcp` flag (repeatable) merged into `config`'s `mcp.servers` (a copy; `config` is left
 * as it is). A config entry of that name with neither `command` nor `url` holds options for the
 * flag's server (`{ "files": { "startTimeoutMs": 180000 } }` with `--mcp 'files=npx …'`): the
 * flag adds the command to it. A name given twice, or one the config already has with a `command`
 * or `url`, is an `invalid_options` error.
 */
export function withMcpFlags(config: Readonly<Record<string, unknown>>, flags: readonly string[]): Record<string, unknown> {
  if (flags.length === 0) return { ...config };
  const mcp = (typeof config.mcp === 'object' && config.mcp !== null ? config.mcp : {}) as Record<string, unknown>;
  const servers = { ...((typeof mcp.servers === 'object' && mcp.servers !== null ? mcp.servers : {}) as Record<string, unknown>) };
  const flagged = new Set<string>();
  for (const flag of flags) {
    const { name, server } = parseMcpFlag(flag);
    const existing = servers[name];
    const optionsOnly = typeof existing === 'object' && existing !== null && !Array.isArray(existing) && !('command' in existing) && !('url' in existing);
    if (flagged.has(name) || (existing !== undefined && !optionsOnly)) {
      throw new AgentRxError('invalid_options', `--mcp ${name}: a server named '${name}' is already configured; pick another name`);
    }
    flagged.add(name);
    servers[name] = optionsOnly ? { ...existing, ...server } : server;
  }
  return { ...config, mcp: { ...mcp, servers } };
}

/**
 * The MCP start-up progress of `run` and `tools` on `err` (stderr): one line per server and state
 * change, `agentrx: mcp files: starting (npx -y @modelcontextprotocol/server-filesystem .)`, then
 * `agentrx: mcp files: ready, 14 tools in 8.2 s` or `… failed after 60.0 s` (and once, for a
 * stdio server that has not answered after a few seconds, that it may be downloading packages).
 * A module for `AgentRx.create`'s `modules` (for `run` and `tools` to pass).
 */
export function mcpProgressTo(err: Writable, opts: { readonly quietMs?: number } = {}): ContainerModule {
  return mcpProgressModule((e) => err.write(`agentrx: ${formatMcpProgress(e)}\n`), opts);
}

/** Shell-like word splitting without expansion: quotes group, backslash escapes (not inside single quotes). */
function splitWords(line: string, what: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (c === '\\' && i + 1 < line.length && (quote === undefined || '"\\$`'.includes(line[i + 1]!))) {
      word += line[++i];
      inWord = true;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new AgentRxError('invalid_options', `${what}: unterminated ${quote} quote in the command`);
  if (inWord) words.push(word);
  return words;
}
