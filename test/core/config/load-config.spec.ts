import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { IsInt, IsOptional, IsString, IsUrl, Length, Matches, Max, Min } from 'class-validator';
import {
  AgentConfig,
  AgentRxConfig,
  type ConfigIssue,
  type ConfigSection,
  ConsumersConfig,
  IsSecret,
  LimitsConfig,
  loadConfig,
  REDACTED,
  Secret,
  SecretField,
  StoreConfig,
  TimeoutsConfig,
  validateConfig,
} from '../../../src/core/config/index.js';
import { AgentRxError, isAgentRxError } from '../../../src/core/errors.js';
import { coreStores } from '../../../src/core/store/core-stores.js';
import { tempDir } from '../../support/temp-dir.js';
import { thrown } from '../../support/agentrx-errors.js';

/** Distinctive, so a leak anywhere is found by a plain substring search. */
const SECRET = 'sk-LEAKCHECK-93fd1a7e-DO-NOT-PRINT';

/** Stand-in for a provider plugin's options (tests create no plugin files). */
class LocalLikeOptions {
  @IsUrl({ require_tld: false })
  baseUrl!: string;

  @SecretField()
  @IsSecret()
  apiKey!: Secret;

  @IsOptional()
  @IsInt()
  @Min(1)
  retries: number = 3;

  /** A secret-looking field that is a plain string, with a validator message quoting $value. */
  @IsOptional()
  @IsString()
  @Matches(/^tok_/, { message: '$property must start with tok_, not $value' })
  sessionToken?: string;

  /** Another plain-string secret with a constraint it can fail. */
  @IsOptional()
  @IsString()
  @Length(64, 128)
  password?: string;
}

const LocalLikeToken = Symbol('LocalLikeOptions');
const localSection: ConfigSection<LocalLikeOptions> = {
  key: 'local',
  options: LocalLikeOptions,
  token: LocalLikeToken,
  required: (config) => config.provider === 'local',
};

class DashboardOptions {
  @IsInt()
  @Min(1)
  @Max(65535)
  port: number = 8080;
}

const dashboardSection: ConfigSection<DashboardOptions> = {
  key: 'dashboard',
  options: DashboardOptions,
  token: Symbol('DashboardOptions'),
  scope: 'root',
};

const validLocal = { baseUrl: 'http://localhost:11434/v1', apiKey: SECRET };

async function rejected(p: Promise<unknown>): Promise<AgentRxError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AgentRxError) return e;
    throw e;
  }
  throw new Error('expected an AgentRxError, the promise resolved');
}

const issuesOf = (e: AgentRxError): ConfigIssue[] => (e.details?.issues as ConfigIssue[] | undefined) ?? [];
const pathsOf = (e: AgentRxError): string[] => issuesOf(e).map((i) => i.path);
const issueAt = (e: AgentRxError, path: string): ConfigIssue | undefined => issuesOf(e).find((i) => i.path === path);

/** Every rendering of the error a log line or a crash report could contain. */
function renderings(e: AgentRxError): string[] {
  return [e.message, JSON.stringify(e), JSON.stringify(e.details), inspect(e, { depth: Infinity }), String(e.stack)];
}

