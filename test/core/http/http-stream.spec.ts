import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { gzipSync } from 'node:zlib';
import { jest } from '@jest/globals';
import axios, { AxiosError, type AxiosAdapter, type AxiosInstance, type AxiosResponse } from 'axios';
import { HttpClientFactoryImpl, streamRequest, type HttpClientFactory } from '../../../src/core/http/http-client-factory.js';
import { isTransientError } from '../../../src/core/http/retry.js';

const SECRET = 'sk-stream-secret-value-5678';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A loopback server: `/v1/sse` streams two frames and ends, `/v1/open` sends headers and one frame
 * then stays open, `/v1/hang` never answers, `/v1/denied` answers 401, `/v1/gzip` answers a
 * gzip-encoded body. A request whose URL is absolute (what a client sends to a proxy) is answered
 * `proxied`.
 */
async function startServer(): Promise<{ server: Server; baseURL: string; port: number; seen: Seen[]; open: ServerResponse[] }> {
  const seen: Seen[] = [];
  const open: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (s: string) => (body += s));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.url?.startsWith('http://')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('proxied');
      } else if (req.url?.startsWith('/v1/sse')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"n":1}\n\n');
        res.end('data: [DONE]\n\n');
      } else if (req.url === '/v1/open') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"n":1}\n\n');
        open.push(res);
      } else if (req.url === '/v1/denied') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'no' } }));
      } else if (req.url === '/v1/gzip') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        res.end(gzipSync('data: {"zipped":true}\n\n'));
      }
      // '/v1/hang': never answered.
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, seen, open, port, baseURL: `http://127.0.0.1:${port}/v1` };
}

function readAll(body: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    body.setEncoding('utf8');
    body.on('data', (s: string) => (text += s));
    body.on('end', () => resolve(text));
    body.on('error', reject);
  });
}

