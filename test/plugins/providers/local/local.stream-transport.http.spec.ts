import type { Readable } from 'node:stream';
import type { AxiosInstance, AxiosRequestConfig, AxiosResponse } from 'axios';
import { lastValueFrom, toArray } from 'rxjs';
import { HttpClientFactoryImpl, type HttpClientOptions } from '../../../../src/core/http/http-client-factory.js';
import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec } from '../../../../src/core/model.js';
import { LocalProviderOptionsClass } from '../../../../src/plugins/providers/local/local.config.js';
import { LocalAgentProvider } from '../../../../src/plugins/providers/local/local.provider.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../../src/testing/index.js';

const spec: AgentSpec = { name: 'a', tools: [] };

/** A host's factory: every instance gets a tracing header and a response hook; stream calls are counted. */
class HostFactory extends HttpClientFactoryImpl {
  readonly responses: number[] = [];
  streamCalls = 0;

  override create(opts: HttpClientOptions): AxiosInstance {
    const instance = super.create(opts);
    instance.interceptors.request.use((config) => {
      config.headers.set('X-Host-Trace', 'host-1');
      return config;
    });
    instance.interceptors.response.use((res: AxiosResponse) => {
      this.responses.push(res.status);
      return res;
    });
    return instance;
  }

  override stream(client: AxiosInstance, config: AxiosRequestConfig): Promise<AxiosResponse<Readable>> {
    this.streamCalls++;
    return super.stream(client, config);
  }
}

describe('LocalAgentProvider streamed call transport', () => {
  let emu: OpenAiEmulator | undefined;

  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  describe('when the host factory adds interceptors to its instances', () => {
    it('should send the streamed completion through HttpClientFactory.stream with the interceptors applied', async () => {
      emu = await startOpenAiEmulator({ script: [{ text: 'through the host seam', toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x' } }] }] });
      const factory = new HostFactory();
      const options = Object.assign(new LocalProviderOptionsClass(), { baseUrl: emu.baseUrl, apiKey: 'sk-host-seam-1234', model: 'm', retryBaseMs: 1 });
      const provider = new LocalAgentProvider(options, factory, new MemoryLogger());
      const conn = await provider.open({ spec, signal: new AbortController().signal });
      const events = await lastValueFrom(provider.pollTurn(conn, provider.kickoffInput({ prompt: 'hi' })).pipe(toArray()));
      const turn = provider.normalize(events);
      expect(turn.text).toBe('through the host seam');
      expect(turn.customToolUses.map((t) => t.name)).toEqual(['echo']);
      expect(factory.streamCalls).toBe(1);
      expect(factory.responses).toEqual([200]);
      const sent = emu.requests.find((r) => r.completion === 0)!;
      expect(sent.headers['x-host-trace']).toBe('host-1');
      expect(sent.headers['accept']).toBe('text/event-stream');
      expect(sent.headers['authorization']).toBeDefined();
      expect((sent.body as { stream?: boolean }).stream).toBe(true);
    });
  });
});
