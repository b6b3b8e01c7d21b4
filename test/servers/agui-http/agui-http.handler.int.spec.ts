import { startStack, type Stack } from './agui-http.fixtures.js';

describe('AG-UI endpoint over HTTP', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('GET routes', () => {
    it('should serve the page with a strict CSP, /healthz, 404 for unknown paths and 405 for wrong methods', async () => {
      stack = await startStack();
      const page = await fetch(stack.server.url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-/);
      const html = await page.text();
      expect(html).toContain('<script>');
      expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="(?!data:)|https?:\/\//);

      const health = await fetch(`${stack.server.url}healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });

      expect((await fetch(`${stack.server.url}nope`)).status).toBe(404);
      const wrong = await fetch(stack.endpoint);
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toBe('POST, OPTIONS');
    });

    it('should not serve the page when page is false', async () => {
      stack = await startStack({ handler: { page: false } });
      expect((await fetch(stack.server.url)).status).toBe(404);
    });
  });
});
