import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import { Command, CommanderError, Option } from 'commander';
import { AgentRx } from '../agentrx.js';
import { AgUiHttpOptions } from '../consumers/agui-http/agui-http.config.js';
import { aguiHttpModule } from '../consumers/agui-http/agui-http.module.js';
import { startAgUiServer, type AgUiServer } from '../consumers/agui-http/agui-http.server.js';
import { JsonlConsumer } from '../consumers/jsonl/jsonl.consumer.js';
import { TerminalConsumer } from '../consumers/terminal/terminal.consumer.js';
import { AgentRxError, toAgentRxError } from '../core/errors.js';
import type { EventConsumer } from '../core/plugin/event-consumer.js';
import type { ConfirmTool } from '../core/session/session-options.js';
import { demoToolsModule } from '../plugins/tools/tools.module.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../testing/openai-emulator.js';

/** Streams and environment of one CLI invocation (tests pass their own). */
export interface CliIo {
  readonly out: Writable & { isTTY?: boolean };
  readonly err: Writable;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Stops a long-running command (`serve`) when aborted, like SIGINT/SIGTERM do (tests, embedding). */
  readonly signal?: AbortSignal;
}

/** The prompt `agentrx demo` (and `npm start`) runs when none is given. */
export const DEMO_PROMPT = 'What time is it, what is (17 + 25) * 3, and what does README.md say?';

const EXIT_OK = 0;
const EXIT_RUN_FAILED = 1;
const EXIT_USAGE = 2;

interface RunFlags {
  config?: string;
  provider?: string;
  model?: string;
  baseUrl?: string;
  json?: boolean;
  timeout?: string;
  maxTurns?: string;
  confirm?: 'allow' | 'deny';
}

/**
 * The `agentrx` command. Returns the exit code: 0 success, 1 failed run, 2 bad usage or config.
 * Every failure prints one line with the cause and one with a hint.
 */
export async function runCli(argv: readonly string[], io: CliIo = { out: process.stdout, err: process.stderr, env: process.env, cwd: process.cwd() }): Promise<number> {
  let code = EXIT_OK;
  const program = new Command('agentrx')
    .description('Run LLM agent sessions against any loop host; custom tools run locally.')
    .version(version(), '-v, --version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out.write(s), writeErr: (s) => io.err.write(s) })
    .showHelpAfterError('(run agentrx --help for usage)');

  program
    .command('run')
    .description('run one prompt to its end and print the answer')
    .argument('<prompt>', 'what to ask the agent')
    .option('-c, --config <file>', 'JSON config file (${VAR} interpolation applies)')
    .addOption(new Option('-p, --provider <id>', 'provider id').choices(['local', 'claude-managed-agents', 'bedrock-agentcore']))
    .option('-m, --model <model>', 'model id sent to the host')
    .option('-u, --base-url <url>', "the provider's base URL (e.g. http://127.0.0.1:11434/v1 for Ollama)")
    .option('--timeout <ms>', 'run timeout in milliseconds')
    .option('--max-turns <n>', 'turn limit')
    .addOption(new Option('--confirm <decision>', "answer the host's requests to confirm a tool of its own (Claude Managed Agents always_ask)").choices(['allow', 'deny']))
    .option('--json', 'print AG-UI events as JSON lines instead of text')
    .action(async (prompt: string, flags: RunFlags) => {
      code = await runCommand(prompt, flags, io);
    });

  program
    .command('demo')
    .description('run a demo session on an embedded, rule-based model: no keys, no network')
    .argument('[prompt]', 'what to ask the demo model', DEMO_PROMPT)
    .option('--json', 'print AG-UI events as JSON lines instead of text')
    .action(async (prompt: string, flags: { json?: boolean }) => {
      code = await demoCommand(prompt, flags, io);
    });

  program
    .command('serve')
    .description('serve the AG-UI endpoint (POST /agent, SSE or protobuf) and a chat page (GET /) until SIGINT/SIGTERM')
    .option('--port <n>', 'TCP port; 0 picks a free one (default 8787, or agui.port of the config)')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1, or agui.host of the config)')
    .option('--token <token>', 'require Authorization: Bearer <token> on POST /agent (default: $AGENTRX_TOKEN, or agui.token of the config)')
    .option('--cors <origins...>', 'origins allowed to call the endpoint from another site, e.g. https://app.example')
    .option('--demo', 'answer with the embedded rule-based demo model and demo tools: no keys, no network')
    .option('-c, --config <file>', 'JSON config file (provider, agent, limits, and an "agui" section for the endpoint)')
    .addOption(new Option('--confirm <decision>', "answer the host's requests to confirm a tool of its own (Claude Managed Agents always_ask) for every run").choices(['allow', 'deny']))
    .action(async (flags: ServeFlags) => {
      code = await serveCommand(flags, io);
    });

  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help' ? EXIT_OK : EXIT_USAGE;
    }
    throw e;
  }
  return code;
}

