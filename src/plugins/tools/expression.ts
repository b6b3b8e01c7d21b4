/**
 * A small arithmetic expression evaluator: a tokenizer plus a recursive-descent parser that
 * evaluates as it parses. It never uses `eval`/`Function` and resolves names only from the fixed
 * tables below (`Map`s, so `constructor`, `__proto__` and friends are unknown identifiers).
 *
 * Grammar (lowest precedence first):
 * ```
 * expression := term (('+' | '-') term)*
 * term       := unary (('*' | '/' | '%') unary)*
 * unary      := ('+' | '-') unary | power
 * power      := primary ('^' unary)?            right-associative: 2^3^2 = 2^9
 * primary    := number | constant | function '(' expression (',' expression)* ')' | '(' expression ')'
 * number     := digits ['.' digits] [('e' | 'E') ['+' | '-'] digits]   (or '.' digits …)
 * ```
 * Unary minus binds looser than `^`, as in mathematics: `-2^2` is -4 and `2^-1` is 0.5.
 * `%` is the JavaScript remainder (it takes the sign of the dividend).
 */

/** Longest accepted expression, in characters. */
export const MAX_EXPRESSION_LENGTH = 500;

/** Deepest accepted nesting of parentheses, unary signs and powers; keeps the recursion bounded. */
const MAX_DEPTH = 200;

/**
 * Why an expression could not be evaluated: a syntax error, an unknown name, a wrong argument
 * count or an arithmetic error (division by zero, a non-finite result). `position` is the
 * 0-based character offset the problem was found at; the message ends with "at position N".
 */
export class ExpressionError extends Error {
  constructor(
    /** The problem without its location, e.g. "unexpected ')'". */
    readonly reason: string,
    /** 0-based offset into the expression. */
    readonly position: number,
  ) {
    super(`${reason} at position ${position}`);
    this.name = 'ExpressionError';
  }
}

const CONSTANTS: ReadonlyMap<string, number> = new Map([
  ['pi', Math.PI],
  ['e', Math.E],
]);

interface MathFunction {
  readonly minArgs: number;
  readonly maxArgs: number;
  readonly apply: (args: readonly number[]) => number;
}

const oneArg = (f: (x: number) => number): MathFunction => ({ minArgs: 1, maxArgs: 1, apply: ([x]) => f(x!) });

const FUNCTIONS: ReadonlyMap<string, MathFunction> = new Map([
  ['sqrt', oneArg(Math.sqrt)],
  ['abs', oneArg(Math.abs)],
  ['round', oneArg(Math.round)],
  ['floor', oneArg(Math.floor)],
  ['ceil', oneArg(Math.ceil)],
  ['min', { minArgs: 1, maxArgs: Infinity, apply: (args) => Math.min(...args) }],
  ['max', { minArgs: 1, maxArgs: Infinity, apply: (args) => Math.max(...args) }],
]);

type TokenKind = 'number' | 'name' | 'op' | 'end';

interface Token {
  readonly kind: TokenKind;
  /** The source text of the token ('' for `end`). */
  readonly text: string;
  readonly position: number;
  /** The value of a `number` token. */
  readonly value?: number;
}

const OPERATORS = new Set(['+', '-', '*', '/', '%', '^', '(', ')', ',']);

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

function isNameStart(c: string | undefined): boolean {
  return c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
}

function isNamePart(c: string | undefined): boolean {
  return isNameStart(c) || isDigit(c);
}

/**
 * Scans one token at a time, on demand, so that errors surface in source order: in
 * `process.exit()` the unknown name at 0 is reported, not the '.' at 7.
 */
function* tokenize(source: string): Generator<Token, Token> {
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (isDigit(c) || (c === '.' && isDigit(source[i + 1]))) {
      while (isDigit(source[i])) i++;
      if (source[i] === '.') {
        i++;
        while (isDigit(source[i])) i++;
      }
      if (source[i] === 'e' || source[i] === 'E') {
        let j = i + 1;
        if (source[j] === '+' || source[j] === '-') j++;
        // "2e" or "2e+" is a typo, not 2 times the constant e.
        if (!isDigit(source[j])) throw new ExpressionError(`malformed number '${source.slice(start, j)}'`, start);
        i = j;
        while (isDigit(source[i])) i++;
      }
      if (source[i] === '.') {
        while (source[i] === '.' || isDigit(source[i])) i++;
        throw new ExpressionError(`malformed number '${source.slice(start, i)}'`, start);
      }
      const text = source.slice(start, i);
      const value = Number(text);
      if (!Number.isFinite(value)) throw new ExpressionError(`number '${text}' is out of range`, start);
      yield { kind: 'number', text, position: start, value };
      continue;
    }
    if (isNameStart(c)) {
      while (isNamePart(source[i])) i++;
      yield { kind: 'name', text: source.slice(start, i), position: start };
      continue;
    }
    if (OPERATORS.has(c)) {
      i++;
      yield { kind: 'op', text: c, position: start };
      continue;
    }
    const printable = JSON.stringify(String.fromCodePoint(source.codePointAt(i)!)).slice(1, -1);
    throw new ExpressionError(`unexpected character '${printable}'`, start);
  }
  return { kind: 'end', text: '', position: source.length };
}

