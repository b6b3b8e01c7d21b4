import { isAgentRxError, type AgentRxError } from '../../../src/core/errors.js';
import { StoreRetentionConfig } from '../../../src/core/config/agentrx.config.js';
import { validateConfig } from '../../../src/core/config/index.js';

function thrown(fn: () => unknown): AgentRxError {
  try {
    fn();
  } catch (e) {
    if (isAgentRxError(e)) return e;
    throw e;
  }
  throw new Error('expected an error');
}

describe('StoreConfig', () => {
  describe('.retention', () => {
    describe('when absent', () => {
      it('should stay undefined (sessions are kept forever)', () => {
        const { config } = validateConfig({ store: { type: 'file', dir: '/tmp/s' } }, [], {});
        expect(config.store.retention).toBeUndefined();
      });
    });

    describe('when given, numbers as strings included', () => {
      it('should validate it into a StoreRetentionConfig', () => {
        const { config } = validateConfig(
          { store: { type: 'file', dir: '/tmp/s', retention: { maxAgeDays: '30', maxSessions: 500, intervalMs: '60000' } } },
          [],
          {},
        );
        expect(config.store.retention).toBeInstanceOf(StoreRetentionConfig);
        expect(config.store.retention).toEqual(expect.objectContaining({ maxAgeDays: 30, maxSessions: 500, intervalMs: 60_000 }));
      });
    });

    describe('when its values are out of range or unknown', () => {
      it('should list each issue under store.retention', () => {
        const error = thrown(() =>
          validateConfig({ store: { type: 'file', dir: '/tmp/s', retention: { maxAgeDays: 0, maxSessions: 'many', intervalMs: 10, maxAge: 3 } } }, [], {}),
        );
        expect(error.code).toBe('invalid_config');
        const lines = error.message.split('\n');
        expect(lines).toContainEqual(expect.stringMatching(/^- store\.retention\.maxAgeDays: .*got 0/));
        expect(lines).toContainEqual(expect.stringMatching(/^- store\.retention\.maxSessions: .*got "many"/));
        expect(lines).toContainEqual(expect.stringMatching(/^- store\.retention\.intervalMs: .*got 10/));
        expect(lines).toContainEqual(expect.stringMatching(/^- store\.retention\.maxAge: /));
      });
    });

    describe('when it is not an object', () => {
      it('should be an issue at store.retention', () => {
        const error = thrown(() => validateConfig({ store: { retention: 7 } }, [], {}));
        expect(error.message).toMatch(/- store\.retention: /);
      });
    });
  });
});