describe('HttpClientFactoryImpl.stream', () => {
  let srv: Awaited<ReturnType<typeof startServer>>;
  const factory = new HttpClientFactoryImpl();
  const proxyEnv = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy'];
  const savedEnv: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // axios loads at first use: `create` needs it loaded.
    await factory.ready();
    // The lean transport hands proxied calls to axios's adapter: keep the machine's proxy out.
    for (const name of proxyEnv) {
      savedEnv[name] = process.env[name];
      delete process.env[name];
    }
  });

  afterAll(() => {
    for (const name of proxyEnv) if (savedEnv[name] !== undefined) process.env[name] = savedEnv[name];
  });

  beforeEach(async () => {
    srv = await startServer();
  });

  afterEach(async () => {
    for (const res of srv.open) res.destroy();
    await new Promise<void>((resolve) => {
      srv.server.close(() => resolve());
      srv.server.closeAllConnections();
    });
  });

  const client = (timeoutMs?: number): AxiosInstance =>
    factory.create({ baseURL: srv.baseURL, headers: { Authorization: `Bearer ${SECRET}` }, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });

  describe('when the server does not send the response headers within timeoutMs', () => {
    it('should reject with a transient ETIMEDOUT AxiosError that holds no secret', async () => {
      const error = (await factory.stream(client(50), { method: 'GET', url: 'hang' }).catch((e: unknown) => e)) as AxiosError;
      expect(error).toBeInstanceOf(AxiosError);
      expect(error.code).toBe('ETIMEDOUT');
      expect(isTransientError(error)).toBe(true);
      expect(inspect(error, { depth: 10 })).not.toContain(SECRET);
    });
  });

  describe('when the body is still open after the headers and timeoutMs passes', () => {
    afterEach(() => jest.useRealTimers());

    it('should leave the body to the reader (timeoutMs bounds only the wait for the headers)', async () => {
      // Only the timers are faked: sockets and setImmediate stay real.
      jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick', 'setImmediate'] });
      const res = await factory.stream(client(30), { method: 'GET', url: 'open' });
      const first = await new Promise<string>((resolve) => res.data.once('data', (b: Buffer) => resolve(b.toString('utf8'))));
      expect(first).toBe('data: {"n":1}\n\n');
      jest.advanceTimersByTime(10_000);
      expect(res.data.destroyed).toBe(false);
      srv.open[0]!.end('data: [DONE]\n\n');
      await expect(readAll(res.data)).resolves.toBe('data: [DONE]\n\n');
    });
  });

  describe('when the signal aborts after the headers arrived', () => {
    it('should destroy the body with a CanceledError', async () => {
      const ac = new AbortController();
      const res = await factory.stream(client(), { method: 'GET', url: 'open', signal: ac.signal });
      const failed = readAll(res.data).catch((e: unknown) => e);
      ac.abort();
      const error = (await failed) as AxiosError;
      expect(axios.isCancel(error)).toBe(true);
      expect(res.data.destroyed).toBe(true);
    });
  });

  describe('when the signal aborted before the call', () => {
    it('should reject with a CanceledError without sending anything', async () => {
      const ac = new AbortController();
      ac.abort();
      const error: unknown = await factory.stream(client(), { method: 'GET', url: 'sse', signal: ac.signal }).catch((e: unknown) => e);
      expect(axios.isCancel(error)).toBe(true);
      expect(srv.seen).toHaveLength(0);
    });
  });

  describe('when nothing listens at the address', () => {
    it('should reject with a transient ECONNREFUSED AxiosError', async () => {
      const port = srv.port;
      await new Promise<void>((resolve) => {
        srv.server.close(() => resolve());
        srv.server.closeAllConnections();
      });
      const c = factory.create({ baseURL: `http://127.0.0.1:${port}/v1` });
      const error = (await factory.stream(c, { method: 'GET', url: 'sse' }).catch((e: unknown) => e)) as AxiosError;
      expect(error).toBeInstanceOf(AxiosError);
      expect(error.code).toBe('ECONNREFUSED');
      expect(isTransientError(error)).toBe(true);
      srv = await startServer();
    });
  });

  describe('when the answer is an HTTP error and validateStatus is the default', () => {
    it('should reject with the response attached and the credentials redacted', async () => {
      const error = (await factory.stream(client(), { method: 'POST', url: 'denied', data: { a: 1 } }).catch((e: unknown) => e)) as AxiosError;
      expect(error).toBeInstanceOf(AxiosError);
      expect(error.response?.status).toBe(401);
      expect(error.config?.headers['Authorization']).toBe('[redacted]');
      expect(inspect(error, { depth: 10 })).not.toContain(SECRET);
      expect(JSON.stringify(error)).not.toContain(SECRET);
    });
  });

  describe('when the instance has interceptors of its own', () => {
    it('should run the request interceptors before sending and the response interceptors on the answer', async () => {
      const c = client();
      c.interceptors.request.use((config) => {
        config.headers.set('X-Host-Trace', 'trace-1');
        return config;
      });
      const statuses: number[] = [];
      c.interceptors.response.use((res: AxiosResponse) => {
        statuses.push(res.status);
        return res;
      });
      const res = await factory.stream(c, {
        method: 'POST',
        url: 'sse',
        data: { model: 'm', stream: true },
        params: { q: 'a b' },
        headers: { Accept: 'text/event-stream' },
      });
      expect(await readAll(res.data)).toBe('data: {"n":1}\n\ndata: [DONE]\n\n');
      expect(statuses).toEqual([200]);
      const seen = srv.seen[0]!;
      expect(seen.url).toBe('/v1/sse?q=a+b');
      expect(seen.headers).toMatchObject({
        'x-host-trace': 'trace-1',
        authorization: `Bearer ${SECRET}`,
        accept: 'text/event-stream',
        'content-type': 'application/json',
      });
      expect(JSON.parse(seen.body)).toEqual({ model: 'm', stream: true });
      expect(res.config.httpAgent).toBeDefined();
    });
  });

  describe('when the caller asked for gzip and the server compressed the body', () => {
    it('should hand over the decoded body', async () => {
      const res = await factory.stream(client(), { method: 'GET', url: 'gzip', headers: { 'Accept-Encoding': 'gzip' } });
      await expect(readAll(res.data)).resolves.toBe('data: {"zipped":true}\n\n');
    });
  });

  describe('when the request config names a proxy', () => {
    it("should send it through axios's own Node adapter, which speaks to the proxy", async () => {
      const res = await factory.stream(client(), {
        method: 'GET',
        url: 'http://model.invalid/v1/sse',
        proxy: { protocol: 'http', host: '127.0.0.1', port: srv.port },
      });
      await expect(readAll(res.data)).resolves.toBe('proxied');
      expect(srv.seen[0]!.url).toBe('http://model.invalid/v1/sse');
    });
  });

  describe('when the host set an adapter on the instance', () => {
    it('should use the host adapter', async () => {
      const c = client();
      const calls: string[] = [];
      const host: AxiosAdapter = (config) => {
        calls.push(String(config.url));
        return axios.getAdapter('http')(config);
      };
      c.defaults.adapter = host;
      const res = await factory.stream(c, { method: 'GET', url: 'sse' });
      await expect(readAll(res.data)).resolves.toContain('[DONE]');
      expect(calls).toEqual(['sse']);
    });
  });

  describe('the direct path (an instance exactly as create made it)', () => {
    /** A spy on the instance's axios pipeline: it records nothing when the direct path sends. */
    const spyOnPipeline = (c: AxiosInstance): jest.SpiedFunction<AxiosInstance['request']> => jest.spyOn(c, 'request');
    const body = { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] };

    it("should send without axios's pipeline the very request the pipeline sends", async () => {
      const direct = client();
      const piped = client();
      piped.interceptors.request.use((config) => config);
      const spies = [spyOnPipeline(direct), spyOnPipeline(piped)];
      for (const c of [direct, piped]) {
        const res = await factory.stream(c, { method: 'POST', url: 'sse', data: body, headers: { Accept: 'text/event-stream' }, validateStatus: () => true });
        expect(await readAll(res.data)).toBe('data: {"n":1}\n\ndata: [DONE]\n\n');
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toBe('text/event-stream');
        expect(res.config.httpAgent).toBeDefined();
      }
      expect(spies[0]).not.toHaveBeenCalled();
      expect(spies[1]).toHaveBeenCalledTimes(1);
      const [a, b] = srv.seen;
      expect(a).toEqual(b);
      expect(a!.headers).toMatchObject({ authorization: `Bearer ${SECRET}`, accept: 'text/event-stream', 'content-type': 'application/json' });
      expect(JSON.parse(a!.body)).toEqual(body);
    });

    it('should go through the pipeline once the host changed a default after create', async () => {
      const c = client();
      c.defaults.headers.common['X-Default'] = 'd-1';
      const spy = spyOnPipeline(c);
      const res = await factory.stream(c, { method: 'POST', url: 'sse', data: body });
      await readAll(res.data);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(srv.seen[0]!.headers['x-default']).toBe('d-1');
    });

    it('should go through the pipeline when the call sets an option it does not implement', async () => {
      const c = client();
      const spy = spyOnPipeline(c);
      const res = await factory.stream(c, { method: 'GET', url: 'sse', params: { q: 'a b' } });
      await readAll(res.data);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(srv.seen[0]!.url).toBe('/v1/sse?q=a+b');
    });

    it('should reject with a CanceledError when the signal aborts while it waits for the headers', async () => {
      const c = client();
      const spy = spyOnPipeline(c);
      const ac = new AbortController();
      const sent = factory.stream(c, { method: 'POST', url: 'hang', data: body, signal: ac.signal }).catch((e: unknown) => e);
      const deadline = Date.now() + 5_000;
      while (srv.seen.length === 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
      expect(srv.seen).toHaveLength(1);
      ac.abort();
      const error = await sent;
      expect(axios.isCancel(error)).toBe(true);
      expect(spy).not.toHaveBeenCalled();
      expect(inspect(error, { depth: 10 })).not.toContain(SECRET);
    });
  });
});

describe('streamRequest', () => {
  describe('when the factory has no stream method (a host factory)', () => {
    it("should fall back to the instance's own request with responseType 'stream'", async () => {
      const srv = await startServer();
      try {
        const host: HttpClientFactory = { create: (o) => axios.create({ baseURL: o.baseURL }) };
        const c = host.create({ baseURL: srv.baseURL });
        const res = await streamRequest(host, c, { method: 'GET', url: 'sse' });
        await expect(readAll(res.data)).resolves.toBe('data: {"n":1}\n\ndata: [DONE]\n\n');
      } finally {
        await new Promise<void>((resolve) => {
          srv.server.close(() => resolve());
          srv.server.closeAllConnections();
        });
      }
    });
  });
});
