import { inspect } from 'node:util';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { AgentRxConfig } from '../../../../src/core/config/agentrx.config.js';
import { validateConfig } from '../../../../src/core/config/load-config.js';
import { Secret } from '../../../../src/core/config/secret.js';
import { AgentCoreProviderOptionsClass, agentCoreConfigSection } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore.config.js';
import { controlError, credentialsOf, resolveRegion } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-clients.js';
import { newRuntimeSessionId, validateRuntimeSessionId } from '../../../../src/plugins/providers/bedrock-agentcore/runtime-session-id.js';

const SECRET = 'wJalrXUtnFEMI-agentcore-config-secret';
const TOKEN = 'FwoGZXIvYXdzEJr-session-token-secret';

function validate(plain: Record<string, unknown>): { options: AgentCoreProviderOptionsClass; errors: string[] } {
  const options = plainToInstance(AgentCoreProviderOptionsClass, plain, { exposeDefaultValues: true });
  return { options, errors: validateSync(options, { whitelist: true, forbidNonWhitelisted: true }).map((e) => e.property) };
}

describe('AgentCoreProviderOptionsClass', () => {
  describe('when validated from an empty section', () => {
    it('should pass with the documented defaults and no region, harness or credentials', () => {
      const { options, errors } = validate({});
      expect(errors).toEqual([]);
      expect({ ...options }).toEqual({
        idleTimeoutMs: 300_000,
        maxRetries: 2,
        retryBaseMs: 500,
        harnessNamePrefix: 'agentrx',
        provisionTimeoutMs: 600_000,
        pollIntervalMs: 2_000,
        sessionStoragePath: '/mnt/data',
      });
    });
  });

  describe('when only one half of the static credentials is given', () => {
    it('should name the missing half', () => {
      expect(validate({ accessKeyId: 'AKID' }).errors).toEqual(['secretAccessKey']);
      expect(validate({ secretAccessKey: SECRET }).errors).toEqual(['accessKeyId']);
      expect(validate({ accessKeyId: 'AKID', secretAccessKey: SECRET, sessionToken: TOKEN }).errors).toEqual([]);
    });
  });

  describe('when fields are invalid', () => {
    it('should name each bad field', () => {
      expect(
        validate({
          region: 'Mars',
          endpoint: 'not a url',
          harnessArn: 'harness-1',
          maxRetries: 11,
          idleTimeoutMs: 0,
          harnessNamePrefix: '9lives',
        }).errors.sort(),
      ).toEqual(['endpoint', 'harnessArn', 'harnessNamePrefix', 'idleTimeoutMs', 'maxRetries', 'region'].sort());
      expect(validate({ environmentVariables: { A: 1 } }).errors).toEqual(['environmentVariables']);
    });

    it('should accept numeric strings from ${VAR} interpolation', () => {
      const { options, errors } = validate({ maxIterations: '7', idleTimeoutMs: '1000' });
      expect(errors).toEqual([]);
      expect(options.maxIterations).toBe(7);
    });
  });

  describe('when inspected or serialized with credentials and environment variables', () => {
    it('should redact the secret, the token and the variable values', () => {
      const { options } = validate({
        accessKeyId: 'AKIDVISIBLE',
        secretAccessKey: SECRET,
        sessionToken: TOKEN,
        environmentVariables: { DATABASE_URL: 'postgres://app:hunter2-env-value@db' },
        region: 'us-west-2',
      });
      for (const shown of [inspect(options, { depth: 5 }), JSON.stringify(options)]) {
        expect(shown).not.toContain(SECRET);
        expect(shown).not.toContain(TOKEN);
        expect(shown).not.toContain('hunter2-env-value');
        expect(shown).toContain('DATABASE_URL');
        expect(shown).toContain('us-west-2');
      }
      expect(options.secretAccessKey).toBeInstanceOf(Secret);
      expect(options.secretAccessKey!.reveal()).toBe(SECRET);
    });
  });

  describe('as a config section', () => {
    it('should be required only when the provider is selected, and keep secrets out of the error', () => {
      expect(agentCoreConfigSection.required!({ provider: 'bedrock-agentcore' } as AgentRxConfig)).toBe(true);
      expect(agentCoreConfigSection.required!({ provider: 'local' } as AgentRxConfig)).toBe(false);
      let message = '';
      try {
        validateConfig(
          { provider: 'bedrock-agentcore', providers: { 'bedrock-agentcore': { secretAccessKey: SECRET, region: 'bad' } } },
          [agentCoreConfigSection],
          {},
        );
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toContain('providers.bedrock-agentcore.accessKeyId');
      expect(message).toContain('providers.bedrock-agentcore.region');
      expect(message).not.toContain(SECRET);
    });
  });
});

describe('resolveRegion', () => {
  it('should prefer the option, then AWS_REGION, then AWS_DEFAULT_REGION', () => {
    expect(resolveRegion({ region: 'eu-west-3' }, { AWS_REGION: 'us-east-2' })).toBe('eu-west-3');
    expect(resolveRegion({}, { AWS_REGION: 'us-east-2', AWS_DEFAULT_REGION: 'us-west-1' })).toBe('us-east-2');
    expect(resolveRegion({}, { AWS_REGION: ' ', AWS_DEFAULT_REGION: 'us-west-1' })).toBe('us-west-1');
  });

  it('should throw invalid_config rather than fall back to a built-in region', () => {
    expect(() => resolveRegion({}, {})).toThrow(expect.objectContaining({ code: 'invalid_config', message: expect.stringContaining('AWS_DEFAULT_REGION') }));
  });
});

describe('credentialsOf', () => {
  it('should use the default chain when no keys are configured', () => {
    expect(credentialsOf({})).toBeUndefined();
  });

  it('should reveal the secret only when the SDK asks for the credentials', async () => {
    const provider = credentialsOf({ accessKeyId: 'AKID', secretAccessKey: new Secret(SECRET), sessionToken: new Secret(TOKEN) })!;
    expect(inspect(provider)).not.toContain(SECRET);
    await expect(provider()).resolves.toEqual({ accessKeyId: 'AKID', secretAccessKey: SECRET, sessionToken: TOKEN });
  });
});

describe('controlError', () => {
  it('should classify HTTP statuses, throttling and transport errors', () => {
    const sdk = (name: string, status: number): Error => Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status } });
    expect(controlError('GetHarness', sdk('InternalServerException', 500)).details).toMatchObject({ status: 500, transient: true });
    expect(controlError('GetHarness', sdk('ThrottlingException', 400)).details).toMatchObject({ transient: true });
    expect(controlError('GetHarness', sdk('ValidationException', 400)).details).toMatchObject({ status: 400, transient: false });
    expect(controlError('GetHarness', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toMatchObject({
      code: 'http_error',
      details: { transient: true },
    });
    expect(controlError('GetHarness', new Error('weird'))).toMatchObject({ code: 'provider_error', details: { transient: false } });
  });
});