async function runCommand(prompt: string, flags: RunFlags, io: CliIo): Promise<number> {
  const overrides: Record<string, unknown> = {};
  if (flags.provider) overrides['provider'] = flags.provider;
  const timeoutMs = flags.timeout !== undefined ? Number(flags.timeout) : undefined;
  const maxTurns = flags.maxTurns !== undefined ? Number(flags.maxTurns) : undefined;
  let rx: AgentRx | undefined;
  try {
    const base = flags.config ? readConfigFile(flags.config, io) : {};
    const config = mergeConfig(base, flags);
    rx = await AgentRx.create({ config, env: io.env, modules: [demoToolsModule], consumers: consumersFor(flags.json === true, config, io), handleSignals: true });
    const result = await rx.run({ prompt, timeoutMs, maxTurns, ...(flags.confirm ? { confirmTool: confirmFlag(flags.confirm) } : {}) });
    return result.terminal === 'terminated' ? EXIT_RUN_FAILED : EXIT_OK;
  } catch (e) {
    return report(e, io, flags.baseUrl);
  } finally {
    await rx?.stop();
  }
}

async function demoCommand(prompt: string, flags: { json?: boolean }, io: CliIo): Promise<number> {
  const emulator = await startOpenAiEmulator({ model: 'demo' });
  let rx: AgentRx | undefined;
  try {
    if (!flags.json) io.err.write(`agentrx demo: a rule-based demo model on ${emulator.baseUrl} (no keys, no network)\n`);
    const config = { provider: 'local', providers: { local: { baseUrl: emulator.baseUrl, model: 'agentrx-demo' } }, limits: { runTimeoutMs: 30_000 } };
    rx = await AgentRx.create({ config, env: io.env, modules: [demoToolsModule], consumers: consumersFor(flags.json === true, {}, io), handleSignals: true });
    const result = await rx.run({ prompt });
    return result.terminal === 'terminated' ? EXIT_RUN_FAILED : EXIT_OK;
  } catch (e) {
    return report(e, io, emulator.baseUrl);
  } finally {
    await rx?.stop();
    await emulator.close();
  }
}

interface ServeFlags {
  port?: string;
  host?: string;
  token?: string;
  cors?: string[];
  demo?: boolean;
  confirm?: 'allow' | 'deny';
  config?: string;
}

/**
 * `agentrx serve`: one AgentRx instance behind the AG-UI endpoint; prints the page URL on stdout,
 * runs until SIGINT/SIGTERM (or `io.signal`), then closes the server, the sessions and the emulator.
 */
async function serveCommand(flags: ServeFlags, io: CliIo): Promise<number> {
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;
  let server: AgUiServer | undefined;
  try {
    const base = flags.config ? readConfigFile(flags.config, io) : {};
    let config: Record<string, any> = base;
    if (flags.demo) {
      emulator = await startOpenAiEmulator({ model: 'demo' });
      config = {
        ...base,
        provider: 'local',
        providers: { ...(base['providers'] ?? {}), local: { baseUrl: emulator.baseUrl, model: 'agentrx-demo' } },
        limits: { runTimeoutMs: 30_000, ...(base['limits'] ?? {}) },
      };
    }
    rx = await AgentRx.create({ config, env: io.env, modules: [demoToolsModule, aguiHttpModule] });
    const fromConfig = rx.container.isBound(AgUiHttpOptions) ? rx.container.get<AgUiHttpOptions>(AgUiHttpOptions) : undefined;
    const token = flags.token ?? io.env['AGENTRX_TOKEN'];
    server = await startAgUiServer({
      ...fromConfig,
      rx,
      ...(flags.port !== undefined ? { port: Number(flags.port) } : {}),
      ...(flags.host !== undefined ? { host: flags.host } : {}),
      ...(token !== undefined && token !== '' ? { token } : {}),
      ...(flags.cors !== undefined ? { cors: flags.cors } : {}),
      ...(flags.confirm !== undefined ? { confirmTool: confirmFlag(flags.confirm) } : {}),
    });
    const opts = server.handler.options;
    io.out.write(`${server.url}\n`);
    io.err.write(`agentrx serve: chat page ${server.url}, AG-UI endpoint POST ${server.url}agent${emulator ? `, demo model on ${emulator.baseUrl}` : ''}${opts.token ? ', bearer token required' : ''}; Ctrl+C stops\n`);
    if (!opts.token && !isLoopback(opts.host)) io.err.write(`agentrx serve: warning: listening on ${opts.host} without a token; anyone who can reach it can run the agent (set --token or AGENTRX_TOKEN)\n`);
    await untilStopped(io.signal);
    io.err.write('agentrx serve: stopping\n');
    return EXIT_OK;
  } catch (e) {
    return report(e, io, emulator?.baseUrl);
  } finally {
    await server?.close();
    await rx?.stop();
    await emulator?.close();
  }
}

