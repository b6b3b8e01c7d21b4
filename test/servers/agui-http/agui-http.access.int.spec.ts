import { postJson, runInput, sseEvents, startStack, type Stack } from './agui-http.fixtures.js';

describe('AgUiAccess (over HTTP)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('POST /agent with a bearer token configured', () => {
    const TOKEN = 'sk-agui-test-token-0123456789';
    beforeEach(async () => {
      stack = await startStack({ script: [{ text: 'Authorized.' }], handler: { token: TOKEN } });
    });

    it('should answer 401 without a token, with a wrong one of the same or another length, or another scheme', async () => {
      const cases: Record<string, string>[] = [
        {},
        { authorization: `Bearer ${TOKEN.replace(/.$/, 'X')}` },
        { authorization: 'Bearer short' },
        { authorization: `Basic ${TOKEN}` },
        { authorization: `Bearer ${TOKEN} extra` },
      ];
      for (const headers of cases) {
        const r = await postJson(stack!.endpoint, runInput(), headers);
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="agentrx"/);
        expect(r.json.error).toBe('unauthorized');
        expect(r.text).not.toContain(TOKEN);
      }
      expect(stack!.sessions).toHaveLength(0);
      expect(stack!.emulator.requests).toHaveLength(0);
    });

    it('should stream the run with the right token, and keep the page and /healthz public', async () => {
      const r = await postJson(stack!.endpoint, runInput(), { authorization: `Bearer ${TOKEN}` });
      expect(r.status).toBe(200);
      expect(
        sseEvents(r.text)
          .map((e) => e.type)
          .at(-1),
      ).toBe('RUN_FINISHED');
      expect((await fetch(stack!.server.url)).status).toBe(200);
      expect((await fetch(`${stack!.server.url}healthz`)).status).toBe(200);
    });
  });

  describe('CORS', () => {
    beforeEach(async () => {
      stack = await startStack({ script: [{ text: 'Cross-origin hello.' }, { text: 'Same-origin hello.' }], handler: { cors: ['https://app.example'] } });
    });

    it('should answer the preflight of a listed origin, and refuse another origin', async () => {
      const ok = await fetch(stack!.endpoint, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
      expect(ok.headers.get('access-control-allow-headers')).toBe('authorization, content-type, accept, last-event-id');
      expect(ok.headers.get('vary')).toBe('Origin');

      const evil = await fetch(stack!.endpoint, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(evil.status).toBe(403);
      expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('should stream to a listed origin with Access-Control-Allow-Origin, refuse another with 403, and allow same-origin', async () => {
      const ok = await postJson(stack!.endpoint, runInput({ threadId: 'c1' }), { origin: 'https://app.example' });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');

      const evil = await postJson(stack!.endpoint, runInput({ threadId: 'c2' }), { origin: 'https://evil.example' });
      expect(evil.status).toBe(403);
      expect(evil.headers.get('access-control-allow-origin')).toBeNull();
      expect(evil.json.error).toBe('origin_not_allowed');

      const self = await postJson(stack!.endpoint, runInput({ threadId: 'c3' }), { origin: new URL(stack!.server.url).origin });
      expect(self.status).toBe(200);
      expect(self.headers.get('access-control-allow-origin')).toBeNull();
      expect(stack!.sessions.map((s) => s.threadId)).toEqual(['c1', 'c3']);
    });
  });
});
