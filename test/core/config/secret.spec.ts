import { inspect } from 'node:util';
import { plainToInstance } from 'class-transformer';
import { IsOptional, validateSync } from 'class-validator';
import { IsSecret, REDACTED, redactedView, redactUrlCredentials, Secret, SecretField } from '../../../src/core/config/index.js';

const VALUE = 'sk-unit-7Q4zXw9-never-print-me';

class WithSecret {
  @SecretField()
  @IsSecret()
  apiKey!: Secret;

  @IsOptional()
  @SecretField()
  @IsSecret()
  token?: Secret;
}

describe(Secret.name, () => {
  let secret: Secret;

  beforeEach(() => {
    secret = new Secret(VALUE);
  });

  describe('.reveal', () => {
    describe('when called', () => {
      it('should return the wrapped value', () => {
        expect(secret.reveal()).toBe(VALUE);
      });
    });
  });

  describe('.toString', () => {
    describe('when the secret is turned into a string', () => {
      it('should give [redacted] for String(), concatenation and template literals', () => {
        expect(String(secret)).toBe(REDACTED);
        expect('' + secret).toBe(REDACTED);
        expect(`${secret}`).toBe(REDACTED);
      });
    });
  });

  describe('.toJSON', () => {
    describe('when the secret is inside a serialized object', () => {
      it('should serialize as "[redacted]"', () => {
        expect(JSON.stringify({ nested: { secret } })).toBe('{"nested":{"secret":"[redacted]"}}');
      });
    });
  });

  describe('[nodejs.util.inspect.custom]', () => {
    describe('when the secret is inspected, alone or nested', () => {
      it('should show [redacted] and never the value', () => {
        expect(inspect(secret)).toBe(REDACTED);
        const shown = inspect({ a: [{ secret }] }, { depth: Infinity, showHidden: true });
        expect(shown).toContain(REDACTED);
        expect(shown).not.toContain(VALUE);
      });
    });
  });

  describe('own properties', () => {
    describe('when the secret is enumerated or spread', () => {
      it('should expose no field holding the value', () => {
        expect(Object.keys(secret)).toEqual([]);
        expect(JSON.stringify({ ...secret })).not.toContain(VALUE);
      });
    });
  });
});

describe('SecretField + IsSecret', () => {
  const transform = (plain: object): WithSecret => plainToInstance(WithSecret, plain);
  const failed = (o: WithSecret): Record<string, string[]> => Object.fromEntries(validateSync(o).map((e) => [e.property, Object.keys(e.constraints ?? {})]));

  describe('when the plain value is a non-empty string', () => {
    it('should become a valid Secret holding the string', () => {
      const o = transform({ apiKey: VALUE });
      expect(o.apiKey).toBeInstanceOf(Secret);
      expect(o.apiKey.reveal()).toBe(VALUE);
      expect(failed(o)).toEqual({});
    });
  });

  describe('when the plain value already is a Secret', () => {
    it('should keep that very Secret', () => {
      const given = new Secret(VALUE);
      const o = transform({ apiKey: given });
      expect(o.apiKey).toBe(given);
      expect(o.apiKey.reveal()).toBe(VALUE);
    });
  });

  describe('when the plain value is empty, missing or not a string', () => {
    it('should be reported by isSecret', () => {
      expect(failed(transform({ apiKey: '' }))).toEqual({ apiKey: ['isSecret'] });
      expect(failed(transform({}))).toEqual({ apiKey: ['isSecret'] });
      expect(failed(transform({ apiKey: 42 }))).toEqual({ apiKey: ['isSecret'] });
    });

    it('should leave a non-string as it was', () => {
      expect(transform({ apiKey: 42 }).apiKey).toBe(42);
    });
  });

  describe('when an optional secret field is absent', () => {
    it('should pass', () => {
      expect(failed(transform({ apiKey: VALUE }))).toEqual({});
      expect(transform({ apiKey: VALUE }).token).toBeUndefined();
    });
  });

  describe('when validation fails', () => {
    it('should not put the value in the message', () => {
      const errors = validateSync(plainToInstance(WithSecret, { apiKey: VALUE, token: '' }));
      expect(errors.map((e) => e.property)).toEqual(['token']);
      expect(JSON.stringify(errors.map((e) => e.constraints))).not.toContain(VALUE);
    });
  });
});

describe('redactUrlCredentials', () => {
  describe('when a string holds URLs with user info', () => {
    it('should replace the user info of each, well-formed or not, and keep host and path', () => {
      expect(redactUrlCredentials('https://user:pa55@api.example.com/v1')).toBe('https://[redacted]@api.example.com/v1');
      expect(redactUrlCredentials('redis://:pa55@127.0.0.1:6379/0')).toBe('redis://[redacted]@127.0.0.1:6379/0');
      expect(redactUrlCredentials('http://u:pa 5/s#s@127.0.0.1:8080')).toBe('http://[redacted]@127.0.0.1:8080');
      expect(redactUrlCredentials('admin:pa55@127.0.0.1:6379')).toBe('[redacted]@127.0.0.1:6379');
    });
  });

  describe('when a string holds no credentials', () => {
    it('should return it unchanged', () => {
      for (const s of ['http://127.0.0.1:11434/v1', 'not a url', 'someone@example.com', '']) expect(redactUrlCredentials(s)).toBe(s);
    });
  });

  describe('through redactedView', () => {
    it('should redact URLs under any key, nested too', () => {
      expect(JSON.stringify(redactedView({ a: { mirror: ['https://u:pa55@h/x'] } }))).toBe('{"a":{"mirror":["https://[redacted]@h/x"]}}');
    });
  });
});
