import { inspect } from 'node:util';
import { IsString, IsUrl, Matches } from 'class-validator';
import { configError, configIssue } from '../../../src/core/config/config-issue.js';
import { type ConfigIssue, type ConfigSection, REDACTED, validateConfig } from '../../../src/core/config/index.js';
import { redactSecretText } from '../../../src/core/config/secret.js';
import { AgentRxError } from '../../../src/core/errors.js';
import { thrown } from '../../support/agentrx-errors.js';

/** What a user pastes into the wrong field: distinctive, so a leak is found by a substring search. */
const API_KEY = 'sk-proj-Q7vX2mL9pR4tW8zK1bN6';
/** The same, lowercase: it passes the provider id's kebab-case pattern, so only the unknown-id issue shows it. */
const LOWER_KEY = 'sk-proj-q7vx2ml9pr4tw8zk1bn6';
const BEARER = 'eYq83LmZ0pQx7Vt2KsR9wNc4';
const RANDOM = 'x7Kp2Qv9Lm4Zr8Tb1Yw6Nc3HqP0s';

class EndpointOptions {
  @IsUrl({ require_tld: false, require_protocol: true })
  baseUrl!: string;

  @IsString()
  @Matches(/^[a-z-]+$/)
  name: string = 'default';
}

const endpointSection: ConfigSection<EndpointOptions> = { key: 'endpoint', options: EndpointOptions, token: Symbol('EndpointOptions'), scope: 'root' };

const issuesOf = (e: AgentRxError): ConfigIssue[] => (e.details?.issues as ConfigIssue[] | undefined) ?? [];

/** Every way the error may be shown: message, JSON, details, inspect, stack. */
function renderings(e: AgentRxError): string[] {
  return [e.message, JSON.stringify(e), JSON.stringify(e.details), inspect(e, { depth: Infinity }), String(e.stack)];
}

describe('config issues', () => {
  describe('.validateConfig', () => {
    describe('when an API key is pasted into a URL field and the provider name', () => {
      it('should show [redacted] for both, in the message and in details, never the key', () => {
        const error = thrown(() =>
          validateConfig({ provider: LOWER_KEY, endpoint: { baseUrl: API_KEY } }, [endpointSection], {}, ['local', 'claude-managed-agents']),
        );
        expect(error.code).toBe('invalid_config');
        expect(issuesOf(error).map((i) => [i.path, i.value])).toEqual([
          ['provider', REDACTED],
          ['endpoint.baseUrl', REDACTED],
        ]);
        expect(error.message).toContain('- provider: no provider plugin has this id; got "[redacted]"');
        expect(error.message).toContain('- endpoint.baseUrl: must be a URL address; got "[redacted]"');
        for (const text of renderings(error)) {
          expect(text).not.toContain(API_KEY);
          expect(text).not.toContain(LOWER_KEY);
        }
      });
    });

    describe('when a bearer token or a long random token is typed into a plain field', () => {
      it('should redact the credentials and keep the rest of the value', () => {
        const error = thrown(() => validateConfig({ endpoint: { baseUrl: 'http://127.0.0.1:1/v1', name: `Bearer ${BEARER}` } }, [endpointSection], {}));
        expect(issuesOf(error)[0]!.value).toBe('Bearer [redacted]');
        const unknown = thrown(() => validateConfig({ endpoint: { baseUrl: 'http://127.0.0.1:1/v1', nmae: `token ${RANDOM}` } }, [endpointSection], {}));
        expect(unknown.message).toContain('unknown key; got "token [redacted]"');
        for (const text of [...renderings(error), ...renderings(unknown)]) {
          expect(text).not.toContain(BEARER);
          expect(text).not.toContain(RANDOM);
        }
      });
    });

    describe('when a plain value is wrong', () => {
      it('should still show it (model ids, paths and names are not secrets)', () => {
        const error = thrown(() =>
          validateConfig({ endpoint: { baseUrl: 'claude-sonnet-4-5-20250929', name: '/Users/Alice/Projects2024/agentrx' } }, [endpointSection], {}),
        );
        expect(issuesOf(error).map((i) => i.value)).toEqual(['claude-sonnet-4-5-20250929', '/Users/Alice/Projects2024/agentrx']);
      });
    });
  });

  describe('configError', () => {
    describe("when a section's own check puts a secret-looking value in its message", () => {
      it('should redact it in the message and in details', () => {
        const issue: ConfigIssue = { path: 'store.url', message: `cannot use ${API_KEY} here`, value: API_KEY, expected: 'a URL' };
        const error = configError([issue, configIssue('agent.name', 'name', `bad name ${API_KEY}`, API_KEY, 'a name')], undefined);
        expect(issuesOf(error).map((i) => [i.message, i.value])).toEqual([
          ['cannot use [redacted] here', REDACTED],
          ['bad name [redacted]', REDACTED],
        ]);
        for (const text of renderings(error)) expect(text).not.toContain(API_KEY);
      });
    });
  });

  describe('redactSecretText', () => {
    it.each([
      ['an sk- key', `key ${API_KEY} here`, 'key [redacted] here'],
      ['a bearer token', `Authorization: Bearer ${BEARER}`, 'Authorization: Bearer [redacted]'],
      ['a random base64 token', 'Zx81+aQp/3rTmn9LkQ0vW2s7ePd4HcBf5GjYu6Ni', REDACTED],
      ['a 40-hex token', 'da39a3ee5e6b4b0d3255bfef95601890afd80709', REDACTED],
      ['an AWS access key id', 'AKIAIOSFODNN7EXAMPLE', REDACTED],
      ['URL credentials', 'redis://default:pw@127.0.0.1:6379/0', 'redis://[redacted]@127.0.0.1:6379/0'],
    ])('should redact %s', (_what, text, shown) => {
      expect(redactSecretText(text)).toBe(shown);
    });

    it.each([
      ['a model id', 'claude-sonnet-4-5-20250929'],
      ['an ARN', 'arn:aws:bedrock-agentcore:eu-west-1:123456789012:harness/test-harness'],
      ['a camelCase identifier', 'getSessionRecordByThreadId2'],
      ['a URL', 'https://api.example.com/v1/chat/completions'],
      ['a UUID', '550e8400-e29b-41d4-a716-446655440000'],
    ])('should keep %s', (_what, text) => {
      expect(redactSecretText(text)).toBe(text);
    });
  });
});
