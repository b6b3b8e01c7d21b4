import { accessSync, constants as fsConstants, mkdirSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import { Command, CommanderError, Option } from 'commander';
import { AgentRx } from '../agentrx.js';
import { AgUiHttpOptions } from '../consumers/agui-http/agui-http.config.js';
import { startAgUiServer, type AgUiServer } from '../consumers/agui-http/agui-http.server.js';
import { JsonlConsumer } from '../consumers/jsonl/jsonl.consumer.js';
import { TerminalConsumer } from '../consumers/terminal/terminal.consumer.js';
import { readConfigFile } from '../core/config/read-config-file.js';
import { AgentRxError, toAgentRxError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { ContainerModule } from '../core/util/inversify.js';
import type { ConsumerContext, EventConsumer } from '../core/plugin/event-consumer.js';
import type { Session } from '../core/session/session.js';
import type { ConfirmTool } from '../core/session/session-options.js';
import { FileSessionStore } from '../core/store/file-session-store.js';
import { MemorySessionStore } from '../core/store/memory-session-store.js';
import { SessionStore } from '../core/store/session-store.js';
import { demoToolsModule } from '../plugins/tools/tools.module.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../testing/openai-emulator.js';
import { exportCassette, writeCassette } from '../core/store/cassette.js';
import { MAX_PACE_GAP_MS, exportSession, listSessions, openStore, replayFile, showSession, type RenderFormat } from './sessions.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, exitCodeFor } from './exit-codes.js';
import { storeLocation } from './state-dir.js';
import { listTools, mcpProgressTo, withMcpFlags } from './mcp.js';
import { loadUserPlugins } from './user-modules.js';
import { integerFlag } from './flags.js';
import { runWorkerCommand, untilStopped, WORKER_TIMING_FLAGS } from './worker.js';
import { runWorkersCommand } from './workers.js';
import { PoolMonitor } from '../distributed/pool-monitor.js';
import type { PoolMetrics } from '../distributed/distributed-metrics.js';
import { redactUrl } from '../distributed/redis-link.js';

/** Streams and environment of one CLI invocation (tests pass their own). */
export interface CliIo {
  readonly out: Writable & { isTTY?: boolean };
  readonly err: Writable;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Stops a long-running command (`serve`) when aborted, like SIGINT/SIGTERM do (tests, embedding). */
  readonly signal?: AbortSignal;
  /**
   * The session store to use instead of the file store in the state directory (tests, embedding):
   * `run` binds it, the `sessions` commands read it.
   */
  readonly store?: SessionStore;
}

/** The prompt `agentrx demo` (and `npm start`) runs when none is given. */
export const DEMO_PROMPT = 'What time is it, what is (17 + 25) * 3, and what does README.md say?';

/** Model requests the embedded demo model keeps for inspection: a long-running `serve --demo` must not grow without end. */
const DEMO_RECORD_LIMIT = 50;

interface RunFlags {
  config?: string;
  provider?: string;
  model?: string;
  baseUrl?: string;
  json?: boolean;
  timeout?: string;
  maxTurns?: string;
  confirm?: 'allow' | 'deny';
  store?: string;
  resume?: string;
  record?: string;
  /** `--mcp <name>=<command …>`, repeatable: MCP servers for this run. */
  mcp?: string[];
  /** `--module <file>`, repeatable: ES modules exporting tools, modules, consumers. */
  module?: string[];
  /** `--demo-tools`: also offer the demo tools (get_time, calculate, read_file on the working folder). */
  demoTools?: boolean;
}

const MODULE_HELP = 'an ES module exporting tools, modules and/or consumers to load (repeatable; the config\'s "modules" adds more)';
const DEMO_TOOLS_HELP = 'also offer the demo tools get_time, calculate and read_file (which reads files under the working folder)';

/** Flags of `sessions show` and `replay`: how to print a recorded session. */
interface RenderFlags {
  json?: boolean;
  agui?: boolean;
  store?: string;
}

const STORE_HELP = 'session store directory (default: $AGENTRX_STATE_DIR, else $XDG_STATE_HOME/agentrx, else ~/.local/state/agentrx)';

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
    .option('--resume <id>', 'continue the recorded session <id> with this prompt (agentrx sessions ls lists them)')
    .option('--record <file>', 'write the session to a cassette file when the run ends (see agentrx replay)')
    .option('--store <dir>', STORE_HELP)
    .option('--mcp <server>', "an MCP server for this run, '<name>=<command …>' (repeatable), e.g. --mcp 'files=npx -y @modelcontextprotocol/server-filesystem .'", collect, [])
    .option('--module <file>', MODULE_HELP, collect, [])
    .option('--demo-tools', DEMO_TOOLS_HELP)
    .action(async (prompt: string, flags: RunFlags) => {
      code = await runCommand(prompt, flags, io);
    });

  program
    .command('tools')
    .description('list every tool the configured instance offers (local, schema-defined, MCP) with its input schema')
    .option('-c, --config <file>', 'JSON config file (${VAR} interpolation applies)')
    .option('--mcp <server>', "also an MCP server, '<name>=<command …>' (repeatable)", collect, [])
    .option('--module <file>', MODULE_HELP, collect, [])
    .option('--demo-tools', DEMO_TOOLS_HELP)
    .option('--json', 'print the tools as JSON')
    .action(async (flags: { config?: string; mcp: string[]; module: string[]; demoTools?: boolean; json?: boolean }) => {
      code = await guarded(io, async () => {
        const base = flags.config ? await readConfig(flags.config, io) : {};
        const user = await loadUserPlugins(flags.module, base, flags.config, io.cwd);
        const rx = await AgentRx.create({ config: withMcpFlags(base, flags.mcp), env: io.env, tools: user.tools, consumers: user.consumers, modules: [...demoTools(flags.demoTools), ...user.modules, mcpProgressTo(io.err)] });
        try {
          io.out.write(listTools(rx, { json: flags.json === true }));
        } finally {
          await rx.stop();
        }
      });
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
    .option('--store <dir>', STORE_HELP)
    .option('--record <dir>', 'write each session to <dir>/<session id>.json (a cassette) when it closes (see agentrx replay)')
    .option('--module <file>', MODULE_HELP, collect, [])
    .option('--demo-tools', `${DEMO_TOOLS_HELP} (on with --demo)`)
    .action(async (flags: ServeFlags) => {
      code = await serveCommand(flags, io);
    });

  const sessions = program.command('sessions').description('list, show and export the sessions in the store');
  sessions
    .command('ls')
    .description('list the sessions: id, provider, status, turns, updated (newest first)')
    .option('--json', 'one JSON object per line')
    .option('--store <dir>', STORE_HELP)
    .action(async (flags: { json?: boolean; store?: string }) => {
      code = await guarded(io, () => listSessions(openStore(flags.store, io), flags.json === true, io));
    });
  sessions
    .command('show')
    .description("render a session's log as it ran")
    .argument('<id>', 'session id (agentrx sessions ls)')
    .option('--json', 'print the envelopes of the log as JSON lines')
    .option('--agui', 'print the AG-UI events as JSON lines')
    .option('--store <dir>', STORE_HELP)
    .action(async (id: string, flags: RenderFlags) => {
      code = await guarded(io, () => showSession(openStore(flags.store, io), id, renderFormat(flags), io));
    });
  sessions
    .command('export')
    .description('write a session (record and whole log) as a cassette: JSON { version, record, envelopes }')
    .argument('<id>', 'session id (agentrx sessions ls)')
    .option('-o, --output <file>', 'cassette file to write (default: stdout)')
    .option('--store <dir>', STORE_HELP)
    .action(async (id: string, flags: { output?: string; store?: string }) => {
      code = await guarded(io, () => exportSession(openStore(flags.store, io), id, flags.output, io));
    });

  program
    .command('replay')
    .description('render a recorded session (a cassette) through the normal consumers, offline')
    .argument('<file>', 'cassette file (agentrx sessions export, or run --record)')
    .option('--json', 'print the envelopes of the log as JSON lines')
    .option('--agui', 'print the AG-UI events as JSON lines')
    .option('--pace', `wait the recorded time between events (at most ${MAX_PACE_GAP_MS / 1000}s per gap)`)
    .action(async (file: string, flags: RenderFlags & { pace?: boolean }) => {
      code = await guarded(io, () => replayFile(file, renderFormat(flags), flags.pace === true, io));
    });

  program
    .command('worker')
    .description('run sessions from the queue (Redis + BullMQ) until SIGTERM; config needs store: { type: "redis", url }')
    .requiredOption('-c, --config <file>', 'JSON config file (store: { type: "redis", url }, runtime: { queueName, concurrency, idleMs, graceMs })')
    .option('--concurrency <n>', 'sessions run at once (default runtime.concurrency, 10)')
    .option(...WORKER_TIMING_FLAGS.lockMs)
    .option(...WORKER_TIMING_FLAGS.stalledMs)
    .option('--module <file>', MODULE_HELP, collect, [])
    .option('--demo-tools', DEMO_TOOLS_HELP)
    .action(async (flags: { config: string; concurrency?: string; lockMs?: string; stalledMs?: string; module: string[]; demoTools?: boolean }) => {
      const { config, ...rest } = flags;
      code = await runWorkerCommand({ configFile: config, ...rest }, io);
    });

  program
    .command('workers')
    .description('list the live workers of the pool (sessions, lease ages, last heartbeat) and the queue depth')
    .requiredOption('-c, --config <file>', 'JSON config file of the workers (store: { type: "redis", url }, runtime.queueName)')
    .option('--json', 'print one JSON object { at, queue, workers } instead of a table')
    .action(async (flags: { config: string; json?: boolean }) => {
      code = await runWorkersCommand({ configFile: flags.config, json: flags.json === true }, io);
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
  let rx: AgentRx | undefined;
  let runStore: RunStore | undefined;
  const probe = new SessionIdProbe();
  let code: number;
  try {
    const timeoutMs = integerFlag('--timeout', flags.timeout, 1);
    const maxTurns = integerFlag('--max-turns', flags.maxTurns, 1);
    const base = flags.config ? await readConfig(flags.config, io) : {};
    runStore = openRunStore(base, flags, io);
    let provider = flags.provider;
    if (flags.resume !== undefined) {
      const record = runStore ? await runStore.store.load(flags.resume) : undefined;
      if (!record) throw new AgentRxError('store_error', `no session '${flags.resume}' in ${runStore?.where ?? 'the store'} to resume (agentrx sessions ls lists them)`, { sessionId: flags.resume });
      const chosen = provider ?? (typeof base['provider'] === 'string' ? base['provider'] : undefined);
      if (chosen !== undefined && chosen !== record.provider) throw new AgentRxError('invalid_options', `session '${flags.resume}' ran on provider '${record.provider}'; it cannot be resumed with '${chosen}'`);
      provider = record.provider;
    }
    const config = withMcpFlags(mergeConfig(base, { ...flags, provider }), flags.mcp ?? []);
    const user = await loadUserPlugins(flags.module ?? [], base, flags.config, io.cwd);
    const modules = [...demoTools(flags.demoTools), ...user.modules, ...(runStore ? [storeModule(runStore.store)] : []), mcpProgressTo(io.err)];
    rx = await AgentRx.create({ config, env: io.env, modules, tools: user.tools, consumers: [...user.consumers, ...consumersFor(flags.json === true, config, io), probe], handleSignals: true });
    const result = await rx.run({
      prompt,
      timeoutMs,
      maxTurns,
      ...(flags.resume !== undefined ? { sessionId: flags.resume } : {}),
      ...(flags.confirm ? { confirmTool: confirmFlag(flags.confirm) } : {}),
    });
    probe.sessionId ??= result.sessionId;
    code = result.terminal === 'terminated' ? EXIT_FAILED : EXIT_OK;
  } catch (e) {
    code = report(e, io, flags.baseUrl);
  }
  try {
    const sessionId = probe.sessionId;
    if (flags.record !== undefined && runStore && sessionId !== undefined) {
      const file = isAbsolute(flags.record) ? flags.record : resolve(io.cwd, flags.record);
      const cassette = await exportCassette(runStore.store, sessionId);
      await writeCassette(file, cassette);
      io.err.write(`agentrx: session ${sessionId} recorded to ${flags.record} (${cassette.envelopes.length} events; agentrx replay ${flags.record})\n`);
    } else if (flags.record !== undefined) {
      io.err.write(`agentrx: nothing recorded to ${flags.record}: the session never opened\n`);
    }
    if (runStore?.durable && sessionId !== undefined) io.err.write(`agentrx: session ${sessionId} is in ${runStore.where}; continue it with: agentrx run --resume ${sessionId} "<prompt>"\n`);
  } catch (e) {
    code = Math.max(code, report(e, io, undefined));
  } finally {
    await rx?.stop();
  }
  return code;
}

/** The store a `run` uses, and where it is (for messages). */
interface RunStore {
  readonly store: SessionStore;
  readonly where: string;
  /** Kept on disk: the session can be resumed by a later command. */
  readonly durable: boolean;
}

/**
 * The store of `run`: `io.store`; else the config file's `store` section (unless `--store`);
 * else the file store in the state directory ({@link storeLocation}). When that directory cannot
 * be created or written, a plain run goes on in memory with a warning; `--store` and `--resume`
 * fail instead. Undefined when the config's section is malformed: `AgentRx.create` reports it.
 */
function openRunStore(config: Record<string, unknown>, flags: RunFlags, io: CliIo): RunStore | undefined {
  if (io.store) return { store: io.store, where: 'the configured store', durable: true };
  const memory = (): RunStore => ({ store: new MemorySessionStore(), where: 'memory', durable: false });
  const section = config['store'] as { type?: unknown; dir?: unknown } | undefined;
  if (flags.store === undefined && section !== undefined) {
    if (typeof section === 'object' && section !== null && section.type === 'file' && typeof section.dir === 'string' && section.dir !== '') {
      const dir = isAbsolute(section.dir) ? section.dir : resolve(io.cwd, section.dir);
      return { store: fileStore(dir, io), where: dir, durable: true };
    }
    return typeof section === 'object' && section !== null && (section.type === 'memory' || section.type === undefined) && section.dir === undefined ? memory() : undefined;
  }
  const loc = storeLocation(flags.store, io.env, io.cwd);
  if (!loc) {
    if (flags.resume !== undefined) throw new AgentRxError('invalid_options', 'no state directory to resume from: pass --store <dir>, or set AGENTRX_STATE_DIR, XDG_STATE_HOME or HOME');
    return memory();
  }
  try {
    mkdirSync(loc.dir, { recursive: true });
    accessSync(loc.dir, fsConstants.W_OK);
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    if (flags.store !== undefined || flags.resume !== undefined) throw new AgentRxError('store_error', `cannot use the session store ${loc.dir}: ${why}`, { dir: loc.dir });
    io.err.write(`agentrx: warning: cannot use the session store ${loc.dir} (${why}, from ${loc.from}); this session is kept in memory only\n`);
    return memory();
  }
  return { store: fileStore(loc.dir, io), where: loc.dir, durable: true };
}

function fileStore(dir: string, io: CliIo): SessionStore {
  return new FileSessionStore(dir, (file, reason) => io.err.write(`agentrx: warning: ${file}: ${reason}\n`));
}

/** Binds `store` as the SessionStore (the core module then binds none of its own). */
function storeModule(store: SessionStore): ContainerModule {
  return new ContainerModule((options) => void options.bind<SessionStore>(SessionStore).toConstantValue(store));
}

/** Remembers the session id of the run (also when it fails), for `--record` and the resume hint. */
class SessionIdProbe implements EventConsumer {
  readonly id = 'cli-session-id';
  sessionId: string | undefined;
  onEvent(_ev: unknown, ctx: ConsumerContext): void {
    this.sessionId ??= ctx.sessionId;
  }
}

/** `--json` (the envelopes), `--agui` (AG-UI JSON lines) or the terminal renderer. */
function renderFormat(flags: RenderFlags): RenderFormat {
  if (flags.json && flags.agui) throw new AgentRxError('invalid_options', '--json and --agui cannot be combined: --json prints the envelopes, --agui the AG-UI events');
  return flags.json ? 'envelopes' : flags.agui ? 'agui' : 'terminal';
}

/** Runs a command body; a failure is reported (one line and a hint) and becomes the exit code. */
async function guarded(io: CliIo, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return EXIT_OK;
  } catch (e) {
    return report(e, io, undefined);
  }
}

async function demoCommand(prompt: string, flags: { json?: boolean }, io: CliIo): Promise<number> {
  const emulator = await startOpenAiEmulator({ model: 'demo', recordLimit: DEMO_RECORD_LIMIT });
  let rx: AgentRx | undefined;
  try {
    if (!flags.json) io.err.write(`agentrx demo: a rule-based demo model on ${emulator.baseUrl} (no keys, no network)\n`);
    const config = { provider: 'local' as const, providers: { local: { baseUrl: emulator.baseUrl, model: 'agentrx-demo' } }, limits: { runTimeoutMs: 30_000 } };
    rx = await AgentRx.create({ config, env: io.env, modules: [demoToolsModule], consumers: consumersFor(flags.json === true, {}, io), handleSignals: true });
    const result = await rx.run({ prompt });
    return result.terminal === 'terminated' ? EXIT_FAILED : EXIT_OK;
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
  store?: string;
  record?: string;
  module?: string[];
  demoTools?: boolean;
}

/**
 * `agentrx serve`: one AgentRx instance behind the AG-UI endpoint; prints the page URL on stdout,
 * runs until SIGINT/SIGTERM (or `io.signal`), then closes the server, the sessions and the emulator.
 */
async function serveCommand(flags: ServeFlags, io: CliIo): Promise<number> {
  const recordings: Promise<void>[] = [];
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;
  let server: AgUiServer | undefined;
  let monitor: PoolMonitor | undefined;
  let gauges: PoolMetrics | undefined;
  try {
    const base = flags.config ? await readConfig(flags.config, io) : {};
    if ((base['runtime'] as { mode?: unknown } | undefined)?.mode === 'distributed') checkDistributedServeFlags(flags);
    let config: Record<string, any> = base;
    if (flags.demo) {
      emulator = await startOpenAiEmulator({ model: 'demo', recordLimit: DEMO_RECORD_LIMIT });
      config = {
        ...base,
        provider: 'local',
        providers: { ...(base['providers'] ?? {}), local: { baseUrl: emulator.baseUrl, model: 'agentrx-demo' } },
        limits: { runTimeoutMs: 30_000, ...(base['limits'] ?? {}) },
      };
    }
    const runStore = openRunStore(base, { store: flags.store }, io);
    const user = await loadUserPlugins(flags.module ?? [], base, flags.config, io.cwd);
    const modules = [...demoTools(flags.demo === true || flags.demoTools), ...user.modules, ...(runStore ? [storeModule(runStore.store)] : [])];
    rx = await AgentRx.create({ config, env: io.env, modules, tools: user.tools, consumers: user.consumers });
    const store = rx.sessionStore;
    const recordDir = flags.record !== undefined ? (isAbsolute(flags.record) ? flags.record : resolve(io.cwd, flags.record)) : undefined;
    // Each session is written once it has closed (its log is then complete and durable).
    const onSession = recordDir
      ? (session: Session): void => {
          recordings.push(
            session.closed.then(async () => {
              if (session.sessionId === undefined) return;
              await mkdir(recordDir, { recursive: true });
              await writeCassette(join(recordDir, `${encodeURIComponent(session.sessionId)}.json`), await exportCassette(store, session.sessionId));
            }).catch((e: unknown) => void io.err.write(`agentrx serve: could not record session ${session.sessionId ?? '?'}: ${(e as Error).message}\n`)),
          );
        }
      : undefined;
    const distributed = rx.config.runtime.mode === 'distributed';
    if (distributed) {
      // The pool's gauges (queue depth, live workers and their sessions) on the global MeterProvider.
      monitor = await PoolMonitor.connect({ redis: { url: rx.config.store.url!, keyPrefix: rx.config.store.keyPrefix }, queueName: rx.config.runtime.queueName });
      gauges = monitor.registerMetrics();
    }
    const fromConfig = rx.container.isBound(AgUiHttpOptions) ? rx.container.get<AgUiHttpOptions>(AgUiHttpOptions) : undefined;
    const token = flags.token ?? io.env['AGENTRX_TOKEN'];
    server = await startAgUiServer({
      ...fromConfig,
      rx,
      ...(flags.port !== undefined ? { port: integerFlag('--port', flags.port, 0, 65_535) } : {}),
      ...(flags.host !== undefined ? { host: flags.host } : {}),
      ...(token !== undefined && token !== '' ? { token } : {}),
      ...(flags.cors !== undefined ? { cors: flags.cors } : {}),
      ...(flags.confirm !== undefined ? { confirmTool: confirmFlag(flags.confirm) } : {}),
      ...(onSession ? { onSession } : {}),
      logger: requestLog(io),
    });
    const opts = server.handler.options;
    io.out.write(`${server.url}\n`);
    io.err.write(`agentrx serve: chat page ${server.url}, AG-UI endpoint POST ${server.url}agent${emulator ? `, demo model on ${emulator.baseUrl}` : ''}${opts.token ? ', bearer token required' : ''}${runStore?.durable ? `, sessions in ${runStore.where}` : ''}${distributed ? `, sessions on the worker pool (queue ${rx.config.runtime.queueName} on ${redactUrl(rx.config.store.url!)}; agentrx worker runs them)` : ''}; Ctrl+C stops\n`);
    if (!opts.token && !isLoopback(opts.host)) io.err.write(`agentrx serve: warning: listening on ${opts.host} without a token; anyone who can reach it can run the agent (set --token or AGENTRX_TOKEN)\n`);
    await untilStopped(io.signal);
    io.err.write('agentrx serve: stopping\n');
    return EXIT_OK;
  } catch (e) {
    return report(e, io, emulator?.baseUrl);
  } finally {
    await server?.close();
    gauges?.stop();
    await monitor?.close();
    await rx?.stop();
    await Promise.all(recordings);
    await emulator?.close();
  }
}

/**
 * `serve` in `runtime.mode: 'distributed'`: the workers run the sessions, so the flags that act on
 * sessions in this process are refused, each with what to do instead.
 */
function checkDistributedServeFlags(flags: ServeFlags): void {
  const problems = [
    ...(flags.demo ? ["--demo: the demo model would run in this process, but the workers run the sessions; point the workers' config at a model (e.g. the Local provider)"] : []),
    ...(flags.record !== undefined ? ['--record: the sessions run on the workers; export one with agentrx sessions export <id> against the Redis store'] : []),
    ...(flags.store !== undefined ? ['--store: the sessions are in the Redis store of the config (store.url)'] : []),
    ...(flags.confirm !== undefined ? ['--confirm: a confirmation answer cannot travel to the workers; run the endpoint with runtime.mode "embedded" to answer confirmations'] : []),
  ];
  if (problems.length > 0) throw new AgentRxError('invalid_options', `agentrx serve with runtime.mode 'distributed' cannot take:\n${problems.map((p) => `- ${p}`).join('\n')}`, { problems });
}

/** `serve`'s request log: one JSON line per request on stderr (`agentrx serve: {"msg":"agui request",…}`). */
function requestLog(io: CliIo): Logger {
  const line = (level: string) => (msg: string, fields?: Record<string, unknown>): void => void io.err.write(`agentrx serve: ${JSON.stringify({ level, msg, ...fields })}\n`);
  return { debug: () => undefined, info: line('info'), warn: line('warn'), error: line('error') };
}

/** The demo tools' module when asked for (`demo`, `serve --demo`, `--demo-tools`), else none. */
function demoTools(on: boolean | undefined): ContainerModule[] {
  return on === true ? [demoToolsModule] : [];
}

/** Commander's collector of a repeatable option. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function consumersFor(json: boolean, config: Record<string, unknown>, io: CliIo): EventConsumer[] {
  const consumers = (config['consumers'] ?? {}) as { terminal?: boolean; jsonl?: boolean };
  if (json || consumers.jsonl === true) return [new JsonlConsumer(io.out)];
  return consumers.terminal === false ? [] : [new TerminalConsumer({ out: io.out })];
}

/**
 * The config file of `--config`, read by the library's reader: it locates a JSON syntax error by
 * position, line and column and never quotes the file text (V8's parse message does, and the text
 * around the error may be an API key).
 */
async function readConfig(path: string, io: CliIo): Promise<Record<string, unknown>> {
  return (await readConfigFile(isAbsolute(path) ? path : resolve(io.cwd, path))) as Record<string, unknown>;
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
  io.err.write(`agentrx: ${err.message}\n`);
  const hint = hintFor(err, baseUrl);
  if (hint) io.err.write(`hint: ${hint}\n`);
  return exitCodeFor(err);
}

/** The `confirmTool` of `--confirm allow|deny`: the same decision for every request. */
function confirmFlag(decision: 'allow' | 'deny'): ConfirmTool {
  return () => ({ allow: decision === 'allow', denyMessage: 'denied from the agentrx command line (--confirm deny)' });
}

function hintFor(err: AgentRxError, baseUrl: string | undefined): string | undefined {
  const status = err.details?.['status'];
  const msg = err.message;
  // An MCP server that did not start (details.server; several: details.servers), or a tool source that overran the tools phase (details.sources).
  const mcp = typeof err.details?.['server'] === 'string' ? [err.details['server']] : Array.isArray(err.details?.['servers']) ? err.details['servers'].filter((s): s is string => typeof s === 'string') : [];
  if (err.code === 'timeout' && mcp.length > 0) {
    return `raise ${mcp.map((s) => `mcp.servers.${s}.startTimeoutMs`).join(', ')} in a config file (-c), e.g. {"mcp":{"servers":{"${mcp[0]}":{"startTimeoutMs":180000}}}} (with --mcp ${mcp[0]}=… the command still comes from the flag); a first npx/uvx run downloads the package`;
  }
  if (err.code === 'timeout' && Array.isArray(err.details?.['sources'])) return 'a tool source did not finish starting: raise timeouts.toolsPhaseMs in a config file (-c)';
  if (err.code === 'invalid_config' && mcp.length === 1 && / was not found /.test(msg)) return `install it, or fix the command of --mcp ${mcp[0]}=… (or mcp.servers.${mcp[0]}.command)`;
  if (mcp.length > 0) return `check MCP server ${mcp.join(', ')}: run its command by hand to see its output, or check its url and headers under mcp.servers`;
  if (err.code === 'invalid_config') return 'fix the fields listed above (see README "Configuration")';
  if (err.code === 'invalid_options') return 'see agentrx --help';
  if (err.code === 'store_error' && /^cassette /.test(msg)) return 'a cassette is the JSON file written by agentrx sessions export or run --record';
  if (err.code === 'store_error' && /^no session /.test(msg)) return 'pass --store <dir> (or set AGENTRX_STATE_DIR) if the session was recorded elsewhere';
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
