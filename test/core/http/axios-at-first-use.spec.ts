import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AxiosError } from 'axios';
import { loadedAxios } from '../../../src/core/http/axios-module.js';
import { createClient, HttpClientFactoryImpl, LazyHttpClient } from '../../../src/core/http/http-client-factory.js';

/**
 * axios loads at first use (issue 28): nothing is loaded until a factory is made ready; `create`
 * before that says what to await; a lazy client makes its instance on the first `get`, once; the
 * errors are the ES module's AxiosError, the class a host's `import { AxiosError } from 'axios'`
 * gets. (Each spec file has its own module registry: this one starts with axios not loaded.)
 */
describe('axios at first use', () => {
  let server: Server;
  let baseURL = '';

  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(503).end('busy'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('should refuse create before ready, naming what to await, and make a working client after it', async () => {
    const factory = new HttpClientFactoryImpl();
    const lazy = new LazyHttpClient(factory, { baseURL });

    expect(loadedAxios()).toBeUndefined();
    expect(() => factory.create({ baseURL })).toThrow(/await HttpClientFactory\.ready\(\)/);
    expect(loadedAxios()).toBeUndefined();

    const first = lazy.get();
    expect(lazy.get()).toBe(first);
    const client = await first;
    expect(loadedAxios()).toBeDefined();
    const error = await client.get('/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AxiosError);
    expect((error as AxiosError).response?.status).toBe(503);

    const other = await createClient(factory, { baseURL });
    expect(other).not.toBe(client);
  });

  it('should try again on the next get when the factory failed to get ready, and keep the instance once made', async () => {
    const inner = new HttpClientFactoryImpl();
    let readyCalls = 0;
    const factory = {
      ready: async (): Promise<void> => {
        readyCalls += 1;
        if (readyCalls === 1) throw new Error('proxy settings not loaded yet');
        await inner.ready();
      },
      create: (opts: { baseURL: string }) => inner.create(opts),
    };
    const lazy = new LazyHttpClient(factory, { baseURL });

    await expect(lazy.get()).rejects.toThrow('proxy settings not loaded yet');
    const client = await lazy.get();
    expect(readyCalls).toBe(2);
    expect(await lazy.get()).toBe(client);
    expect(readyCalls).toBe(2);
    const status = await client.get('/x').catch((e: AxiosError) => e.response?.status);
    expect(status).toBe(503);
  });
});
