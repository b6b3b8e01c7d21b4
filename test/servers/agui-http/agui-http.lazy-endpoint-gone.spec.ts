import { jest } from '@jest/globals';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgUiEndpoint } from '../../../src/servers/agui-http/agui-http.endpoint.js';
import { createAgUiHandler, type AgUiHttpHandler } from '../../../src/servers/agui-http/agui-http.handler.js';
import { FakeHost } from './agui-http.fake-session.js';

/**
 * A request whose client disconnects while the endpoint's code loads (see
 * agui-http.lazy-endpoint.spec.ts; this file has its own module registry, and its first handler
 * is made after the client has gone): the endpoint never takes it up, so no body read waits on a
 * closed connection and no run starts for it.
 */
describe('an AG-UI handler whose client leaves before the endpoint code has loaded', () => {
  it('should not hand the request to the endpoint', async () => {
    const handle = jest.spyOn(AgUiEndpoint.prototype, 'handle');
    const rx = new FakeHost(() => undefined);
    let handler: AgUiHttpHandler | undefined;
    let handed!: () => void;
    const handedOver = new Promise<void>((r) => (handed = r));
    const host = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.once('close', () => {
        handler = createAgUiHandler({ rx });
        handler(req, res);
        handed();
      });
      req.socket.destroy();
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    try {
      const client = request({ host: '127.0.0.1', port: (host.address() as AddressInfo).port, method: 'POST', path: '/agent' });
      client.on('error', () => undefined);
      client.write('{"threadId":"t"');
      await handedOver;
      // close() waits for the endpoint's code, and the handler's own continuation runs before it.
      await handler?.close();
      expect(handle).not.toHaveBeenCalled();
      expect(handler?.threadCount).toBe(0);
    } finally {
      handle.mockRestore();
      host.closeAllConnections();
      await new Promise<void>((r) => host.close(() => r()));
    }
  });
});
