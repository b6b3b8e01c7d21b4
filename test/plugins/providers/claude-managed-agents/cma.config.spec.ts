import { inspect } from 'node:util';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AgentRx } from '../../../../src/agentrx.js';
import { AgentRxError } from '../../../../src/core/errors.js';
import { Container } from '../../../../src/core/util/inversify.js';
import { HttpClientFactory, HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { Logger, MemoryLogger } from '../../../../src/core/logger.js';
import { ProviderRegistration } from '../../../../src/core/plugin/provider-registration.js';
import { CmaProviderOptions, CmaProviderOptionsClass, cmaConfigSection } from '../../../../src/plugins/providers/claude-managed-agents/cma.config.js';
import { cmaProviderModule } from '../../../../src/plugins/providers/claude-managed-agents/cma.module.js';
import { CmaAgentProvider } from '../../../../src/plugins/providers/claude-managed-agents/cma.provider.js';
import { startCmaEmulator, type CmaEmulator } from '../../../../src/testing/cma-emulator.js';
import { EchoToolHandler } from '../../../fakes/fake-tools.js';
import { API_KEY } from './cma-fixtures.js';
import { failure } from '../../../fakes/failure.js';

function validate(plain: Record<string, unknown>): { options: CmaProviderOptionsClass; errors: string[] } {
  const options = plainToInstance(CmaProviderOptionsClass, plain, { exposeDefaultValues: true });
  return { options, errors: validateSync(options).map((e) => e.property) };
}

async function createError(config: Record<string, unknown>): Promise<AgentRxError> {
  return failure(
    AgentRx.create({ modules: [cmaProviderModule], config: { consumers: { terminal: false }, logLevel: 'silent', ...config } }).then((rx) => rx.stop()),
  );
}

describe('CmaProviderOptionsClass', () => {
  describe('when validated with only an apiKey', () => {
    it('should pass with the documented defaults and keep the key as a redacted Secret', () => {
      const { options, errors } = validate({ apiKey: API_KEY });
      expect(errors).toEqual([]);
      expect(options).toMatchObject({
        baseUrl: 'https://api.anthropic.com',
        anthropicVersion: '2023-06-01',
        beta: 'managed-agents-2026-04-01',
        model: 'claude-sonnet-4-5',
        environmentName: 'agentrx',
        environment: { type: 'cloud', networking: { type: 'unrestricted' } },
        requestTimeoutMs: 60_000,
        maxRetries: 3,
        retryBaseMs: 500,
        listPageSize: 100,
        streamPath: '/v1/sessions/{id}/events/stream',
        eventDeltas: false,
      });
      expect(options.apiKey.reveal()).toBe(API_KEY);
      expect(inspect(options, { depth: 5 })).not.toContain(API_KEY);
      expect(JSON.stringify(options)).not.toContain(API_KEY);
    });
  });

  describe('when fields are invalid', () => {
    it('should name each bad field', () => {
      expect(validate({}).errors).toEqual(['apiKey']);
      expect(validate({ apiKey: '' }).errors).toEqual(['apiKey']);
      expect(
        validate({
          apiKey: 'k',
          baseUrl: 'nope',
          beta: 'files-api-2025-04-14',
          listPageSize: 0,
          streamPath: '/v1/stream',
          maxRetries: 11,
          eventDeltas: 'maybe',
        }).errors.sort(),
      ).toEqual(['baseUrl', 'beta', 'eventDeltas', 'listPageSize', 'maxRetries', 'streamPath']);
      expect(validate({ apiKey: 'k', baseUrl: 'http://127.0.0.1:4010', streamIdleTimeoutMs: '250', eventDeltas: 'true' })).toMatchObject({
        errors: [],
        options: { streamIdleTimeoutMs: 250, eventDeltas: true },
      });
    });
  });
});

describe('cmaConfigSection', () => {
  it('should be required only when claude-managed-agents is the provider', () => {
    expect(cmaConfigSection).toMatchObject({ key: 'claude-managed-agents', options: CmaProviderOptionsClass, token: CmaProviderOptions });
    expect(cmaConfigSection.required({ provider: 'claude-managed-agents' } as never)).toBe(true);
    expect(cmaConfigSection.required({ provider: 'local' } as never)).toBe(false);
  });
});

describe('cmaProviderModule', () => {
  describe('when loaded into a container', () => {
    it('should register CmaAgentProvider under its id and build one streaming singleton on demand, with or without options', () => {
      for (const withOptions of [true, false]) {
        const container = new Container();
        if (withOptions) container.bind(CmaProviderOptions).toConstantValue(validate({ apiKey: API_KEY }).options);
        container.bind(HttpClientFactory).to(HttpClientFactoryImpl).inSingletonScope();
        container.bind(Logger).toConstantValue(new MemoryLogger());
        container.load(cmaProviderModule);
        expect(container.getAll<ProviderRegistration>(ProviderRegistration)).toEqual([
          { id: 'claude-managed-agents', service: CmaAgentProvider, telemetryName: 'anthropic' },
        ]);
        const p = container.get(CmaAgentProvider);
        expect(p).toBeInstanceOf(CmaAgentProvider);
        expect([p.id, p.mode]).toEqual(['claude-managed-agents', 'streaming']);
        expect(container.get(CmaAgentProvider)).toBe(p);
      }
    });
  });

  describe('when AgentRx selects claude-managed-agents with a bad section', () => {
    it('should list every problem of the section in one invalid_config error with the section prefix, and no secret', async () => {
      const err = await createError({
        provider: 'claude-managed-agents',
        providers: { 'claude-managed-agents': { baseUrl: 'not a url', maxRetries: -1, apiKye: API_KEY } },
      });
      expect(err.code).toBe('invalid_config');
      const paths = (err.details!['issues'] as { path: string }[]).map((i) => i.path).sort();
      expect(paths).toEqual([
        'providers.claude-managed-agents.apiKey',
        'providers.claude-managed-agents.apiKye',
        'providers.claude-managed-agents.baseUrl',
        'providers.claude-managed-agents.maxRetries',
      ]);
      expect(err.message).toContain('- providers.claude-managed-agents.apiKey: is required');
      expect(err.message).not.toContain(API_KEY);
      expect(inspect(err, { depth: 10 })).not.toContain(API_KEY);
    });

    it('should report a missing section as a missing apiKey', async () => {
      const err = await createError({ provider: 'claude-managed-agents' });
      expect((err.details!['issues'] as { path: string }[]).map((i) => i.path)).toEqual(['providers.claude-managed-agents.apiKey']);
    });
  });

  describe('when AgentRx selects another provider', () => {
    let emu: CmaEmulator | undefined;
    afterEach(async () => {
      await emu?.close();
      emu = undefined;
    });

    it('should load, and reject a session that picks claude-managed-agents with a clear invalid_config', async () => {
      const rx = await AgentRx.create({
        modules: [cmaProviderModule],
        tools: [EchoToolHandler],
        config: { provider: 'local', consumers: { terminal: false }, logLevel: 'silent' },
      });
      try {
        expect(rx.pluginIds.providers.sort()).toEqual(['bedrock-agentcore', 'claude-managed-agents', 'local']);
        await expect(rx.run({ provider: 'claude-managed-agents', prompt: 'x' })).rejects.toMatchObject({
          code: 'invalid_config',
          message: expect.stringContaining("providers['claude-managed-agents'].apiKey"),
        });
      } finally {
        await rx.stop();
      }
    });

    it('should still use a valid claude-managed-agents section when a session picks it', async () => {
      emu = await startCmaEmulator({ script: [{ text: 'from cma' }] });
      const rx = await AgentRx.create({
        modules: [cmaProviderModule],
        config: {
          provider: 'local',
          consumers: { terminal: false },
          logLevel: 'silent',
          providers: { 'claude-managed-agents': { apiKey: API_KEY, baseUrl: emu.baseUrl } },
        },
      });
      try {
        await expect(rx.run({ provider: 'claude-managed-agents', prompt: 'x' })).resolves.toMatchObject({
          provider: 'claude-managed-agents',
          text: 'from cma',
        });
        expect(inspect(rx.config, { depth: 10 })).not.toContain(API_KEY);
        expect(JSON.stringify(rx.config)).not.toContain(API_KEY);
        expect(emu.requests.length).toBeGreaterThan(0);
        expect(JSON.stringify(emu.requests)).not.toContain(API_KEY);
      } finally {
        await rx.stop();
      }
    });
  });
});

describe('CmaProviderOptionsClass.agent (an agent by tag)', () => {
  describe('when validated', () => {
    it('should take <agent name>:<tag> and name the field otherwise, or when agentId is set too', () => {
      const of = (extra: Record<string, unknown>) => plainToInstance(CmaProviderOptionsClass, { apiKey: API_KEY, ...extra }, { exposeDefaultValues: true });
      expect(validateSync(of({ agent: 'support:prod' }))).toEqual([]);
      expect(validateSync(of({ agent: 'team:support:v1.2' }))).toEqual([]);
      for (const bad of ['support', 'support:', ':prod', 'support:pr od']) {
        const errors = validateSync(of({ agent: bad }));
        expect(errors.map((e) => e.property)).toEqual(['agent']);
        expect(JSON.stringify(errors[0]!.constraints)).toContain("'<agent name>:<tag>'");
      }
      const both = validateSync(of({ agent: 'support:prod', agentId: 'agent_1' }));
      expect(both.map((e) => [e.property, Object.values(e.constraints ?? {})])).toEqual([['agent', ['set either agent or agentId, not both']]]);
    });
  });
});