describe('runtime session ids', () => {
  it('should generate valid ids and validate given ones', () => {
    const id = newRuntimeSessionId();
    expect(validateRuntimeSessionId(id)).toBe(id);
    expect(newRuntimeSessionId()).not.toBe(id);
    expect(validateRuntimeSessionId('a'.repeat(33))).toHaveLength(33);
    expect(validateRuntimeSessionId('Z'.repeat(100))).toHaveLength(100);
    for (const bad of ['a'.repeat(32), 'a'.repeat(101), `-${'a'.repeat(40)}`, `${'a'.repeat(40)} x`, 42]) {
      expect(() => validateRuntimeSessionId(bad)).toThrow(expect.objectContaining({ code: 'invalid_options' }));
    }
  });
});

describe('AgentCoreProviderOptionsClass.harness (a harness by tag)', () => {
  describe('when validated', () => {
    it('should take <agent name>:<tag> and name the field otherwise, or when harnessArn is set too', () => {
      expect(validate({ harness: 'support:prod' }).errors).toEqual([]);
      for (const bad of ['support', 'support:', ':prod', 'support:p/d']) expect(validate({ harness: bad }).errors).toEqual(['harness']);
      expect(validate({ harness: 'support:prod', harnessArn: 'arn:aws:bedrock-agentcore:eu-west-1:1:harness/x' }).errors).toEqual(['harness']);
    });
  });
});
