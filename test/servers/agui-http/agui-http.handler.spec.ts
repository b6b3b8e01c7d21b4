import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAgUiHandler, type AgUiHttpHandler } from '../../../src/servers/agui-http/agui-http.handler.js';
import { postJson, runInput, sseEvents } from './agui-http.fixtures.js';
import { answer, FakeHost } from './agui-http.fake-session.js';

describe('createAgUiHandler', () => {
  describe('when called with invalid options', () => {
    it('should throw invalid_config listing every problem, without the token', () => {
      const rx = new FakeHost(() => undefined);
      expect(() =>
        createAgUiHandler({ rx, maxConcurrentRuns: 0, cors: ['https://ok.example', 'ftp://x', 'https://a.example/path'], token: '', basePath: 'agui/' }),
      ).toThrow(
        expect.objectContaining({
          code: 'invalid_config',
          details: {
            problems: [
              'token: token must be a non-empty secret string',
              'cors: each value in cors must be "*" or an origin such as https://app.example (scheme://host[:port], no path)',
              'maxConcurrentRuns: maxConcurrentRuns must not be less than 1',
              'basePath: basePath must be empty or start with "/" and not end with "/"',
            ],
          },
        }),
      );
      expect(() => createAgUiHandler({} as never)).toThrow(/options.rx must be an AgentRx instance/);
    });
  });

  describe('when mounted express-style with a prefix and a pre-parsed body', () => {
    let handler: AgUiHttpHandler;
    let url: string;
    let nextCalls: string[];
    let close: () => Promise<void>;
    beforeEach(async () => {
      const rx = new FakeHost((s, text, n) => answer(s, 'm', `echo ${text}`, n));
      handler = createAgUiHandler({ rx, basePath: '/agui' });
      nextCalls = [];
      // A tiny host: parses JSON bodies itself (like express.json()), then hands over with a next().
      const host = createServer((req: IncomingMessage, res: ServerResponse) => {
        const parts: Buffer[] = [];
        req.on('data', (c: Buffer) => parts.push(c));
        req.on('end', () => {
          if (parts.length > 0) (req as IncomingMessage & { body?: unknown }).body = JSON.parse(Buffer.concat(parts).toString());
          handler(req, res, () => {
            nextCalls.push(req.url ?? '');
            res.writeHead(418).end();
          });
        });
      });
      await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
      close = async () => {
        await handler.close();
        host.closeAllConnections();
        await new Promise<void>((r) => host.close(() => r()));
      };
    });
    afterEach(() => close());

    it('should route below basePath, use the parsed body, and call next() for other paths', async () => {
      const r = await postJson(`${url}/agui/agent`, runInput({}, 'parsed already'));
      expect(sseEvents(r.text).find((e) => e.type === 'TEXT_MESSAGE_CONTENT')).toMatchObject({ delta: 'echo parsed already' });
      expect((await fetch(`${url}/agui`)).status).toBe(200);
      expect((await fetch(`${url}/elsewhere`)).status).toBe(418);
      expect((await fetch(`${url}/agui/unknown`)).status).toBe(418);
      expect(nextCalls).toEqual(['/elsewhere', '/agui/unknown']);
    });
  });
});
