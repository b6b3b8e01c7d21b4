import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TaskScheduler } from '../../src/core/util/time-slice-scheduler.js';

/** How a {@link LoopbackBody} answers: status, content type, and whether the head is flushed before the handler writes. */
export interface LoopbackResponse {
  readonly status?: number;
  readonly contentType?: string;
  readonly flushHeaders?: boolean;
}

/**
 * A loopback HTTP server whose one GET's response body a test reads as a stream (real sockets, no
 * mocked client): `body(handler)` serves `handler` and resolves with the client's
 * IncomingMessage; `responseClosed` resolves when the server's response closes; `close()` ends it.
 */
export class LoopbackBody {
  private server: Server | undefined;
  /** Resolves when the last served response closed (the client destroyed the body, or it ended). */
  responseClosed: Promise<void> = Promise.resolve();

  /** Serves `handler` on 127.0.0.1 and returns the response body of one GET. */
  async body(handler: (res: ServerResponse) => void, response: LoopbackResponse = {}): Promise<IncomingMessage> {
    let closed!: () => void;
    this.responseClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = createServer((_req, res) => {
      res.on('close', closed);
      res.writeHead(response.status ?? 200, { 'content-type': response.contentType ?? 'text/event-stream' });
      if (response.flushHeaders) res.flushHeaders();
      handler(res);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as AddressInfo;
    return new Promise((resolve) => get(`http://127.0.0.1:${port}/`, resolve));
  }

  /** Drops every connection and closes the server (call it in `afterEach`). */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A scheduler that runs its tasks only when told to (`runAll`). */
export class ManualScheduler implements TaskScheduler {
  readonly tasks: (() => void)[] = [];
  schedule(task: () => void): void {
    this.tasks.push(task);
  }
  runAll(): void {
    for (let task = this.tasks.shift(); task !== undefined; task = this.tasks.shift()) task();
  }
}
