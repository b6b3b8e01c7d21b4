import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAgUiHandler, loadAgUiEndpoint, type AgUiHandlerOptions, type AgUiHttpHandler } from './agui-http.handler.js';

/** Options of {@link startAgUiServer}: the handler's options; `port` and `host` say where to listen. */
export type AgUiServerOptions = AgUiHandlerOptions;

/** A running AG-UI endpoint. */
export interface AgUiServer {
  /** Base URL, e.g. `http://127.0.0.1:8787/`: the page is here, the endpoint at `${url}agent`. */
  readonly url: string;
  /** The port actually bound (useful with `port: 0`). */
  readonly port: number;
  /** The request handler behind the server (its `activeRuns`, `threadCount`, `options`). */
  readonly handler: AgUiHttpHandler;
  /**
   * Stops accepting connections, cancels every session (open streams get RUN_ERROR `cancelled`),
   * then closes every connection (`server.closeAllConnections()`) and resolves once the server
   * has closed. Idempotent. The `rx` instance is the caller's to stop.
   */
  close(): Promise<void>;
}

/**
 * Starts a `node:http` server with {@link createAgUiHandler} on `host` (default `127.0.0.1`) and
 * `port` (default 8787; 0 = ephemeral). Rejects with `invalid_config` for bad options, or with
 * the listen error (e.g. EADDRINUSE).
 */
export async function startAgUiServer(options: AgUiServerOptions): Promise<AgUiServer> {
  // The endpoint's code is in place before the port opens: the first request does not wait for it.
  await loadAgUiEndpoint();
  const handler = createAgUiHandler(options);
  const { host, port } = handler.options;
  const server = createServer(handler);
  // Runs stream for as long as the agent works: no request or idle timeout on them.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${bound}/`,
    port: bound,
    handler,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await handler.close();
        server.closeAllConnections();
        await closed;
      })()),
  };
}