/** Resolves on SIGINT, SIGTERM or when `signal` aborts; removes its listeners. */
function untilStopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    signal?.addEventListener('abort', stop, { once: true });
    if (signal?.aborted) stop();
  });
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function consumersFor(json: boolean, config: Record<string, unknown>, io: CliIo): EventConsumer[] {
  const consumers = (config['consumers'] ?? {}) as { terminal?: boolean; jsonl?: boolean };
  if (json || consumers.jsonl === true) return [new JsonlConsumer(io.out)];
  return consumers.terminal === false ? [] : [new TerminalConsumer({ out: io.out })];
}

function readConfigFile(path: string, io: CliIo): Record<string, unknown> {
  const file = isAbsolute(path) ? path : resolve(io.cwd, path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new AgentRxError('invalid_config', `cannot read config file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the top level must be a JSON object');
    return parsed as Record<string, unknown>;
  } catch (e) {
    throw new AgentRxError('invalid_config', `config file ${path} is not valid JSON: ${(e as Error).message.replace(/"[^"]{20,}"/g, '"…"')}`);
  }
}

/** Applies --provider/--model/--base-url on top of the file config. */
function mergeConfig(base: Record<string, unknown>, flags: RunFlags): Record<string, unknown> {
  const config: Record<string, any> = structuredClone(base);
  if (flags.provider) config['provider'] = flags.provider;
  const provider = String(config['provider'] ?? 'local');
  if (flags.model) config['agent'] = { ...(config['agent'] ?? {}), model: flags.model };
  if (flags.baseUrl) {
    config['providers'] = { ...(config['providers'] ?? {}) };
    config['providers'][provider] = { ...(config['providers'][provider] ?? {}), baseUrl: flags.baseUrl };
  }
  return config;
}

/** One line with the cause, one with a hint; returns the exit code. */
function report(e: unknown, io: CliIo, baseUrl: string | undefined): number {
  const err = toAgentRxError(e);
  const usage = err.code === 'invalid_config' || err.code === 'invalid_options' || err.code === 'unknown_plugin' || err.code === 'duplicate_plugin' || err.code === 'outcome_unsupported';
  io.err.write(`agentrx: ${err.message}\n`);
  const hint = hintFor(err, baseUrl);
  if (hint) io.err.write(`hint: ${hint}\n`);
  return usage ? EXIT_USAGE : EXIT_RUN_FAILED;
}

/** The `confirmTool` of `--confirm allow|deny`: the same decision for every request. */
function confirmFlag(decision: 'allow' | 'deny'): ConfirmTool {
  return () => ({ allow: decision === 'allow', denyMessage: 'denied from the agentrx command line (--confirm deny)' });
}

function hintFor(err: AgentRxError, baseUrl: string | undefined): string | undefined {
  const status = err.details?.['status'];
  const msg = err.message;
  if (err.code === 'invalid_config') return 'fix the fields listed above (see README "Configuration")';
  if (err.code === 'invalid_options') return 'see agentrx run --help';
  if (status === 401 || status === 403) return 'the host rejected the credentials: set providers.<id>.apiKey (e.g. "${OPENAI_API_KEY}")';
  if (status === 404) return 'unknown model or path: check --model and that --base-url ends with /v1';
  if (/ECONNREFUSED|refused|ENOTFOUND|unreachable|cannot reach/i.test(msg)) return `nothing answers at ${baseUrl ?? 'the base URL'}: is the server running? (ollama serve, vllm serve …) or pass --base-url`;
  if (err.code === 'timeout') return 'raise --timeout or limits.runTimeoutMs, or check that the host is responsive';
  if (err.code === 'max_turns_exceeded') return 'raise --max-turns or limits.maxTurns';
  if (err.code === 'unresolved_requires_action' && Array.isArray(err.details?.['toolUses'])) return 'pass --confirm allow (or --confirm deny) to answer the host\'s confirmation requests';
  if (/EADDRINUSE/.test(msg)) return 'another process listens on that port: pass another --port (0 picks a free one)';
  return undefined;
}

function version(): string {
  try {
    const here = dirname(fileURLToPath(import.meta.url));
    return (JSON.parse(readFileSync(join(here, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
