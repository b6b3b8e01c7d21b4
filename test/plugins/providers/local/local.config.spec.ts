import { inspect } from 'node:util';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Container } from '../../../../src/core/util/inversify.js';
import { HttpClientFactory, HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { Logger, MemoryLogger } from '../../../../src/core/logger.js';
import { ProviderRegistration } from '../../../../src/core/plugin/provider-registration.js';
import { LocalProviderOptions, LocalProviderOptionsClass, localConfigSection } from '../../../../src/plugins/providers/local/local.config.js';
import { localProviderModule } from '../../../../src/plugins/providers/local/local.module.js';
import { LocalAgentProvider } from '../../../../src/plugins/providers/local/local.provider.js';

function validate(plain: Record<string, unknown>): { options: LocalProviderOptionsClass; errors: string[] } {
  const options = plainToInstance(LocalProviderOptionsClass, plain);
  return { options, errors: validateSync(options).map((e) => e.property) };
}

describe('LocalProviderOptionsClass', () => {
  describe('when validated from an empty section', () => {
    it('should pass with the documented defaults', () => {
      const { options, errors } = validate({});
      expect(errors).toEqual([]);
      expect({ ...options }).toEqual({
        api: 'openai-chat',
        baseUrl: 'http://127.0.0.1:11434/v1',
        model: 'llama3.1',
        stream: true,
        requestTimeoutMs: 120_000,
        idleTimeoutMs: 60_000,
        maxFrameBytes: 8 * 1024 * 1024,
        maxRetries: 3,
        retryBaseMs: 500,
      });
    });
  });

  describe('when baseUrl is a loopback or TLD-less host', () => {
    it('should accept it', () => {
      for (const baseUrl of ['http://localhost:8080/v1', 'http://127.0.0.1:8000/v1', 'http://ollama:11434/v1', 'https://api.openai.com/v1']) {
        expect([baseUrl, validate({ baseUrl }).errors]).toEqual([baseUrl, []]);
      }
    });
  });

  describe('when fields are invalid', () => {
    it('should name each bad field', () => {
      expect(validate({ baseUrl: 'not a url' }).errors).toEqual(['baseUrl']);
      expect(validate({ baseUrl: 'ftp://host/v1' }).errors).toEqual(['baseUrl']);
      expect(validate({ headers: { 'X-A': 1 } }).errors).toEqual(['headers']);
      expect(validate({ maxRetries: -1, idleTimeoutMs: 0, stream: 'yes', model: '' }).errors.sort()).toEqual([
        'idleTimeoutMs',
        'maxRetries',
        'model',
        'stream',
      ]);
      expect(validate({ maxTurns: 0 }).errors).toEqual(['maxTurns']);
      expect(validate({ maxFrameBytes: 100 }).errors).toEqual(['maxFrameBytes']);
    });
  });

  describe('when inspected or serialized with an apiKey and headers', () => {
    it('should redact them', () => {
      const { options } = validate({ apiKey: 'sk-very-secret', headers: { 'X-Token': 'tok-very-secret' } });
      expect(inspect(options)).not.toContain('very-secret');
      expect(JSON.stringify(options)).not.toContain('very-secret');
      expect(JSON.stringify(options)).toContain('X-Token');
      expect(options.apiKey).toBe('sk-very-secret');
    });
  });
});

describe('localConfigSection', () => {
  describe('when asked whether it is required', () => {
    it('should require the section only for provider local', () => {
      expect(localConfigSection).toMatchObject({ key: 'local', options: LocalProviderOptionsClass, token: LocalProviderOptions });
      expect(localConfigSection.required({ provider: 'local' })).toBe(true);
      expect(localConfigSection.required({ provider: 'bedrock-agentcore' })).toBe(false);
    });
  });
});

describe('localProviderModule', () => {
  describe('when loaded into a container with options, an HTTP factory and a logger', () => {
    it('should register LocalAgentProvider under its id and build one singleton on demand', () => {
      const container = new Container();
      container.bind(LocalProviderOptions).toConstantValue(Object.assign(new LocalProviderOptionsClass(), { model: 'qwen' }));
      container.bind(HttpClientFactory).to(HttpClientFactoryImpl).inSingletonScope();
      container.bind(Logger).toConstantValue(new MemoryLogger());
      container.load(localProviderModule);
      expect(container.getAll<ProviderRegistration>(ProviderRegistration)).toEqual([{ id: 'local', service: LocalAgentProvider, telemetryName: 'openai' }]);
      const provider = container.get(LocalAgentProvider);
      expect(provider).toBeInstanceOf(LocalAgentProvider);
      expect(provider).toBe(container.get(LocalAgentProvider));
      expect([provider.id, provider.mode]).toEqual(['local', 'request_response']);
    });
  });
});
