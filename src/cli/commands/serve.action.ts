import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentRx } from '../../agentrx.js';
import { AgentRxError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { LiveSession } from '../../core/plugin/live-session.js';
import { exportCassette, writeCassette } from '../../core/store/cassette.js';
import type { PoolMetrics } from '../../distributed/distributed-metrics.js';
import { PoolMonitor } from '../../distributed/pool-monitor.js';
import { redactUrl } from '../../distributed/redis-link.js';
import { redisStoreConfigOf } from '../../distributed/redis-store/redis-store.config.js';
import { RuntimeConfigToken, type RuntimeConfig } from '../../distributed/runtime.config.js';
import { demoAgUiToolsModule } from '../../plugins/tools/tools.module.js';
import { AgUiHttpOptions } from '../../servers/agui-http/agui-http.config.js';
import { startAgUiServer, type AgUiServer } from '../../servers/agui-http/agui-http.server.js';
import type { OpenAiEmulator } from '../../testing/openai-emulator.js';
import type { CliIo } from '../cli-io.js';
import { onDemoModel, startDemoModel } from '../demo-model.js';
import { EXIT_OK } from '../exit-codes.js';
import { integerFlag, pathFrom } from '../flags.js';
import { report } from '../report.js';
import { confirmFlag, demoTools, readConfig } from '../run-config.js';
import { openRunStore, storeModule } from '../run-store.js';
import { untilStopped } from '../until-stopped.js';
import { loadUserPlugins } from '../user-modules.js';
import type { ServeFlags } from './serve.js';
/**
 * `agentrx serve`: one AgentRx instance behind the AG-UI endpoint; prints the page URL on stdout,
 * runs until SIGINT/SIGTERM (or `io.signal`), then closes the server, the sessions and the emulator.
 */
export async function serveCommand(flags: ServeFlags, io: CliIo): Promise<number> {
  const recordings: Promise<void>[] = [];
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;
  let server: AgUiServer | undefined;
  let monitor: PoolMonitor | undefined;
  let gauges: PoolMetrics | undefined;
  try {
    const base = flags.config ? await readConfig(flags.config, io) : {};
    if ((base['runtime'] as { mode?: unknown } | undefined)?.mode === 'distributed') checkDistributedServeFlags(flags);
    let config = base;
    if (flags.demo) {
      emulator = await startDemoModel();
      config = onDemoModel(base, emulator.baseUrl);
    }
    const runStore = openRunStore(base, { store: flags.store }, io);
    const user = await loadUserPlugins(flags.module ?? [], base, flags.config, io.cwd);
    // The demo tools, and with them add_todo (shared state) and send_email (approval), which an AG-UI client takes part in.
    const withDemoTools = flags.demo === true || flags.demoTools === true;
    const modules = [
      ...demoTools(withDemoTools, io.cwd),
      ...(withDemoTools ? [demoAgUiToolsModule] : []),
      ...user.modules,
      ...(runStore ? [storeModule(runStore)] : []),
    ];
    rx = await AgentRx.create({ config, env: io.env, modules, tools: user.tools, consumers: user.consumers });
    const store = rx.sessionStore;
    const recordDir = flags.record !== undefined ? pathFrom(io.cwd, flags.record) : undefined;
    // Each session is written once it has closed (its log is then complete and durable).
    const onSession = recordDir
      ? (session: LiveSession): void => {
          recordings.push(
            session.closed
              .then(async () => {
                if (session.sessionId === undefined) return;
                await mkdir(recordDir, { recursive: true });
                await writeCassette(join(recordDir, `${encodeURIComponent(session.sessionId)}.json`), await exportCassette(store, session.sessionId));
              })
              .catch((e: unknown) => void io.err.write(`agentrx serve: could not record session ${session.sessionId ?? '?'}: ${(e as Error).message}\n`)),
          );
        }
      : undefined;
    const runtime = rx.container.get<RuntimeConfig>(RuntimeConfigToken);
    const distributed = runtime.mode === 'distributed';
    if (distributed) {
      // The pool's gauges (queue depth, live workers and their sessions) on the global MeterProvider.
      monitor = await PoolMonitor.connect({ redis: redisStoreConfigOf(rx.config.store, 'agentrx serve'), queueName: runtime.queueName });
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
    const pool = distributed
      ? `, sessions on the worker pool (queue ${runtime.queueName} on ${redactUrl(redisStoreConfigOf(rx.config.store, 'agentrx serve').url)}; agentrx worker runs them)`
      : '';
    io.err.write(
      `agentrx serve: chat page ${server.url}, AG-UI endpoint POST ${server.url}agent${emulator ? `, demo model on ${emulator.baseUrl}` : ''}${opts.token ? ', bearer token required' : ''}${runStore?.durable ? `, sessions in ${runStore.where}` : ''}${pool}; Ctrl+C stops\n`,
    );
    if (!opts.token && !isLoopback(opts.host))
      io.err.write(
        `agentrx serve: warning: listening on ${opts.host} without a token; anyone who can reach it can run the agent (set --token or AGENTRX_TOKEN)\n`,
      );
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
    ...(flags.demo
      ? ["--demo: the demo model would run in this process, but the workers run the sessions; point the workers' config at a model (e.g. the Local provider)"]
      : []),
    ...(flags.record !== undefined ? ['--record: the sessions run on the workers; export one with agentrx sessions export <id> against the Redis store'] : []),
    ...(flags.store !== undefined ? ['--store: the sessions are in the Redis store of the config (store.url)'] : []),
    ...(flags.confirm !== undefined
      ? ['--confirm: a confirmation answer cannot travel to the workers; run the endpoint with runtime.mode "embedded" to answer confirmations']
      : []),
  ];
  if (problems.length > 0)
    throw new AgentRxError('invalid_options', `agentrx serve with runtime.mode 'distributed' cannot take:\n${problems.map((p) => `- ${p}`).join('\n')}`, {
      problems,
    });
}

/** `serve`'s request log: one JSON line per request on stderr (`agentrx serve: {"msg":"agui request",…}`). */
function requestLog(io: CliIo): Logger {
  const line =
    (level: string) =>
    (msg: string, fields?: Record<string, unknown>): void =>
      void io.err.write(`agentrx serve: ${JSON.stringify({ level, msg, ...fields })}\n`);
  return { debug: () => undefined, info: line('info'), warn: line('warn'), error: line('error') };
}

/** True for a host only this machine reaches: listening elsewhere without a token is warned about. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}
