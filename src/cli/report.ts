import { AgentRxError, toAgentRxError } from '../core/errors.js';
import type { CliIo } from './cli-io.js';
import { scrubUrl } from '../distributed/redis-link.js';
import { EXIT_OK, exitCodeFor, isRedisUnreachable } from './exit-codes.js';

/**
 * Reports a command's failure: one line with the cause, one with a hint when there is one.
 * `baseUrl` is the provider's (for the "nothing answers" hint). Returns the exit code.
 */
export function report(e: unknown, io: CliIo, baseUrl: string | undefined): number {
  const err = toAgentRxError(e);
  io.err.write(`agentrx: ${err.message}\n`);
  const hint = hintFor(err, baseUrl);
  if (hint) io.err.write(`hint: ${hint}\n`);
  return exitCodeFor(err);
}

/** Runs a command body; a failure is reported (one line and a hint) and becomes the exit code. */
export async function guarded(io: CliIo, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return EXIT_OK;
  } catch (e) {
    return report(e, io, undefined);
  }
}

/** What to do about `err`, in one line, or undefined when there is nothing better to say than its message. */
function hintFor(err: AgentRxError, baseUrl: string | undefined): string | undefined {
  const status = err.details?.['status'];
  const msg = err.message;
  // An MCP server that did not start (details.server; several: details.servers), or a tool source that overran the tools phase (details.sources).
  const mcp =
    typeof err.details?.['server'] === 'string'
      ? [err.details['server']]
      : Array.isArray(err.details?.['servers'])
        ? err.details['servers'].filter((s): s is string => typeof s === 'string')
        : [];
  if (err.code === 'timeout' && mcp.length > 0) {
    return `raise ${mcp.map((s) => `mcp.servers.${s}.startTimeoutMs`).join(', ')} in a config file (-c), e.g. {"mcp":{"servers":{"${mcp[0]}":{"startTimeoutMs":180000}}}} (with --mcp ${mcp[0]}=… the command still comes from the flag); a first npx/uvx run downloads the package`;
  }
  if (err.code === 'timeout' && Array.isArray(err.details?.['sources']))
    return 'a tool source did not finish starting: raise timeouts.toolsPhaseMs in a config file (-c)';
  if (err.code === 'invalid_config' && mcp.length === 1 && / was not found /.test(msg))
    return `install it, or fix the command of --mcp ${mcp[0]}=… (or mcp.servers.${mcp[0]}.command)`;
  if (mcp.length > 0) return `check MCP server ${mcp.join(', ')}: run its command by hand to see its output, or check its url and headers under mcp.servers`;
  if (err.code === 'invalid_config') return 'fix the fields listed above (see README "Configuration")';
  if (err.code === 'invalid_options') return 'see agentrx --help';
  if (err.code === 'store_error' && /^cassette /.test(msg)) return 'a cassette is the JSON file written by agentrx sessions export or run --record';
  if (err.code === 'store_error' && /^no session /.test(msg)) return 'pass --store <dir> (or set AGENTRX_STATE_DIR) if the session was recorded elsewhere';
  if (status === 401 || status === 403) return 'the host rejected the credentials: set providers.<id>.apiKey (e.g. "${OPENAI_API_KEY}")';
  if (status === 404) return 'unknown model or path: check --model and that --base-url ends with /v1';
  if (/ECONNREFUSED|refused|ENOTFOUND|unreachable|cannot reach/i.test(msg))
    return `nothing answers at ${baseUrl ?? 'the base URL'}: is the server running? (ollama serve, vllm serve …) or pass --base-url`;
  if (err.code === 'timeout') return 'raise --timeout or limits.runTimeoutMs, or check that the host is responsive';
  if (err.code === 'max_turns_exceeded') return 'raise --max-turns or limits.maxTurns';
  if (err.code === 'unresolved_requires_action' && Array.isArray(err.details?.['toolUses']))
    return "pass --confirm allow (or --confirm deny) to answer the host's confirmation requests";
  if (/EADDRINUSE/.test(msg)) return 'another process listens on that port: pass another --port (0 picks a free one)';
  return undefined;
}

/**
 * Reports a failure of a worker-pool command (`worker`, `workers`) through `say`: the cause with
 * the Redis URL's credentials scrubbed, and a hint for an unreachable Redis or a bad config.
 * Returns the exit code.
 */
export function reportPoolError(e: unknown, url: string | undefined, say: (line: string) => void): number {
  const err = toAgentRxError(e);
  say(`error: ${url !== undefined ? scrubUrl(err.message, url) : err.message}`);
  if (isRedisUnreachable(err)) say('hint: start Redis (redis-server) or fix store.url in the config');
  else if (err.code === 'invalid_config') say('hint: fix the fields listed above (see README "Scale out")');
  return exitCodeFor(err);
}
