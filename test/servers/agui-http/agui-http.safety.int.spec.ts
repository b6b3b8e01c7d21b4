import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { openStream, postJson, runInput, startStack, type JsonBody, type Stack } from './agui-http.fixtures.js';

interface RawReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body parsed as a JSON object (empty when it is not one). */
  readonly json: JsonBody;
  /** The server closed the connection after answering. */
  readonly closed: Promise<void>;
}

/**
 * A raw request (node:http, so `Host` and a partial body can be set): writes the headers and
 * `chunks` (each after the previous one was flushed, `gapMs` apart when given), and never ends
 * the body unless `end`. Resolves with the answer.
 */
function rawPost(url: string, headers: Record<string, string>, chunks: readonly string[], opts: { end?: boolean; gapMs?: number } = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        let json: JsonBody = {};
        try {
          const parsed: unknown = JSON.parse(body);
          if (typeof parsed === 'object' && parsed !== null) json = parsed as JsonBody;
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json, closed });
      });
    });
    const closed = new Promise<void>((done) => req.once('close', () => done()));
    req.on('error', () => undefined);
    req.once('error', reject);
    let i = 0;
    const next = (): void => {
      if (i < chunks.length) {
        req.write(chunks[i++]!, () => (opts.gapMs ? setTimeout(next, opts.gapMs) : next()));
      } else if (opts.end) req.end();
      else req.flushHeaders();
    };
    next();
  });
}

const isStarted = (e: { type: string }): boolean => e.type === 'RUN_STARTED';

