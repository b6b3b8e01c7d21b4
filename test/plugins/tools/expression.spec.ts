import { evaluateExpression, ExpressionError, MAX_EXPRESSION_LENGTH } from '../../../src/plugins/tools/expression.js';

/** Evaluates `source` and returns the ExpressionError it throws (fails the test if it doesn't). */
function errorOf(source: string): ExpressionError {
  try {
    evaluateExpression(source);
  } catch (e) {
    if (e instanceof ExpressionError) return e;
    throw new Error(`expected an ExpressionError for ${JSON.stringify(source)}, got ${String(e)}`);
  }
  throw new Error(`expected ${JSON.stringify(source)} to fail`);
}

describe('evaluateExpression', () => {
  describe('.evaluateExpression', () => {
    describe('when called with numbers', () => {
      it.each([
        ['42', 42],
        ['3.25', 3.25],
        ['.5', 0.5],
        ['5.', 5],
        ['1e3', 1000],
        ['2.5E-2', 0.025],
        ['1e+2', 100],
        ['  7\t\n', 7],
      ])('should read %j as %p', (source, expected) => {
        expect(evaluateExpression(source)).toBe(expected);
      });
    });

    describe('when called with operators of different precedence', () => {
      it.each([
        ['1 + 2 * 3', 7],
        ['(1 + 2) * 3', 9],
        ['10 - 4 - 3', 3],
        ['100 / 10 / 5', 2],
        ['2 * 3 % 4', 2],
        ['7 % 3 * 2', 2],
        ['1 + 2 ^ 3 * 2', 17],
        ['-7 % 3', -1],
        ['2 ^ 3 ^ 2', 512],
        ['(2 ^ 3) ^ 2', 64],
        ['2 ^ 0.5 ^ 2', 2 ** 0.25],
      ])('should evaluate %j as %p', (source, expected) => {
        expect(evaluateExpression(source)).toBeCloseTo(expected, 12);
      });
    });

    describe('when called with unary signs', () => {
      it.each([
        ['-3', -3],
        ['+3', 3],
        ['--3', 3],
        ['-+-3', 3],
        ['-2 ^ 2', -4],
        ['(-2) ^ 2', 4],
        ['2 ^ -1', 0.5],
        ['2 * -3', -6],
        ['-(1 + 2)', -3],
        ['4 - -2', 6],
      ])('should evaluate %j as %p', (source, expected) => {
        expect(evaluateExpression(source)).toBe(expected);
      });
    });

    describe('when called with functions and constants', () => {
      it.each([
        ['sqrt(16)', 4],
        ['abs(-2.5)', 2.5],
        ['round(2.5)', 3],
        ['round(-2.5)', -2],
        ['floor(-1.5)', -2],
        ['ceil(1.2)', 2],
        ['min(3, 1, 2)', 1],
        ['max(3, 1 + 9, 2)', 10],
        ['min(4)', 4],
        ['pi', Math.PI],
        ['e', Math.E],
        ['2 * pi', 2 * Math.PI],
        ['sqrt(max(9, 4) + 7) ^ 2', 16],
        ['e ^ 2', Math.E ** 2],
      ])('should evaluate %j as %p', (source, expected) => {
        expect(evaluateExpression(source)).toBeCloseTo(expected, 12);
      });
    });

    describe('when called with a syntax error', () => {
      it.each([
        ['(1 + 2))', "unexpected ')' at position 7"],
        ['', 'unexpected end of expression at position 0'],
        ['   ', 'unexpected end of expression at position 3'],
        ['1 +', 'unexpected end of expression at position 3'],
        ['(1 + 2', 'unexpected end of expression at position 6'],
        ['1 2', "unexpected '2' at position 2"],
        ['2(3)', "unexpected '(' at position 1"],
        ['* 3', "unexpected '*' at position 0"],
        ['1 + * 2', "unexpected '*' at position 4"],
        ['()', "unexpected ')' at position 1"],
        ['1.2.3', "malformed number '1.2.3' at position 0"],
        ['2 * 1..5', "malformed number '1..5' at position 4"],
        ['1 + .', "unexpected character '.' at position 4"],
        ['1 + 2 )', "unexpected ')' at position 6"],
        ['2e', "malformed number '2e' at position 0"],
        ['3 + 1e-', "malformed number '1e-' at position 4"],
        ['1e999', "number '1e999' is out of range at position 0"],
        ['2 × 3', "unexpected character '×' at position 2"],
        ['1 ; 2', "unexpected character ';' at position 2"],
        ['sqrt', "expected '(' after 'sqrt' at position 4"],
        ['sqrt 4', "expected '(' after 'sqrt' at position 5"],
        ['max(1,)', "unexpected ')' at position 6"],
        ['pi(2)', "unexpected '(' at position 2"],
        ['sqrt(1, 2)', 'sqrt expects 1 argument, got 2 at position 0'],
        ['1 + max()', "unexpected ')' at position 8"],
      ])('should reject %j with %j', (source, message) => {
        const error = errorOf(source);
        expect(error.message).toBe(message);
        expect(error.position).toBe(Number(/at position (\d+)$/.exec(message)![1]));
      });
    });

    describe('when called with names that are not in the function or constant tables', () => {
      it.each([
        ['process.exit()', "unknown identifier 'process' at position 0"],
        ['constructor', "unknown identifier 'constructor' at position 0"],
        ['1 + __proto__', "unknown identifier '__proto__' at position 4"],
        ['toString(1)', "unknown identifier 'toString' at position 0"],
        ['Math', "unknown identifier 'Math' at position 0"],
        ['PI', "unknown identifier 'PI' at position 0"],
        ['globalThis', "unknown identifier 'globalThis' at position 0"],
        ['hasOwnProperty(1)', "unknown identifier 'hasOwnProperty' at position 0"],
        ['x + 1', "unknown identifier 'x' at position 0"],
        ['1 + this.x', "unknown identifier 'this' at position 4"],
      ])('should reject %j as %j', (source, message) => {
        expect(errorOf(source).message).toBe(message);
      });

      it.each([['"1"'], ["'1'"], ['[1]'], ['{}'], ['a => 1'], ['`1`'], ['1 = 1']])('should reject %j as a parse error', (source) => {
        expect(errorOf(source)).toBeInstanceOf(ExpressionError);
      });
    });

    describe('when the arithmetic has no finite result', () => {
      it.each([
        ['1 / 0', 'division by zero at position 2'],
        ['5 % (2 - 2)', 'division by zero at position 2'],
        ['1 / -0', 'division by zero at position 2'],
        ['0 ^ -1', "result of '^' is not a finite number at position 2"],
        ['10 ^ 400', "result of '^' is not a finite number at position 3"],
        ['1e308 * 10', "result of '*' is not a finite number at position 6"],
        ['1e308 + 1e308', "result of '+' is not a finite number at position 6"],
        ['(-8) ^ 0.5', "result of '^' is not a finite number at position 5"],
        ['sqrt(-1)', 'sqrt(-1) is not a finite number at position 0'],
      ])('should reject %j with %j', (source, message) => {
        expect(errorOf(source).message).toBe(message);
      });
    });

    describe('when the expression is too long or too deeply nested', () => {
      it('should reject an expression longer than the limit', () => {
        expect(errorOf('1+'.repeat(MAX_EXPRESSION_LENGTH) + '1').message).toBe(
          `expression is longer than ${MAX_EXPRESSION_LENGTH} characters at position ${MAX_EXPRESSION_LENGTH}`,
        );
      });

      it('should accept an expression exactly at the limit', () => {
        const terms = MAX_EXPRESSION_LENGTH / 2 - 1;
        const source = '1+'.repeat(terms) + '11';
        expect(source).toHaveLength(MAX_EXPRESSION_LENGTH);
        expect(evaluateExpression(source)).toBe(terms + 11);
      });

      it.each([
        ['parentheses', '('.repeat(240) + '1' + ')'.repeat(240)],
        ['unary minus', '-'.repeat(490) + '1'],
        ['powers', '1' + '^1'.repeat(240)],
      ])('should reject deep %s with an ExpressionError rather than overflowing the stack', (_kind, source) => {
        expect(errorOf(source).reason).toMatch(/^expression nested deeper than \d+ levels$/);
      });

      it('should accept moderate nesting', () => {
        expect(evaluateExpression('('.repeat(100) + '2' + ')'.repeat(100))).toBe(2);
      });
    });

    describe('when it throws', () => {
      it('should throw an ExpressionError carrying reason and position', () => {
        const error = errorOf('1 + )');
        expect(error).toBeInstanceOf(Error);
        expect(error.name).toBe('ExpressionError');
        expect(error.reason).toBe("unexpected ')'");
        expect(error.position).toBe(4);
      });
    });
  });
});
