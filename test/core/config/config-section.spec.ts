import { plainToInstance } from 'class-transformer';
import { CoerceBoolean, CoerceNumber, sectionPath } from '../../../src/core/config/index.js';

class Coerced {
  @CoerceNumber()
  n: unknown;

  @CoerceBoolean()
  b: unknown;
}

describe('config-section', () => {
  describe('.sectionPath', () => {
    describe('when the section has the default scope', () => {
      it('should live under providers', () => {
        expect(sectionPath({ key: 'claude-managed-agents' })).toBe('providers.claude-managed-agents');
        expect(sectionPath({ key: 'local', scope: 'providers' })).toBe('providers.local');
      });
    });

    describe('when the section has the root scope', () => {
      it('should live at the top level', () => {
        expect(sectionPath({ key: 'agui', scope: 'root' })).toBe('agui');
      });
    });
  });

  describe('.CoerceNumber', () => {
    const n = (value: unknown): unknown => plainToInstance(Coerced, { n: value }).n;

    describe('when the value is a numeric string', () => {
      it('should become that number', () => {
        expect(n('42')).toBe(42);
        expect(n(' -7 ')).toBe(-7);
        expect(n('1e3')).toBe(1000);
        expect(n('0.5')).toBe(0.5);
      });
    });

    describe('when the value is not a numeric string', () => {
      it('should be left as it was, never NaN', () => {
        expect(n('42x')).toBe('42x');
        expect(n('')).toBe('');
        expect(n('0x10')).toBe('0x10');
        expect(n(true)).toBe(true);
        expect(n(12)).toBe(12);
      });
    });
  });

  describe('.CoerceBoolean', () => {
    const b = (value: unknown): unknown => plainToInstance(Coerced, { b: value }).b;

    describe('when the value is "true" or "false"', () => {
      it('should become the boolean', () => {
        expect(b('true')).toBe(true);
        expect(b('false')).toBe(false);
        expect(b(' FALSE ')).toBe(false);
      });
    });

    describe('when the value is any other string or a non-string', () => {
      it('should be left as it was', () => {
        expect(b('yes')).toBe('yes');
        expect(b('0')).toBe('0');
        expect(b(1)).toBe(1);
      });
    });
  });
});
