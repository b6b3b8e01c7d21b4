/**
 * A TCP proxy in front of a redis-server that stops a process's Redis traffic at one chosen
 * command: the fault specs route a worker child's connections through it to stop the worker
 * between two of its writes, deterministically, then SIGKILL it (or SIGSTOP it and let its held
 * writes through later, as a paused worker's late writes).
 */
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** Where the trap stops: after the matching command reached Redis, or before (held until `release`). */
export type TrapMode = 'after' | 'before';

/** See {@link startWireTrap}. */
export interface WireTrap {
  /** `redis://127.0.0.1:<port>` of the proxy. */
  readonly url: string;
  /**
   * Arms the trap: at the first client→Redis chunk containing `pattern`, every connection stops
   * forwarding (replies included), and what clients send from then on is held. `after`: that
   * chunk is forwarded first; `before`: it is held too. Resolves at that moment.
   */
  armOn(pattern: string, mode?: TrapMode): Promise<void>;
  /** Forwards everything held, in order, and goes on forwarding. */
  release(): void;
  /** Closes the proxy and every connection through it. */
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  /** Client→Redis chunks held while the trap is sprung. */
  readonly held: Buffer[];
}

/** Starts a {@link WireTrap} in front of the redis-server on loopback port `targetPort`. */
export async function startWireTrap(targetPort: number): Promise<WireTrap> {
  const pairs = new Set<Pair>();
  let sprung = false;
  let armed: { pattern: string; mode: TrapMode; spring: () => void } | undefined;
  const spring = (): void => {
    sprung = true;
    // Replies stay unread in Redis's socket: nothing reaches the client until `release`.
    for (const p of pairs) p.upstream.pause();
    const trap = armed;
    armed = undefined;
    trap?.spring();
  };
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    const pair: Pair = { client, upstream, held: [] };
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    // The end of the previous chunk: a pattern split across two chunks still matches.
    let tail = '';
    client.on('data', (d: Buffer) => {
      if (sprung) {
        pair.held.push(d);
        return;
      }
      const text = tail + d.toString('latin1');
      const hit = armed !== undefined && text.includes(armed.pattern);
      tail = armed && !hit ? text.slice(-armed.pattern.length) : '';
      if (hit && armed!.mode === 'before') pair.held.push(d);
      else upstream.write(d);
      if (hit) spring();
    });
    upstream.on('data', (d: Buffer) => void client.write(d));
    if (sprung) upstream.pause();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    armOn: (pattern, mode = 'after') => new Promise<void>((resolve) => (armed = { pattern, mode, spring: resolve })),
    release: () => {
      sprung = false;
      for (const p of pairs) {
        for (const d of p.held.splice(0)) p.upstream.write(d);
        p.upstream.resume();
      }
    },
    close: async () => {
      for (const p of pairs) {
        p.client.destroy();
        p.upstream.destroy();
      }
      server.close();
      await once(server, 'close');
    },
  };
}