describe('AG-UI endpoint safety', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('a body that stalls after the headers', () => {
    it('should answer 408 after bodyIdleTimeoutMs, close the connection and start nothing', async () => {
      stack = await startStack({ script: [{ text: 'never' }], handler: { bodyIdleTimeoutMs: 150 } });
      const body = JSON.stringify(runInput());
      const reply = await rawPost(stack.endpoint, { 'content-type': 'application/json', 'content-length': String(body.length) }, [body.slice(0, 20)]);
      expect(reply.status).toBe(408);
      expect(reply.json).toMatchObject({ error: 'request_timeout', message: expect.stringContaining('bodyIdleTimeoutMs') });
      expect(reply.headers.connection).toBe('close');
      await reply.closed;
      expect(stack.sessions).toHaveLength(0);
    });
  });

  describe('a body that keeps trickling past bodyTimeoutMs', () => {
    it('should answer 408 naming bodyTimeoutMs even though no gap reached the idle timeout', async () => {
      stack = await startStack({ script: [{ text: 'never' }], handler: { bodyIdleTimeoutMs: 2_000, bodyTimeoutMs: 300 } });
      const body = JSON.stringify(runInput());
      const drip = Array.from({ length: 40 }, (_, i) => body.slice(i, i + 1));
      const reply = await rawPost(stack.endpoint, { 'content-type': 'application/json', 'content-length': String(body.length) }, drip, { gapMs: 25 });
      expect(reply.status).toBe(408);
      expect(reply.json.message).toContain('bodyTimeoutMs');
      expect(stack.sessions).toHaveLength(0);
    });
  });

  describe('a request whose Host is not the server (DNS rebinding)', () => {
    it('should refuse it with 403 host_not_allowed on every route but /healthz', async () => {
      stack = await startStack({ script: [{ text: 'never' }] });
      const body = JSON.stringify(runInput());
      const agent = await rawPost(stack.endpoint, { host: 'attacker.example:8787', 'content-type': 'application/json' }, [body], { end: true });
      expect(agent.status).toBe(403);
      expect(agent.json).toMatchObject({ error: 'host_not_allowed', message: expect.stringContaining('allowedHosts') });
      const page = await fetchWithHost(stack.server.url, 'attacker.example');
      expect(page.status).toBe(403);
      expect((await fetchWithHost(`${stack.server.url}healthz`, 'attacker.example')).status).toBe(200);
      expect(stack.sessions).toHaveLength(0);
    });

    it('should answer a name listed in allowedHosts, and localhost names always', async () => {
      stack = await startStack({ script: [{ text: 'Hi.' }, { text: 'Again.' }], handler: { allowedHosts: ['agent.example'] } });
      const body = JSON.stringify(runInput());
      const named = await rawPost(stack.endpoint, { host: 'agent.example:8787', 'content-type': 'application/json' }, [body], { end: true });
      expect(named.status).toBe(200);
      const local = await rawPost(
        stack.endpoint,
        { host: `localhost:${stack.server.port}`, 'content-type': 'application/json' },
        [JSON.stringify(runInput({ threadId: 't2' }))],
        { end: true },
      );
      expect(local.status).toBe(200);
    });
  });

  describe('a cross-origin page that forges X-Forwarded-Host', () => {
    it('should not be taken for the same origin unless trustProxy is set', async () => {
      stack = await startStack({ script: [{ text: 'never' }] });
      const forged = await postJson(stack.endpoint, runInput(), { origin: 'http://attacker.example', 'x-forwarded-host': 'attacker.example' });
      expect(forged.status).toBe(403);
      expect(forged.json.error).toBe('origin_not_allowed');
      expect(stack.sessions).toHaveLength(0);
    });

    it('should trust X-Forwarded-Host with trustProxy, but only for an allowed host', async () => {
      stack = await startStack({ script: [{ text: 'Proxied.' }], handler: { trustProxy: true, allowedHosts: ['app.example'] } });
      const refused = await postJson(stack.endpoint, runInput(), { origin: 'http://attacker.example', 'x-forwarded-host': 'attacker.example' });
      expect(refused.status).toBe(403);
      expect(refused.json.error).toBe('host_not_allowed');
      const proxied = await postJson(stack.endpoint, runInput(), { origin: 'http://app.example', 'x-forwarded-host': 'app.example' });
      expect(proxied.status).toBe(200);
    });
  });

  describe('a POST /agent without a Content-Type', () => {
    it('should be refused with 415 like a wrong one', async () => {
      stack = await startStack({ script: [{ text: 'never' }] });
      const reply = await rawPost(stack.endpoint, {}, [JSON.stringify(runInput())], { end: true });
      expect(reply.status).toBe(415);
      expect(reply.json).toMatchObject({ error: 'unsupported_media_type', message: expect.stringContaining('no Content-Type') });
      expect(stack.sessions).toHaveLength(0);
    });
  });

  describe('one client opening more runs than maxRunsPerClient', () => {
    it('should answer 429 with Retry-After for that client while another client is still served', async () => {
      stack = await startStack({
        script: [{ text: 'Other client.' }],
        faults: { 0: { kind: 'hang' } },
        handler: { maxRunsPerClient: 1, trustProxy: true, retryAfterSeconds: 2 },
      });
      const first = await openStream(stack.endpoint, runInput({ threadId: 'a', runId: 'a1' }), isStarted, { 'x-forwarded-for': '203.0.113.7' });
      await stack.emulator.waitForRequest(0);
      const refused = await postJson(stack.endpoint, runInput({ threadId: 'b', runId: 'b1' }), { 'x-forwarded-for': '203.0.113.7' });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(refused.json.message).toContain('per client');
      const other = await postJson(stack.endpoint, runInput({ threadId: 'c', runId: 'c1' }), { 'x-forwarded-for': '198.51.100.9' });
      expect(other.status).toBe(200);
      first.abort();
    });
  });

  describe('CORS for a listed origin', () => {
    it('should expose Retry-After and answer preflights with the configured headers and max age', async () => {
      stack = await startStack({
        script: [{ text: 'Hi.' }],
        handler: { cors: ['http://app.example'], corsAllowHeaders: ['X-Request-Id'], corsMaxAgeSeconds: 60 },
      });
      const preflight = await fetch(stack.endpoint, { method: 'OPTIONS', headers: { origin: 'http://app.example', 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization, content-type, accept, last-event-id, x-request-id');
      expect(preflight.headers.get('access-control-max-age')).toBe('60');
      const run = await postJson(stack.endpoint, runInput(), { origin: 'http://app.example' });
      expect(run.status).toBe(200);
      expect(run.headers.get('access-control-expose-headers')).toBe('Retry-After');
    });
  });
});

/** A GET with a chosen Host header; resolves with the status. */
function fetchWithHost(url: string, host: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.once('error', reject);
    req.end();
  });
}
