import { inspect } from 'node:util';
import { AgentRx } from '../../../src/agentrx.js';
import { AgUiHttpOptions, DEFAULT_MAX_BODY_BYTES, resolveAgUiHttpOptions } from '../../../src/servers/agui-http/agui-http.config.js';
import { aguiHttpModule } from '../../../src/servers/agui-http/agui-http.module.js';
import { Secret } from '../../../src/core/config/secret.js';

describe('resolveAgUiHttpOptions', () => {
  describe('when called with nothing', () => {
    it('should return the documented defaults', () => {
      const o = resolveAgUiHttpOptions();
      expect({ ...o }).toEqual({
        port: 8787,
        host: '127.0.0.1',
        cors: [],
        maxConcurrentRuns: 16,
        maxIdleThreads: 100,
        retryAfterSeconds: 1,
        maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
        threadIdleMs: 1_800_000,
        clientWaitMs: 600_000,
        heartbeatMs: 15_000,
        reconnectGraceMs: 0,
        maxThreads: 1_000,
        page: true,
        basePath: '',
        allowedHosts: [],
        trustProxy: false,
        bodyIdleTimeoutMs: 10_000,
        bodyTimeoutMs: 30_000,
        corsAllowHeaders: [],
        corsMaxAgeSeconds: 600,
        maxRunsPerClient: 8,
      });
      expect(o.token).toBeUndefined();
    });
  });

  describe('when called with strings from ${VAR} interpolation and other keys', () => {
    it('should coerce numbers and booleans, wrap the token, and ignore keys that are not options', () => {
      const o = resolveAgUiHttpOptions({ port: '9000', page: 'false', token: 'tok-123', rx: {}, onSession: () => undefined } as never);
      expect(o.port).toBe(9000);
      expect(o.page).toBe(false);
      expect(o.token).toBeInstanceOf(Secret);
      expect(o.token!.reveal()).toBe('tok-123');
      expect(inspect(o)).not.toContain('tok-123');
      expect(JSON.stringify(o)).not.toContain('tok-123');
    });
  });

  describe('when called with invalid values', () => {
    it('should throw invalid_config listing each one', () => {
      expect(() =>
        resolveAgUiHttpOptions({
          port: 70_000,
          host: '',
          retryAfterSeconds: 0,
          maxBodyBytes: 10,
          threadIdleMs: 5,
          maxThreads: 0,
          cors: ['https://ok.example', 'https://bad.example/'],
        }),
      ).toThrow(
        expect.objectContaining({
          code: 'invalid_config',
          details: {
            problems: [
              'port: port must not be greater than 65535',
              'host: host should not be empty',
              'cors: each value in cors must be "*" or an origin such as https://app.example (scheme://host[:port], no path)',
              'retryAfterSeconds: retryAfterSeconds must not be less than 1',
              'maxBodyBytes: maxBodyBytes must not be less than 1024',
              'threadIdleMs: threadIdleMs must not be less than 1000',
              'maxThreads: maxThreads must not be less than 1',
            ],
          },
        }),
      );
    });
  });
});

describe('aguiHttpModule', () => {
  describe('when AgentRx is created with it and an agui config section', () => {
    it('should bind the validated section under AgUiHttpOptions, with ${VAR} interpolation', async () => {
      const rx = await AgentRx.create({
        config: { agui: { port: '${PORT}', token: '${TOKEN}', cors: ['https://app.example'] } },
        env: { PORT: '8099', TOKEN: 'from-env' },
        modules: [aguiHttpModule],
      });
      try {
        const o = rx.container.get<AgUiHttpOptions>(AgUiHttpOptions);
        expect(o.port).toBe(8099);
        expect(o.token?.reveal()).toBe('from-env');
        expect(o.cors).toEqual(['https://app.example']);
        expect(resolveAgUiHttpOptions(o).port).toBe(8099);
      } finally {
        await rx.stop();
      }
    });
  });
});
