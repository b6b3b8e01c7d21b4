import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/cli.js';
import { startDemoModel } from '../../src/cli/demo-model.js';
import type { OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { tempDir } from '../support/temp-dir.js';
import { startModelGate, type ModelGate } from './model-gate.js';

/** A node `http` request listener (what the CopilotKit runtime's node adapter returns). */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Where the CopilotKit runtime is mounted on the app's server (same origin as the page). */
export const RUNTIME_PATH = '/api/copilotkit';

/** Listens on 127.0.0.1 with an ephemeral port and returns the port. */
async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The bundled app on loopback: its files, and (once `mount`ed) the CopilotKit runtime under {@link RUNTIME_PATH}. */
export interface AppServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Mounts the runtime's listener under {@link RUNTIME_PATH}. */
  mount(runtime: NodeHandler): void;
  close(): Promise<void>;
}

/** Serves the files of `dir` (GET, no listing) on 127.0.0.1, and the runtime once mounted. */
export async function startAppServer(dir: string): Promise<AppServer> {
  let runtime: NodeHandler | undefined;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if (path === RUNTIME_PATH || path.startsWith(`${RUNTIME_PATH}/`)) {
      if (!runtime) return void res.writeHead(503).end();
      return void Promise.resolve(runtime(req, res)).catch(() => res.destroy());
    }
    void serveFile(dir, path, res);
  });
  const port = await listen(server);
  return {
    origin: `http://127.0.0.1:${port}`,
    mount: (handler) => void (runtime = handler),
    close: () => shut(server),
  };
}

async function serveFile(dir: string, path: string, res: ServerResponse): Promise<void> {
  const file = normalize(join(dir, path === '/' ? 'index.html' : decodeURIComponent(path)));
  if (!file.startsWith(dir + sep)) return void res.writeHead(403).end();
  try {
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(body);
  } catch {
    res.writeHead(404).end();
  }
}

/**
 * `agentrx serve` run in this process by the CLI's own `serve` command, on a free loopback port,
 * answering with the embedded demo model and its demo tools (`--demo-tools`: get_time, calculate,
 * read_file, add_todo, send_email) — what `serve --demo` runs — except that the demo model is
 * reached through a {@link ModelGate}, so a test can keep a run under way, and that `get_time`
 * reads a fixed clock (`--module` fixed-clock.module.ts). Its config sets
 * `agui.reconnectGraceMs`, so a run whose client went away (a page reload) goes on for the client
 * to reattach.
 */
export interface AgentRxServe {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** `${url}agent` */
  readonly endpoint: string;
  /** The embedded demo model (its `requests` are what the model was asked). */
  readonly model: OpenAiEmulator;
  /** The gate between agentrx and the demo model. */
  readonly gate: ModelGate;
  /** What `serve` wrote to stderr so far (its request log, one JSON line per request). */
  log(): string;
  /** Stops `serve` (as SIGINT would), then the gate and the model. */
  close(): Promise<void>;
}

/** A user module binding a fixed clock for `get_time` (deterministic answers and screenshots). */
const FIXED_CLOCK_MODULE = join(dirname(fileURLToPath(import.meta.url)), 'fixed-clock.module.ts');

/** How long a run whose client left is kept for a reconnecting client. */
const RECONNECT_GRACE_MS = 60_000;

/** Starts {@link AgentRxServe}; `cors` are the origins of pages that call it from the browser. */
export async function startAgentRxServe(options: { readonly cors?: readonly string[] } = {}): Promise<AgentRxServe> {
  const model = await startDemoModel();
  const gate = await startModelGate(model.baseUrl);
  const dir = await tempDir('agentrx-copilotkit-serve-', { scope: 'file' });
  const config = join(dir, 'agentrx.json');
  // What `serve --demo` configures (src/cli/demo-model.ts onDemoModel), with the model behind the gate.
  await writeFile(
    config,
    JSON.stringify({
      provider: 'local',
      providers: { local: { baseUrl: gate.baseUrl, model: 'agentrx-demo' } },
      limits: { runTimeoutMs: 60_000 },
      agui: { reconnectGraceMs: RECONNECT_GRACE_MS },
    }),
  );
  const out = new PassThrough();
  const err = new PassThrough();
  let stderr = '';
  err.on('data', (c: Buffer) => void (stderr += c.toString()));
  const stop = new AbortController();
  const printed = new Promise<string>((resolve) => {
    let text = '';
    out.on('data', (c: Buffer) => {
      text += c.toString();
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(text);
      if (m) resolve(m[1]!);
    });
  });
  const cors = options.cors && options.cors.length > 0 ? ['--cors', ...options.cors] : [];
  const exit = runCli(['node', 'agentrx', 'serve', '--demo-tools', '--port', '0', '--config', config, '--module', FIXED_CLOCK_MODULE, ...cors], {
    out,
    err,
    env: {},
    cwd: process.cwd(),
    signal: stop.signal,
  });
  let url: string;
  try {
    url = await Promise.race([
      printed,
      exit.then((code) => {
        throw new Error(`agentrx serve exited with ${code} before listening:\n${stderr}`);
      }),
    ]);
  } catch (e) {
    await gate.close();
    await model.close();
    throw e;
  }
  return {
    url,
    endpoint: `${url}agent`,
    model,
    gate,
    log: () => stderr,
    close: async () => {
      stop.abort();
      await exit;
      await gate.close();
      await model.close();
    },
  };
}

/**
 * The CopilotKit runtime (its v2 node listener, multi-route) whose `default` agent is an AG-UI
 * `HttpAgent` (the @ag-ui/client 0.0.59 the runtime pins) to `agentEndpoint`, mounted at
 * {@link RUNTIME_PATH}. Its telemetry is off (this machine reaches no network).
 */
export async function copilotRuntimeFor(agentEndpoint: string): Promise<NodeHandler> {
  process.env['COPILOTKIT_TELEMETRY_DISABLED'] = 'true';
  // Imported here, after the variable is set: the runtime reads it when it loads.
  const { CopilotRuntime } = await import('@copilotkit/runtime/v2');
  const { createCopilotNodeListener } = await import('@copilotkit/runtime/v2/node');
  const { HttpAgent } = await import('@ag-ui/client-v0');
  const runtime = new CopilotRuntime({ agents: { default: new HttpAgent({ url: agentEndpoint }) } });
  return createCopilotNodeListener({ runtime, basePath: RUNTIME_PATH, activateChannels: false });
}