describe('load-config', () => {
  describe('.validateConfig', () => {
    describe('when called with {} and no sections', () => {
      let result: ReturnType<typeof validateConfig>;

      beforeEach(() => {
        result = validateConfig({}, [], {});
      });

      it('should fill every default', () => {
        const { config } = result;
        expect(config.provider).toBe('local');
        expect({ ...config.agent }).toEqual({ name: 'agentrx' });
        expect({ ...config.limits }).toEqual({
          runTimeoutMs: 600_000,
          streamIdleTimeoutMs: 300_000,
          toolTimeoutMs: 60_000,
          maxTurns: 20,
          toolConcurrency: 8,
          reconnectAttempts: 5,
          reconnectBaseMs: 250,
          dedupeWindow: 5_000,
          maxReprompts: 2,
        });
        expect({ ...config.consumers }).toEqual({
          terminal: true,
          jsonl: false,
          handlerTimeoutMs: 5_000,
          queueLimit: 10_000,
          stopTimeoutMs: 5_000,
        });
        expect({ ...config.timeouts }).toEqual({
          toolsPhaseMs: 10_000,
          providersPhaseMs: 10_000,
          cleanupMs: 10_000,
          interruptMs: 2_000,
        });
        expect(config.store.type).toBe('memory');
        expect(config.store).not.toHaveProperty('dir');
        expect(config.retainEvents).toBe(true);
        expect(config.logLevel).toBe('warn');
        expect(config.providers).toEqual({});
      });

      it('should return validated class instances', () => {
        const { config } = result;
        expect(config).toBeInstanceOf(AgentRxConfig);
        expect(config.agent).toBeInstanceOf(AgentConfig);
        expect(config.limits).toBeInstanceOf(LimitsConfig);
        expect(config.consumers).toBeInstanceOf(ConsumersConfig);
        expect(config.store).toBeInstanceOf(StoreConfig);
        expect(config.timeouts).toBeInstanceOf(TimeoutsConfig);
      });

      it('should return no sections', () => {
        expect(result.sections.size).toBe(0);
      });
    });

    describe('when called with some fields of a nested object', () => {
      it('should keep the given fields and default the others', () => {
        const { config } = validateConfig({ limits: { maxTurns: 5 }, agent: { model: 'm-1' }, store: { type: 'file', dir: '/tmp/x' } }, [], {});
        expect(config.limits.maxTurns).toBe(5);
        expect(config.limits.runTimeoutMs).toBe(600_000);
        expect(config.limits.toolConcurrency).toBe(8);
        expect(config.agent).toEqual(expect.objectContaining({ name: 'agentrx', model: 'm-1' }));
        expect(config.store).toEqual(expect.objectContaining({ type: 'file', dir: '/tmp/x' }));
      });
    });

    describe('when called with several bad fields at once', () => {
      let error: AgentRxError;

      beforeEach(() => {
        error = thrown(() =>
          validateConfig(
            {
              provider: 'Open AI',
              agent: { name: 'has spaces!' },
              limits: { maxTurns: 5000, toolConcurrency: '8x', maxReprompts: -1 },
              consumers: { terminal: 'yes' },
              store: { type: 'file' },
              logLevel: 'loud',
            },
            [],
            {},
            undefined,
            coreStores,
          ),
        );
      });

      it('should throw one invalid_config error listing every issue', () => {
        expect(isAgentRxError(error, 'invalid_config')).toBe(true);
        expect(pathsOf(error).sort()).toEqual(
          ['agent.name', 'consumers.terminal', 'limits.maxReprompts', 'limits.maxTurns', 'limits.toolConcurrency', 'logLevel', 'provider', 'store.dir'].sort(),
        );
      });

      it('should put each issue on its own line as "- path: what; got value; expected …"', () => {
        const lines = error.message.split('\n');
        expect(lines[0]).toBe('invalid configuration (8 issues):');
        expect(lines).toContain('- limits.maxTurns: must not be greater than 1000; got 5000; expected an integer from 1 to 1000');
        expect(lines).toContain('- limits.toolConcurrency: must be an integer number; got "8x"; expected an integer from 1 to 64');
        expect(lines).toContain('- limits.maxReprompts: must not be less than 0; got -1; expected an integer from 0 to 20');
        expect(lines).toContain("- store.dir: is required; got undefined; expected a directory path (required when store.type is 'file')");
        expect(lines).toContainEqual(expect.stringMatching(/^- provider: .*; got "Open AI"; expected the kebab-case id of a registered provider, e.g. local$/));
        expect(lines).toContainEqual(expect.stringMatching(/^- agent\.name: .*; got "has spaces!"; expected a string of 1–64 characters matching /));
        expect(lines).toHaveLength(1 + 8);
      });

      it('should give each issue its path, message and value in details', () => {
        expect(issueAt(error, 'limits.maxTurns')).toEqual(
          expect.objectContaining({ path: 'limits.maxTurns', message: 'must not be greater than 1000', value: 5000 }),
        );
        expect(issueAt(error, 'consumers.terminal')).toEqual(expect.objectContaining({ value: 'yes', message: 'must be a boolean value' }));
      });
    });

    describe('when called with timeouts', () => {
      it('should keep the given ones, default the others and read numeric strings from ${VAR}', () => {
        const { config } = validateConfig({ timeouts: { toolsPhaseMs: 2_500, interruptMs: '${INTERRUPT_MS}' } }, [], { INTERRUPT_MS: '750' });
        expect({ ...config.timeouts }).toEqual({ toolsPhaseMs: 2_500, providersPhaseMs: 10_000, cleanupMs: 10_000, interruptMs: 750 });
      });

      it('should report every value that is not a positive integer a timer can hold, on its own line', () => {
        const error = thrown(() =>
          validateConfig({ timeouts: { toolsPhaseMs: 0, providersPhaseMs: 1.5, cleanupMs: 'soon', interruptMs: 2 ** 31, cleanupMS: 1 } }, [], {}),
        );
        const lines = error.message.split('\n');
        expect(lines[0]).toBe('invalid configuration (5 issues):');
        expect(lines).toContain('- timeouts.toolsPhaseMs: must not be less than 1; got 0; expected an integer from 1 to 2147483647');
        expect(lines).toContain('- timeouts.providersPhaseMs: must be an integer number; got 1.5; expected an integer from 1 to 2147483647');
        expect(lines).toContain('- timeouts.cleanupMs: must be an integer number; got "soon"; expected an integer from 1 to 2147483647');
        expect(lines).toContain('- timeouts.interruptMs: must not be greater than 2147483647; got 2147483648; expected an integer from 1 to 2147483647');
        expect(issueAt(error, 'timeouts.cleanupMS')?.expected).toContain('did you mean "cleanupMs"?');
      });

      it('should report a timeouts value that is not an object as such', () => {
        const error = thrown(() => validateConfig({ timeouts: 5000 }, [], {}));
        expect(issuesOf(error).map(({ path, message }) => ({ path, message }))).toEqual([{ path: 'timeouts', message: 'must be an object' }]);
      });
    });

    describe('when called with unknown keys', () => {
      let error: AgentRxError;

      beforeEach(() => {
        error = thrown(() => validateConfig({ provdier: 'local', limits: { maxTurn: 3 }, colour: 'blue' }, [], {}));
      });

      it('should report each unknown key, top-level and nested', () => {
        expect(pathsOf(error).sort()).toEqual(['colour', 'limits.maxTurn', 'provdier']);
        expect(issueAt(error, 'limits.maxTurn')?.message).toBe('unknown key');
      });

      it('should suggest the closest known key', () => {
        expect(issueAt(error, 'provdier')?.expected).toContain('did you mean "provider"?');
        expect(issueAt(error, 'limits.maxTurn')?.expected).toContain('did you mean "maxTurns"?');
        expect(issueAt(error, 'colour')?.expected).not.toContain('did you mean');
      });
    });

    describe('when a nested section is not an object', () => {
      it('should report the section itself as "must be an object", not its fields', () => {
        const error = thrown(() => validateConfig({ agent: null, limits: 'fast', consumers: [{ terminal: 1 }] }, [], {}));
        expect(issuesOf(error).map(({ path, message }) => ({ path, message }))).toEqual([
          { path: 'agent', message: 'must be an object' },
          { path: 'limits', message: 'must be an object' },
          { path: 'consumers', message: 'must be an object' },
        ]);
      });
    });

    describe('when a value is longer than 60 characters', () => {
      it('should show it truncated', () => {
        const long = 'n'.repeat(61) + 'TAIL_MARKER' + 'n'.repeat(100);
        const error = thrown(() => validateConfig({ agent: { name: long } }, [], {}));
        const value = issueAt(error, 'agent.name')?.value as string;
        expect(value.length).toBeLessThanOrEqual(60);
        expect(value.endsWith('…')).toBe(true);
        expect(error.message).not.toContain('TAIL_MARKER');
      });
    });

    describe('when called with something that is not an object', () => {
      it('should throw invalid_config', () => {
        expect(
          isAgentRxError(
            thrown(() => validateConfig([] as object, [], {})),
            'invalid_config',
          ),
        ).toBe(true);
      });
    });

    describe('when secrets are in the config and the config is invalid', () => {
      let error: AgentRxError;

      beforeEach(() => {
        error = thrown(() =>
          validateConfig(
            {
              limits: { maxTurns: 0 },
              // A misspelt top-level key holding a secret.
              apiKye: SECRET,
              providers: {
                local: { baseUrl: 'not a url', apiKey: SECRET, sessionToken: SECRET, password: SECRET },
                'claude-managed-agents': 'oops',
              },
            },
            [localSection],
            {},
          ),
        );
      });

      it('should report the issues of the secret fields', () => {
        expect(pathsOf(error)).toEqual(
          expect.arrayContaining(['apiKye', 'providers.local.sessionToken', 'providers.local.password', 'providers.local.baseUrl', 'limits.maxTurns']),
        );
        expect(issueAt(error, 'providers.local.password')?.value).toBe(REDACTED);
        expect(issueAt(error, 'providers.local.sessionToken')?.message).toBe(`must start with tok_, not ${REDACTED}`);
      });

      it('should never show the secret in the message, details, JSON or inspect output', () => {
        for (const text of renderings(error)) expect(text).not.toContain(SECRET);
      });
    });

    describe('when secrets are in a valid config', () => {
      let result: ReturnType<typeof validateConfig>;

      beforeEach(() => {
        result = validateConfig(
          { providers: { local: { ...validLocal, sessionToken: `tok_${SECRET}` }, 'bedrock-agentcore': { secretAccessKey: SECRET, region: 'us-east-1' } } },
          [localSection],
          {},
        );
      });

      it('should keep the secret usable through reveal()', () => {
        const local = result.sections.get('local') as LocalLikeOptions;
        expect(local.apiKey).toBeInstanceOf(Secret);
        expect(local.apiKey.reveal()).toBe(SECRET);
        expect((result.config.providers['bedrock-agentcore'] as { secretAccessKey: Secret }).secretAccessKey.reveal()).toBe(SECRET);
      });

      it('should keep every secret out of util.inspect of the config, plain-string ones included', () => {
        const shown = inspect(result.config, { depth: Infinity });
        expect(shown).toContain('us-east-1');
        expect(shown).toContain('sessionToken: [redacted]');
        expect(shown).not.toContain(SECRET);
      });

      it('should wrap secret-looking strings of a provider entry without a section in Secret', () => {
        const raw = result.config.providers['bedrock-agentcore'] as { secretAccessKey: Secret; region: string };
        expect(raw.secretAccessKey).toBeInstanceOf(Secret);
        expect(raw.region).toBe('us-east-1');
        expect(inspect(raw)).not.toContain(SECRET);
      });

      it('should show Secret fields of the sections as [redacted]', () => {
        const shown = inspect(result.sections, { depth: Infinity });
        expect(shown).toContain('apiKey: [redacted]');
        expect(shown).not.toContain(`'${SECRET}'`);
      });

      it('should keep every secret out of JSON.stringify of the config', () => {
        const json = JSON.stringify(result.config);
        expect(json).toContain('"region":"us-east-1"');
        expect(json).not.toContain(SECRET);
      });

      it('should leave the config data itself untouched by redaction', () => {
        expect((result.config.providers.local as LocalLikeOptions).sessionToken).toBe(`tok_${SECRET}`);
      });
    });

    describe('when string values reference environment variables', () => {
      const env = { MODEL: 'llama3', TURNS: '7', JSONL: 'true', EMPTY: '', DIR: '/var/agentrx' };
      let input: Record<string, unknown>;
      let config: AgentRxConfig;

      beforeEach(() => {
        input = {
          agent: { model: '${MODEL}', systemPrompt: 'you are ${MODEL:-x} on ${HOST:-localhost}, cost $${PRICE}' },
          limits: { maxTurns: '${TURNS}', toolConcurrency: '${CONCURRENCY:-4}' },
          consumers: { jsonl: '${JSONL}' },
          store: { type: '${STORE:-file}', dir: '${DIR}/sessions' },
          logLevel: '${EMPTY:-info}',
        };
        config = validateConfig(input, [], env).config;
      });

      it('should substitute ${VAR} from env', () => {
        expect(config.agent.model).toBe('llama3');
        expect(config.store).toMatchObject({ dir: '/var/agentrx/sessions' });
      });

      it('should use ${VAR:-default} when the variable is unset or empty, and the variable when set', () => {
        expect(config.agent.systemPrompt).toMatch(/^you are llama3 on localhost/);
        expect(config.limits.toolConcurrency).toBe(4);
        expect(config.store.type).toBe('file');
        expect(config.logLevel).toBe('info');
      });

      it('should keep $${ as a literal ${', () => {
        expect(config.agent.systemPrompt).toBe('you are llama3 on localhost, cost ${PRICE}');
      });

      it('should turn numeric and boolean strings into numbers and booleans', () => {
        expect(config.limits.maxTurns).toBe(7);
        expect(config.consumers.jsonl).toBe(true);
      });

      it('should not modify the input', () => {
        expect((input.agent as { model: string }).model).toBe('${MODEL}');
      });
    });

    describe('when a referenced variable is unset and has no default', () => {
      let error: AgentRxError;

      beforeEach(() => {
        error = thrown(() =>
          validateConfig(
            { agent: { name: '${AGENT_NAME}' }, limits: { maxTurns: -5 }, providers: { local: { ...validLocal, apiKey: '${LOCAL_API_KEY}' } } },
            [localSection],
            { UNRELATED: SECRET },
          ),
        );
      });

      it('should report it at its path, once, alongside the other issues', () => {
        expect(pathsOf(error).sort()).toEqual(['agent.name', 'limits.maxTurns', 'providers.local.apiKey']);
        expect(issueAt(error, 'agent.name')?.message).toBe('environment variable AGENT_NAME is not set');
        expect(error.message).toContain('- providers.local.apiKey: environment variable LOCAL_API_KEY is not set; got [redacted];');
      });

      it('should not show any environment value', () => {
        for (const text of renderings(error)) expect(text).not.toContain(SECRET);
      });
    });

    describe('when a reference is malformed', () => {
      it('should report it at its path', () => {
        const error = thrown(() => validateConfig({ agent: { model: '${1BAD}', systemPrompt: 'a ${OPEN' } }, [], {}));
        expect(issueAt(error, 'agent.model')?.message).toBe('malformed ${…} reference');
        expect(issueAt(error, 'agent.systemPrompt')?.message).toBe('unterminated ${ reference');
      });
    });

    describe('when the selected provider has a section and its value is absent', () => {
      let error: AgentRxError;

      beforeEach(() => {
        error = thrown(() => validateConfig({ limits: { maxTurns: 0 } }, [localSection], {}));
      });

      it('should validate the section as {} and report its required fields under providers.<key>, alongside core issues', () => {
        expect(pathsOf(error).sort()).toEqual(['limits.maxTurns', 'providers.local.apiKey', 'providers.local.baseUrl']);
        expect(error.message).toContain('- providers.local.baseUrl: is required; got undefined; expected a URL');
        expect(error.message).toContain('- providers.local.apiKey: is required; got undefined; expected a non-empty secret string');
      });
    });

    describe('when a section is not for the selected provider', () => {
      it('should skip it while absent', () => {
        const { sections, config } = validateConfig({ provider: 'bedrock-agentcore' }, [localSection], {});
        expect(sections.has('local')).toBe(false);
        expect(config.providers).toEqual({});
      });

      it('should still validate it when present', () => {
        const error = thrown(() => validateConfig({ provider: 'bedrock-agentcore', providers: { local: { baseUrl: 'not a url' } } }, [localSection], {}));
        expect(pathsOf(error).sort()).toEqual(['providers.local.apiKey', 'providers.local.baseUrl']);
      });
    });

    describe('when a section value has bad and unknown fields or is not an object', () => {
      it('should report them with the section prefix', () => {
        const error = thrown(() => validateConfig({ providers: { local: { ...validLocal, retries: 0, baseUrll: 'x' } } }, [localSection], {}));
        expect(pathsOf(error).sort()).toEqual(['providers.local.baseUrll', 'providers.local.retries']);
        expect(issueAt(error, 'providers.local.baseUrll')?.expected).toContain('did you mean "baseUrl"?');

        const notObject = thrown(() => validateConfig({ providers: { local: 'http://x' } }, [localSection], {}));
        expect(pathsOf(notObject)).toEqual(['providers.local']);
      });
    });

    describe('when a section value is valid', () => {
      it('should return the validated instance with defaults, by key and in config.providers', () => {
        const { sections, config } = validateConfig({ providers: { local: validLocal } }, [localSection], {});
        const local = sections.get('local');
        expect(local).toBeInstanceOf(LocalLikeOptions);
        expect((local as LocalLikeOptions).retries).toBe(3);
        expect((local as LocalLikeOptions).baseUrl).toBe(validLocal.baseUrl);
        expect(config.providers.local).toBe(local);
      });
    });

    describe('when a root-scope section is given', () => {
      it('should validate the top-level key as the section, not report it as unknown', () => {
        const ok = validateConfig({ provider: 'bedrock-agentcore', dashboard: { port: 9000 } }, [localSection, dashboardSection], {});
        expect((ok.sections.get('dashboard') as DashboardOptions).port).toBe(9000);

        const error = thrown(() => validateConfig({ provider: 'bedrock-agentcore', dashboard: { port: 70000 } }, [dashboardSection], {}));
        expect(pathsOf(error)).toEqual(['dashboard.port']);
      });
    });

    describe('when a section checks the rest of the config', () => {
      // The dashboard needs the file store (as the distributed runtime needs the Redis one).
      const checked: ConfigSection<DashboardOptions> = {
        ...dashboardSection,
        check: (_dashboard, config) =>
          config.store.type === 'file' ? [] : [{ path: 'dashboard', message: 'needs the file store', value: config.store.type, expected: "store.type 'file'" }],
      };

      it('should report its issue in the one list, when the section and the core config are valid', () => {
        const error = thrown(() => validateConfig({ dashboard: { port: 9000 } }, [checked], {}, undefined, coreStores));
        expect(issuesOf(error)).toEqual([expect.objectContaining({ path: 'dashboard', message: 'needs the file store', value: 'memory' })]);
        expect(
          validateConfig({ dashboard: {}, store: { type: 'file', dir: '/tmp/x' } }, [checked], {}, undefined, coreStores).sections.get('dashboard'),
        ).toBeDefined();
      });

      it('should not check when the section or the core config has an issue of its own', () => {
        expect(pathsOf(thrown(() => validateConfig({ dashboard: { port: 70000 } }, [checked], {}, undefined, coreStores)))).toEqual(['dashboard.port']);
        expect(pathsOf(thrown(() => validateConfig({ dashboard: {}, limits: { maxTurns: 0 } }, [checked], {}, undefined, coreStores)))).toEqual([
          'limits.maxTurns',
        ]);
      });

      it('should not check a section the config leaves out', () => {
        expect(validateConfig({}, [checked], {}, undefined, coreStores).sections.has('dashboard')).toBe(false);
      });
    });

    describe('when two sections share a key', () => {
      it('should throw duplicate_plugin', () => {
        const error = thrown(() => validateConfig({}, [localSection, { ...localSection, token: Symbol('other') }], {}));
        expect(error.code).toBe('duplicate_plugin');
      });
    });
  });

  describe('.validateConfig with a URL that carries credentials', () => {
    const PASSWORD = 'hunter2-URLPASS';

    describe('when the URL fails validation under a non-secret key', () => {
      it('should show the URL without its user and password, in every rendering', () => {
        const error = thrown(() =>
          validateConfig({ providers: { local: { ...validLocal, baseUrl: `http://admin:${PASSWORD} x@127.0.0.1:11434/v1` } } }, [localSection], {}),
        );
        expect(pathsOf(error)).toEqual(['providers.local.baseUrl']);
        expect(error.message).toContain('got "http://[redacted]@127.0.0.1:11434/v1"');
        expect(issueAt(error, 'providers.local.baseUrl')?.value).toBe('http://[redacted]@127.0.0.1:11434/v1');
        for (const text of renderings(error)) expect(text).not.toContain(PASSWORD);
      });
    });

    describe('when the URL is the value of any other failing key, bare or inside an array', () => {
      it('should redact the credentials whatever the key name', () => {
        const error = thrown(() =>
          validateConfig(
            {
              provider: `https://me:${PASSWORD}@example.com`,
              providers: { mirror: [`redis://default:${PASSWORD}@127.0.0.1:6379`], cache: `me:${PASSWORD}@127.0.0.1:6379` },
            },
            [],
            {},
          ),
        );
        expect(pathsOf(error).sort()).toEqual(['provider', 'providers.cache', 'providers.mirror']);
        expect(error.message).toContain('https://[redacted]@example.com');
        expect(error.message).toContain('redis://[redacted]@127.0.0.1:6379');
        expect(error.message).toContain('[redacted]@127.0.0.1:6379');
        for (const text of renderings(error)) expect(text).not.toContain(PASSWORD);
      });
    });
  });

  describe('.validateConfig with the registered provider ids', () => {
    describe('when the provider is none of them and another field is wrong too', () => {
      it('should list both issues in one invalid_config, with the known ids and the closest one', () => {
        const error = thrown(() => validateConfig({ provider: 'locl', limits: { maxTurns: 0 } }, [], {}, ['local', 'claude-managed-agents']));
        expect(error.code).toBe('invalid_config');
        expect(pathsOf(error)).toEqual(['limits.maxTurns', 'provider']);
        expect(error.message).toContain(
          '- provider: no provider plugin has this id; got "locl"; expected the id of a registered provider (did you mean "local"?); known: local, claude-managed-agents',
        );
      });
    });

    describe('when the provider id is malformed', () => {
      it('should report it once, as malformed', () => {
        const error = thrown(() => validateConfig({ provider: 'Not An Id' }, [], {}, ['local']));
        expect(issuesOf(error)).toHaveLength(1);
        expect(issueAt(error, 'provider')?.expected).toContain('the kebab-case id of a registered provider');
      });
    });

    describe('when the provider is registered, or no ids are given', () => {
      it('should accept it', () => {
        expect(validateConfig({ provider: 'claude-managed-agents' }, [], {}, ['local', 'claude-managed-agents']).config.provider).toBe('claude-managed-agents');
        expect(validateConfig({ provider: 'anything' }, [], {}).config.provider).toBe('anything');
      });
    });
  });

  describe('.loadConfig', () => {
    let dir: string;

    beforeAll(async () => {
      dir = await tempDir('agentrx-config-', { scope: 'file' });
    });

    async function file(name: string, text: string): Promise<string> {
      const path = join(dir, name);
      await writeFile(path, text, 'utf8');
      return path;
    }

    describe('when input is undefined', () => {
      it('should return the defaults', async () => {
        const { config } = await loadConfig(undefined, { env: {} });
        expect(config.limits.maxTurns).toBe(20);
      });
    });

    describe('when input is an object', () => {
      it('should validate it like validateConfig', async () => {
        const error = await rejected(loadConfig({ limits: { maxTurns: 0 } }, { env: {} }));
        expect(pathsOf(error)).toEqual(['limits.maxTurns']);
      });
    });

    describe('when input is the path of a valid JSON file', () => {
      it('should read, interpolate and validate it with the sections', async () => {
        const path = await file(
          'ok.json',
          JSON.stringify({ provider: 'local', limits: { maxTurns: 3 }, providers: { local: { baseUrl: '${BASE}', apiKey: '${KEY}' } } }),
        );
        const { config, sections } = await loadConfig(path, { sections: [localSection], env: { BASE: 'http://127.0.0.1:8080/v1', KEY: SECRET } });
        expect(config.limits.maxTurns).toBe(3);
        expect((sections.get('local') as LocalLikeOptions).baseUrl).toBe('http://127.0.0.1:8080/v1');
        expect((sections.get('local') as LocalLikeOptions).apiKey.reveal()).toBe(SECRET);
      });
    });

    describe('when the file starts with a byte order mark', () => {
      it('should read it like any JSON file', async () => {
        const path = await file('bom.json', '\uFEFF{"logLevel": "debug"}');
        const { config } = await loadConfig(path, { env: {} });
        expect(config.logLevel).toBe('debug');
      });
    });

    describe('when the file holds an invalid config', () => {
      it('should name the file in the error', async () => {
        const path = await file('bad.json', JSON.stringify({ limits: { maxTurns: 0 } }));
        const error = await rejected(loadConfig(path, { env: {} }));
        expect(error.message.split('\n')[0]).toBe(`invalid configuration in ${path} (1 issue):`);
        expect(error.details?.source).toBe(path);
      });
    });

    describe('when the file does not exist', () => {
      it('should reject with invalid_config naming the path', async () => {
        const path = join(dir, 'missing.json');
        const error = await rejected(loadConfig(path, { env: {} }));
        expect(error.code).toBe('invalid_config');
        expect(error.message).toBe(`config file ${path} not found`);
        expect(error.details?.path).toBe(path);
      });
    });

    describe('when the file is not valid JSON', () => {
      it('should reject with invalid_config naming the path and the parse position', async () => {
        const text = `{\n  "provider": "local",\n  "limits": { "maxTurns": 3 x }\n}`;
        const path = await file('broken.json', text);
        const error = await rejected(loadConfig(path, { env: {} }));
        const position = text.indexOf(' x') + 1;
        expect(error.code).toBe('invalid_config');
        expect(error.message).toBe(
          `config file ${path} is not valid JSON: expected ',' or '}' after a property value, found "x" at position ${position} (line 3 column 29)`,
        );
        expect(error.details).toEqual({ path, position, line: 3, column: 29 });
      });

      it('should agree with the position V8 reports when it reports one', async () => {
        for (const [name, text] of [
          ['a.json', '{"a": 1,\n "b": 2 "c": 3}'],
          ['b.json', '{"a": 1}}'],
          ['c.json', '{"a": 1'],
          ['d.json', '{"a": "x\ny"}'],
        ] as const) {
          const v8 = /at position (\d+)/.exec(
            ((): string => {
              try {
                JSON.parse(text);
                return '';
              } catch (e) {
                return (e as Error).message;
              }
            })(),
          );
          expect(v8).not.toBeNull();
          const error = await rejected(loadConfig(await file(name, text), { env: {} }));
          expect(error.details?.position).toBe(Number(v8?.[1]));
        }
      });

      it('should point at a trailing comma and at an unexpected end', async () => {
        const trailing = await rejected(loadConfig(await file('t.json', '{"a": [1, 2,]}'), { env: {} }));
        expect(trailing.details?.position).toBe(12);
        const empty = await rejected(loadConfig(await file('e.json', ''), { env: {} }));
        expect(empty.message).toContain('unexpected end of input at position 0');
      });

      it('should not quote the file text, which may hold a secret', async () => {
        const path = await file('secret.json', `{ "providers": { "local": { "apiKey": "${SECRET}" } } oops`);
        const error = await rejected(loadConfig(path, { env: {} }));
        expect(error.message).toContain(path);
        for (const text of renderings(error)) expect(text).not.toContain(SECRET);
      });
    });

    describe('when the file holds JSON that is not an object', () => {
      it('should reject with invalid_config', async () => {
        const error = await rejected(loadConfig(await file('array.json', '[1, 2]'), { env: {} }));
        expect(error.code).toBe('invalid_config');
        expect(error.message).toContain('must hold a JSON object');
      });
    });
  });
});
