import { IsString, Length } from '../../core/util/class-validator.js';
import { JSONSchema } from '../../core/util/class-validator.js';
import { injectable } from '../../core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../core/plugin/tool-handler.js';
import { evaluateExpression, MAX_EXPRESSION_LENGTH } from './expression.js';

/** Input of `calculate`. */
export class CalculateInput {
  /** An arithmetic expression, 1–500 characters, e.g. `2 * (3 + sqrt(16))`. */
  @JSONSchema({ description: 'Arithmetic expression, e.g. "2 * (3 + sqrt(16)) ^ 2".' })
  @IsString()
  @Length(1, MAX_EXPRESSION_LENGTH)
  expression!: string;
}

/**
 * `calculate`: evaluates an arithmetic expression with the parser in `expression.ts` (no
 * `eval`). Returns plain text `"<expression> = <result>"`, the expression trimmed and the result
 * rounded to 15 significant digits (so `0.1 + 0.2 = 0.3`). A bad expression throws an
 * `ExpressionError` whose message names the position, which the core reports as an `is_error`
 * result. Pure, so idempotent.
 */
@injectable()
export class CalculateToolHandler implements ToolHandler<CalculateInput> {
  readonly name = 'calculate';
  readonly description =
    'Evaluates an arithmetic expression and returns "<expression> = <result>". ' +
    'Supports numbers (1.5, 2e-3), + - * / % ^ (power, right-associative), unary minus, parentheses, ' +
    'the functions sqrt, abs, round, floor, ceil, min, max and the constants pi and e.';
  readonly inputType = CalculateInput;
  readonly idempotent = true;

  handle(input: CalculateInput, ctx: ToolContext): string {
    ctx.signal.throwIfAborted();
    const result = evaluateExpression(input.expression);
    return `${input.expression.trim()} = ${formatNumber(result)}`;
  }
}

/** Rounds away binary floating-point noise (15 significant digits) and prints -0 as 0. */
export function formatNumber(value: number): string {
  const rounded = Number(value.toPrecision(15));
  return String(rounded === 0 ? 0 : rounded);
}