class Parser {
  /** The next token, scanned only when first looked at; `undefined` once consumed. */
  private lookahead: Token | undefined;
  private depth = 0;

  constructor(private readonly tokens: Generator<Token, Token>) {}

  parse(): number {
    const value = this.expression();
    const next = this.peek();
    if (next.kind !== 'end') throw this.unexpected(next);
    return value;
  }

  private expression(): number {
    let value = this.term();
    for (let t = this.peek(); t.kind === 'op' && (t.text === '+' || t.text === '-'); t = this.peek()) {
      this.next();
      const right = this.term();
      value = finite(t.text === '+' ? value + right : value - right, t);
    }
    return value;
  }

  private term(): number {
    let value = this.unary();
    for (let t = this.peek(); t.kind === 'op' && (t.text === '*' || t.text === '/' || t.text === '%'); t = this.peek()) {
      this.next();
      const right = this.unary();
      if ((t.text === '/' || t.text === '%') && right === 0) throw new ExpressionError('division by zero', t.position);
      value = finite(t.text === '*' ? value * right : t.text === '/' ? value / right : value % right, t);
    }
    return value;
  }

  private unary(): number {
    const t = this.peek();
    if (t.kind === 'op' && (t.text === '-' || t.text === '+')) {
      this.next();
      const operand = this.nested(t, () => this.unary());
      return t.text === '-' ? -operand : operand;
    }
    return this.power();
  }

  private power(): number {
    const base = this.primary();
    const t = this.peek();
    if (t.kind !== 'op' || t.text !== '^') return base;
    this.next();
    // The exponent is a `unary`, which recurses back into `power`: that makes `^` right-associative.
    const exponent = this.nested(t, () => this.unary());
    return finite(base ** exponent, t);
  }

  private primary(): number {
    const t = this.next();
    if (t.kind === 'number') return t.value!;
    if (t.kind === 'name') return this.name(t);
    if (t.kind === 'op' && t.text === '(') {
      const value = this.nested(t, () => this.expression());
      this.expect(')');
      return value;
    }
    throw this.unexpected(t);
  }

  private name(t: Token): number {
    const constant = CONSTANTS.get(t.text);
    if (constant !== undefined) return constant;
    const fn = FUNCTIONS.get(t.text);
    if (fn === undefined) throw new ExpressionError(`unknown identifier '${t.text}'`, t.position);
    this.expect('(', `expected '(' after '${t.text}'`);
    const args = [this.nested(t, () => this.expression())];
    while (this.peek().kind === 'op' && this.peek().text === ',') {
      this.next();
      args.push(this.nested(t, () => this.expression()));
    }
    this.expect(')');
    if (args.length < fn.minArgs || args.length > fn.maxArgs) {
      const expected = fn.maxArgs === Infinity ? `at least ${fn.minArgs}` : `${fn.minArgs}`;
      throw new ExpressionError(`${t.text} expects ${expected} argument${fn.minArgs === 1 ? '' : 's'}, got ${args.length}`, t.position);
    }
    const value = fn.apply(args);
    if (!Number.isFinite(value)) throw new ExpressionError(`${t.text}(${args.join(', ')}) is not a finite number`, t.position);
    return value;
  }

  /** Runs one level of recursion, refusing to go deeper than MAX_DEPTH. */
  private nested(at: Token, parse: () => number): number {
    if (++this.depth > MAX_DEPTH) throw new ExpressionError(`expression nested deeper than ${MAX_DEPTH} levels`, at.position);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private expect(op: string, reason?: string): void {
    const t = this.peek();
    if (t.kind !== 'op' || t.text !== op) {
      if (reason !== undefined) throw new ExpressionError(reason, t.position);
      throw this.unexpected(t);
    }
    this.next();
  }

  private unexpected(t: Token): ExpressionError {
    return new ExpressionError(t.kind === 'end' ? 'unexpected end of expression' : `unexpected '${t.text}'`, t.position);
  }

  private peek(): Token {
    this.lookahead ??= this.tokens.next().value;
    return this.lookahead;
  }

  /** Consumes and returns the next token (`end` is never consumed). */
  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'end') this.lookahead = undefined;
    return t;
  }
}

function finite(value: number, op: Token): number {
  if (!Number.isFinite(value)) throw new ExpressionError(`result of '${op.text}' is not a finite number`, op.position);
  return value;
}

/**
 * Evaluates an arithmetic expression such as `2 * (3 + sqrt(16)) ^ 2 % 7`.
 *
 * Supports decimal numbers with an optional exponent, `+ - * / % ^`, unary `+`/`-`, parentheses,
 * `sqrt abs round floor ceil min max` and the constants `pi` and `e` (names are case-sensitive).
 *
 * @param source The expression, at most {@link MAX_EXPRESSION_LENGTH} characters.
 * @returns The value, always a finite number.
 * @throws ExpressionError on a syntax error, an unknown name, a wrong argument count, division by
 * zero or any intermediate result that is not finite. Never throws anything else.
 */
export function evaluateExpression(source: string): number {
  if (source.length > MAX_EXPRESSION_LENGTH) {
    throw new ExpressionError(`expression is longer than ${MAX_EXPRESSION_LENGTH} characters`, MAX_EXPRESSION_LENGTH);
  }
  return new Parser(tokenize(source)).parse();
}
