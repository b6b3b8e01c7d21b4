import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAgUiHandler, type AgUiHttpHandler } from '../../../src/servers/agui-http/agui-http.handler.js';
import { postJson, runInput, sseEvents } from './agui-http.fixtures.js';
import { answer, FakeHost } from './agui-http.fake-session.js';

/**
 * The endpoint's code loads at the first handler made (issue 28: an app that imports agentrx and
 * serves no AG-UI never loads it). A handler answers requests that reach it before that code has
 * loaded, and reports no runs meanwhile. This file has its own module registry: the first
 * `createAgUiHandler` below is the first of the registry, and it is called with its first request
 * in the same tick, so that request waits for the load.
 */
describe('an AG-UI handler whose endpoint code has not loaded yet', () => {
  it('should answer the requests that reach it before the load, and count nothing meanwhile', async () => {
    const rx = new FakeHost((s, text, n) => answer(s, 'm', `echo ${text}`, n));
    let handler: AgUiHttpHandler | undefined;
    const countsAtFirstRequest: number[] = [];
    const host = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (!handler) {
        handler = createAgUiHandler({ rx });
        countsAtFirstRequest.push(handler.activeRuns, handler.activeReconnects, handler.threadCount);
      }
      handler(req, res);
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    try {
      const [health, run] = await Promise.all([fetch(`${url}/healthz`), postJson(`${url}/agent`, runInput({}, 'early'))]);
      expect(health.status).toBe(200);
      expect(sseEvents(run.text).find((e) => e.type === 'TEXT_MESSAGE_CONTENT')).toMatchObject({ delta: 'echo early' });
      expect(countsAtFirstRequest).toEqual([0, 0, 0]);
      expect(handler?.threadCount).toBe(1);
    } finally {
      await handler?.close();
      host.closeAllConnections();
      await new Promise<void>((r) => host.close(() => r()));
    }
  });

  it('should close at once when it never served anything', async () => {
    const handler = createAgUiHandler({ rx: new FakeHost(() => undefined) });
    await expect(handler.close()).resolves.toBeUndefined();
    expect(handler.options.basePath).toBe('');
  });
});
