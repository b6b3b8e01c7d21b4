import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import type { AxiosInstance, AxiosRequestConfig, AxiosResponse } from 'axios';
import { isAgentRxError } from '../../../../src/core/errors.js';
import { HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { MemoryLogger } from '../../../../src/core/logger.js';
import { CmaClient } from '../../../../src/plugins/providers/claude-managed-agents/cma-client.js';

const API_KEY = 'sk-ant-stream-seam-9876';

/** Counts `stream` calls; otherwise the built-in factory. */
class CountingFactory extends HttpClientFactoryImpl {
  streamCalls = 0;
  override stream(client: AxiosInstance, config: AxiosRequestConfig): Promise<AxiosResponse<Readable>> {
    this.streamCalls++;
    return super.stream(client, config);
  }
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

describe('CmaClient.openEventStream transport', () => {
  // axios loads at first use: `create` needs it loaded.
  beforeAll(() => new HttpClientFactoryImpl().ready());

  let server: Server;
  let base: string;
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

  beforeEach(async () => {
    seen.length = 0;
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      if (req.url?.startsWith('/v1/sessions/s1/')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"type":"session.status_idle"}\n\n');
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'no such session' } }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  });

  const opts = { maxRetries: 0, retryBaseMs: 1, listPageSize: 100, streamPath: '/v1/sessions/{id}/events/stream', requestTimeoutMs: 5_000 };

  describe('when the instance has a host interceptor', () => {
    it('should open the stream through HttpClientFactory.stream with the interceptor, the key and the query applied', async () => {
      const factory = new CountingFactory();
      const http = factory.create({ baseURL: base, headers: { 'x-api-key': API_KEY } });
      http.interceptors.request.use((config) => {
        config.headers.set('X-Host-Trace', 'cma-1');
        return config;
      });
      const client = new CmaClient(http, opts, new MemoryLogger(), factory);
      const body = await client.openEventStream('s1', { signal: new AbortController().signal, eventDeltas: true });
      await expect(readAll(body)).resolves.toBe('data: {"type":"session.status_idle"}\n\n');
      expect(factory.streamCalls).toBe(1);
      expect(seen[0]!.url).toBe('/v1/sessions/s1/events/stream?event_deltas=agent.message');
      expect(seen[0]!.headers).toMatchObject({ 'x-host-trace': 'cma-1', 'x-api-key': API_KEY, accept: 'text/event-stream' });
    });
  });

  describe('when the stream answers an HTTP error', () => {
    it('should reject with http_error carrying the status and no key', async () => {
      const http = new HttpClientFactoryImpl().create({ baseURL: base, headers: { 'x-api-key': API_KEY } });
      const client = new CmaClient(http, opts, new MemoryLogger());
      const error: unknown = await client.openEventStream('missing', { signal: new AbortController().signal, eventDeltas: false }).catch((e: unknown) => e);
      expect(isAgentRxError(error) && error.code).toBe('http_error');
      expect(isAgentRxError(error) && error.details?.['status']).toBe(404);
      expect(JSON.stringify(error)).not.toContain(API_KEY);
      expect(String((error as Error).message)).toContain('no such session');
    });
  });
});
