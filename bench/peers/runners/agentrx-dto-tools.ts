/**
 * The conversation's two tools as agentrx DTO tool classes (class-validator decorators on the
 * input classes), as the `agentrx` runners declare them. Its own module: a runner with other tools
 * does not load class-validator's index, which a user's `import … from 'class-validator'` does.
 */
import 'reflect-metadata';
import { IsInt, IsString } from 'class-validator';
import { injectable, type ToolHandler } from 'agentrx';
import { add, echo } from './types.js';

export class EchoInput {
  @IsString()
  text!: string;
}
/** The `echo` tool of the conversation (also the memory bench's tool). */
@injectable()
export class EchoTool implements ToolHandler<EchoInput> {
  readonly name = 'echo';
  readonly description = 'Echoes text back in upper case.';
  readonly inputType = EchoInput;
  handle(input: EchoInput): string {
    return echo(input.text);
  }
}
class AddInput {
  @IsInt()
  a!: number;
  @IsInt()
  b!: number;
}
@injectable()
class AddTool implements ToolHandler<AddInput> {
  readonly name = 'add';
  readonly description = 'Adds two integers.';
  readonly inputType = AddInput;
  handle(input: AddInput): { sum: number } {
    return add(input.a, input.b);
  }
}

/** The same tools declared idempotent (both are pure): a store need not sync their start. */
@injectable()
class IdempotentEchoTool extends EchoTool {
  readonly idempotent = true;
}
@injectable()
class IdempotentAddTool extends AddTool {
  readonly idempotent = true;
}

/** The two tools, declared idempotent or not. */
export function dtoTools(idempotent: boolean): [typeof EchoTool, typeof AddTool] {
  return idempotent ? [IdempotentEchoTool, IdempotentAddTool] : [EchoTool, AddTool];
}
