import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { ToolContext } from '../../../src/core/plugin/tool-handler.js';
import { CalculateInput, CalculateToolHandler, formatNumber } from '../../../src/plugins/tools/calculate.tool.js';
import { ExpressionError } from '../../../src/plugins/tools/expression.js';

function contextWith(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { toolUseId: 'toolu_1', sessionId: 'sess_1', idempotencyKey: 'sess_1:toolu_1', signal, deadline: Date.now() + 60_000 };
}

/** Names of the constraints class-validator reports for `input`, keyed by property. */
function violations(input: unknown): Record<string, string[]> {
  const errors = validateSync(plainToInstance(CalculateInput, input as object));
  return Object.fromEntries(errors.map((e) => [e.property, Object.keys(e.constraints ?? {})]));
}

describe('CalculateToolHandler', () => {
  describe('.handle', () => {
    describe('when called with a valid expression', () => {
      it.each([
        ['2 * (3 + 4)', '2 * (3 + 4) = 14'],
        ['  1 + 1  ', '1 + 1 = 2'],
        ['0.1 + 0.2', '0.1 + 0.2 = 0.3'],
        ['1 / 3', '1 / 3 = 0.333333333333333'],
        ['-0 * 5', '-0 * 5 = 0'],
        ['2 ^ 3 ^ 2', '2 ^ 3 ^ 2 = 512'],
        ['sqrt(2) ^ 2', 'sqrt(2) ^ 2 = 2'],
        ['10 ^ 21', '10 ^ 21 = 1e+21'],
      ])('should return %j as %j', (expression, expected) => {
        expect(new CalculateToolHandler().handle({ expression }, contextWith())).toBe(expected);
      });
    });

    describe('when called with an invalid expression', () => {
      it('should throw an ExpressionError naming the position', () => {
        const act = (): string => new CalculateToolHandler().handle({ expression: '(1 + 2))' }, contextWith());
        expect(act).toThrow(ExpressionError);
        expect(act).toThrow("unexpected ')' at position 7");
      });
    });

    describe('when called with a division by zero', () => {
      it('should throw an ExpressionError', () => {
        expect(() => new CalculateToolHandler().handle({ expression: '4 / (2 - 2)' }, contextWith())).toThrow('division by zero at position 2');
      });
    });

    describe('when called, and the signal is already aborted', () => {
      it('should throw the abort reason instead of evaluating', () => {
        const controller = new AbortController();
        const reason = new Error('cancelled by test');
        controller.abort(reason);
        expect(() => new CalculateToolHandler().handle({ expression: '1 + 1' }, contextWith(controller.signal))).toThrow(reason);
      });
    });
  });

  describe('.name', () => {
    it('should be calculate and use CalculateInput', () => {
      const handler = new CalculateToolHandler();
      expect(handler.name).toBe('calculate');
      expect(handler.inputType).toBe(CalculateInput);
      expect(handler.idempotent).toBe(true);
    });
  });
});

describe('CalculateInput', () => {
  describe('when validated', () => {
    it.each([
      ['a missing expression', {}, { expression: ['isLength', 'isString'] }],
      ['an empty expression', { expression: '' }, { expression: ['isLength'] }],
      ['a number instead of a string', { expression: 42 }, { expression: ['isLength', 'isString'] }],
      ['an expression over 500 characters', { expression: '1'.repeat(501) }, { expression: ['isLength'] }],
    ])('should reject %s', (_case, input, expected) => {
      const actual = violations(input);
      expect(Object.keys(actual)).toEqual(Object.keys(expected));
      expect([...actual.expression!].sort()).toEqual(expected.expression);
    });

    it.each([['1 + 1'], ['1'.repeat(500)]])('should accept %j', (expression) => {
      expect(violations({ expression })).toEqual({});
    });
  });
});

describe('formatNumber', () => {
  describe('when called', () => {
    it.each([
      [42, '42'],
      [-0, '0'],
      [0.1 + 0.2, '0.3'],
      [1e-7, '1e-7'],
      [123456789012345680000, '123456789012346000000'],
      [-2.5, '-2.5'],
    ])('should format %p as %j', (value, expected) => {
      expect(formatNumber(value)).toBe(expected);
    });
  });
});
