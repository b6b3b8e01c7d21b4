import { createServer, request as httpRequest, type Agent as HttpAgent, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { AxiosError } from 'axios';
import { HttpClientFactoryImpl, isSecretHeader } from '../../../src/core/http/http-client-factory.js';
import { isTransientError } from '../../../src/core/http/retry.js';

const SECRET = 'sk-test-secret-value-1234';

/** A loopback server: `/ok` echoes the request headers, `/denied` answers 401, `/hang` never answers. */
async function startServer(): Promise<{ server: Server; baseURL: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/v1/ok') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    } else if (req.url === '/v1/denied') {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'no' } }));
    }
    // '/v1/hang': never answered.
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, seen, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

describe('HttpClientFactoryImpl', () => {
  // axios loads at first use: `create` needs it loaded.
  beforeAll(() => new HttpClientFactoryImpl().ready());

  let srv: Awaited<ReturnType<typeof startServer>>;

  beforeEach(async () => {
    srv = await startServer();
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => {
      srv.server.close(() => resolve());
      srv.server.closeAllConnections();
    });
  });

  describe('.create', () => {
    describe('when called with a base URL and secret headers', () => {
      it('should send the headers on every request without keeping them in the instance defaults', async () => {
        const client = new HttpClientFactoryImpl().create({ baseURL: srv.baseURL, headers: { Authorization: `Bearer ${SECRET}`, 'X-Tenant': 't1' } });
        const res = await client.get('ok');
        expect(res.data).toEqual({ ok: true });
        expect(srv.seen[0]).toMatchObject({ authorization: `Bearer ${SECRET}`, 'x-tenant': 't1' });
        expect(JSON.stringify(client.defaults.headers)).not.toContain(SECRET);
        expect(inspect(client, { depth: 8 })).not.toContain(SECRET);
      });

      it('should let a per-request header override a factory header', async () => {
        const client = new HttpClientFactoryImpl().create({ baseURL: srv.baseURL, headers: { 'X-Tenant': 't1' } });
        await client.get('ok', { headers: { 'X-Tenant': 't2' } });
        expect(srv.seen[0]!['x-tenant']).toBe('t2');
      });
    });

    describe('when a request is started', () => {
      it("should hand it to the transport in the caller's turn, not after a promise hop", async () => {
        const client = new HttpClientFactoryImpl().create({ baseURL: srv.baseURL, headers: { Authorization: `Bearer ${SECRET}` } });
        let started = false;
        const transport = {
          request: (...args: Parameters<typeof httpRequest>) => {
            started = true;
            return httpRequest(...args);
          },
        };
        const pending = client.get('ok', { transport });
        expect(started).toBe(true);
        await expect(pending).resolves.toMatchObject({ status: 200 });
        expect(srv.seen.at(-1)?.authorization).toBe(`Bearer ${SECRET}`);
      });
    });

    describe('when two clients send requests one after the other', () => {
      it('should reuse one pooled connection whose keep-alive probe delay matches the one axios sets per request', async () => {
        const factory = new HttpClientFactoryImpl();
        const a = factory.create({ baseURL: srv.baseURL });
        const b = factory.create({ baseURL: srv.baseURL });
        const ports: number[] = [];
        srv.server.on('request', (req: IncomingMessage) => ports.push(req.socket.remotePort ?? -1));
        const first = await a.get('ok');
        const second = await b.get('ok');
        expect(ports).toHaveLength(2);
        expect(ports[1]).toBe(ports[0]);
        const agent = first.config.httpAgent as HttpAgent & { readonly keepAliveMsecs: number };
        expect(second.config.httpAgent).toBe(agent);
        expect(agent.keepAliveMsecs).toBe(60_000);
      });
    });

    describe('when a request fails with an HTTP status', () => {
      it('should reject with an AxiosError whose inspect and JSON output hold no secret', async () => {
        const client = new HttpClientFactoryImpl().create({ baseURL: srv.baseURL, headers: { Authorization: `Bearer ${SECRET}` } });
        const error: unknown = await client.get('denied').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(AxiosError);
        const e = error as AxiosError;
        expect(e.response?.status).toBe(401);
        expect(e.config?.headers['Authorization']).toBe('[redacted]');
        expect(inspect(e, { depth: 10 })).not.toContain(SECRET);
        expect(JSON.stringify(e)).not.toContain(SECRET);
        expect(isTransientError(e)).toBe(false);
      });
    });

    describe('when the server does not answer within timeoutMs', () => {
      it('should reject with a transient ETIMEDOUT error', async () => {
        const client = new HttpClientFactoryImpl().create({ baseURL: srv.baseURL, timeoutMs: 50 });
        const error = (await client.get('hang').catch((e: unknown) => e)) as AxiosError;
        expect(error.code).toBe('ETIMEDOUT');
        expect(isTransientError(error)).toBe(true);
      });
    });
  });

  describe('isSecretHeader', () => {
    describe('when called with header names in any case', () => {
      it('should flag credentials only', () => {
        expect(['Authorization', 'x-api-key', 'Cookie', 'Proxy-Authorization'].map(isSecretHeader)).toEqual([true, true, true, true]);
        expect(['Content-Type', 'X-Tenant'].map(isSecretHeader)).toEqual([false, false]);
      });
    });
  });
});
