import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBodyText } from '../../../src/core/http/read-body-text.js';

describe('readBodyText', () => {
  let server: Server | undefined;

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  async function body(handler: (res: ServerResponse) => void): Promise<IncomingMessage> {
    server = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      handler(res);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as AddressInfo;
    return new Promise((resolve) => get(`http://127.0.0.1:${port}/`, resolve));
  }

  describe('when the body is longer than maxChars', () => {
    it('should resolve with its first maxChars characters, a split UTF-8 character kept whole', async () => {
      const text = '✓'.repeat(40);
      const bytes = Buffer.from(text, 'utf8');
      const res = await body((r) => {
        r.write(bytes.subarray(0, 4));
        r.end(bytes.subarray(4));
      });
      await expect(readBodyText(res, 10)).resolves.toBe('✓'.repeat(10));
    });
  });

  describe('when the body breaks before its end', () => {
    it('should resolve with the text that arrived', async () => {
      const res = await body((r) => void r.write('{"error":', () => r.destroy()));
      await expect(readBodyText(res)).resolves.toBe('{"error":');
    });
  });

  describe('when the body is silent longer than timeoutMs', () => {
    it('should destroy it and resolve with the text that arrived', async () => {
      const res = await body((r) => void r.write('partial'));
      await expect(readBodyText(res, 100, 50)).resolves.toBe('partial');
      expect(res.destroyed).toBe(true);
    });
  });
});
