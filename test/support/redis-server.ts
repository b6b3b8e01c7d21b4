import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { checkPrograms, describeWith, REDIS_SERVER } from './system-program.js';
import { tempDir } from './temp-dir.js';

/**
 * `describe` for suites that need a real redis-server: the shared rule of `system-program.ts`
 * (missing outside CI: skipped with one line naming what to install; missing with `CI=true`: fails).
 */
export function describeWithRedis(name: string, body: () => void): void {
  describeWith(REDIS_SERVER, name, body);
}

/** A redis-server process of one test file, on a loopback port, with its data in a temp dir. */
export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` (with `default:<password>@` when started with a password). */
  readonly url: string;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and removes its dir. */
  stop(): Promise<void>;
  /** SIGKILLs it (a crash); `restart` brings it back on the same port and dir. */
  kill(): Promise<void>;
  /** Starts it again on the same port and dir (after `kill`). */
  restart(): Promise<void>;
}

export interface RedisServerOptions {
  /** `--appendonly yes` (survives `kill` + `restart`). Default false. */
  readonly appendonly?: boolean;
  /** `--requirepass`: the server needs it, and `url` carries it (`redis://default:<password>@…`), so tests can check it never leaks. */
  readonly password?: string;
  /** Extra command-line arguments. */
  readonly args?: readonly string[];
}

const live = new Set<ChildProcess>();
let exitHook = false;

/**
 * Starts redis-server on a free loopback port and waits until it answers PING. Only from a suite
 * declared with {@link describeWithRedis}: when the program is missing, this throws that rule's
 * message instead of spawning it (a suite outside the helper then fails naming the helper, rather
 * than with `spawn … ENOENT`).
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const check = checkPrograms([REDIS_SERVER]);
  if (!check.run) throw new Error(`startRedisServer called outside describeWithRedis: ${check.message}`);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const child of live) child.kill('SIGKILL');
    });
  }
  // Removed by `stop`, and after the test file at the latest (a server of a beforeAll lives that long).
  const dir = await tempDir('agentrx-redis-', { scope: 'file' });
  let port = 0;
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      options.appendonly ? 'yes' : 'no',
      '--dir',
      dir,
      ...(options.password ? ['--requirepass', options.password] : []),
      ...(options.args ?? []),
    ];
    const proc = spawn(REDIS_SERVER.path, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    // A failed spawn is reported by the exit check below, not as an unhandled 'error' event.
    proc.once('error', (e) => (output += `${e.message}\n`));
    proc.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4_000)));
    proc.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4_000)));
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    child = proc;
    const deadline = Date.now() + 10_000;
    while (!(await ping(port, options.password))) {
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new Error(`redis-server exited (${proc.exitCode ?? proc.signalCode}) on port ${port}: ${output}`);
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`redis-server did not answer PING on port ${port} within 10 s: ${output}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (e) {
      // Another process took the port between our probe and redis-server's bind: try another.
      if (attempt >= 2) throw e;
    }
  }
  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return {
    port,
    url: options.password ? `redis://default:${encodeURIComponent(options.password)}@127.0.0.1:${port}` : `redis://127.0.0.1:${port}`,
    stop: async () => {
      await terminate('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
    kill: () => terminate('SIGKILL'),
    restart: launch,
  };
}

/** Whether something on `port` answers a RESP PING with PONG (after AUTH with `password`). */
function ping(port: number, password?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let data = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(password ? `AUTH ${password}\r\nPING\r\n` : 'PING\r\n'));
    socket.on('data', (d) => {
      data += d.toString();
      // With AUTH, the PING's answer is the second line.
      const lines = data.split('\r\n');
      const want = password ? 2 : 1;
      if (lines.length > want) done(lines[want - 1] === '+PONG');
    });
  });
}

/** A free TCP port on 127.0.0.1 (the OS picks it; the listener is closed before returning). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * A TCP proxy on loopback in front of a Redis port, to fault a client's connection for real:
 * `freeze` stops forwarding both ways (a partition, or a paused process, as the server sees it),
 * `thaw` resumes, `tearOnNextReply` lets the next server reply reach the proxy but cuts the client
 * off instead of forwarding it (the command ran; the client never hears so).
 */
export interface TcpProxy {
  readonly url: string;
  freeze(): void;
  thaw(): void;
  tearOnNextReply(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let frozen = false;
  let tear: (() => void) | undefined;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => {
      if (tear) {
        const torn = tear;
        tear = undefined;
        drop();
        torn();
        return;
      }
      client.write(d);
    });
    if (frozen) {
      client.pause();
      upstream.pause();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    freeze: () => {
      frozen = true;
      for (const [a, b] of pairs) {
        a.pause();
        b.pause();
      }
    },
    thaw: () => {
      frozen = false;
      for (const [a, b] of pairs) {
        a.resume();
        b.resume();
      }
    },
    tearOnNextReply: () => new Promise<void>((resolve) => (tear = resolve)),
    close: async () => {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      server.close();
      await once(server, 'close');
    },
  };
}
