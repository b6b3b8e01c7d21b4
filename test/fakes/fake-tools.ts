import { IsInt, IsString, Max, Min } from 'class-validator';
import { injectable } from '../../src/core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../src/core/plugin/tool-handler.js';

export class EchoInput {
  @IsString()
  text!: string;
}

/** Records every call; returns the text upper-cased. */
@injectable()
export class EchoToolHandler implements ToolHandler<EchoInput> {
  static calls: { input: EchoInput; ctx: ToolContext }[] = [];
  readonly name = 'echo';
  readonly description = 'Echoes text back in upper case.';
  readonly inputType = EchoInput;
  handle(input: EchoInput, ctx: ToolContext): string {
    EchoToolHandler.calls.push({ input, ctx });
    return input.text.toUpperCase();
  }
}

export class AddInput {
  @IsInt()
  @Min(0)
  @Max(1000)
  a!: number;

  @IsInt()
  b!: number;
}

@injectable()
export class AddToolHandler implements ToolHandler<AddInput> {
  static calls = 0;
  readonly name = 'add';
  readonly description = 'Adds two integers.';
  readonly inputType = AddInput;
  handle(input: AddInput): { sum: number } {
    AddToolHandler.calls++;
    return { sum: input.a + input.b };
  }
}

export class NoInput {}

@injectable()
export class ThrowingToolHandler implements ToolHandler<NoInput> {
  readonly name = 'throws';
  readonly description = 'Always throws.';
  readonly inputType = NoInput;
  handle(): never {
    throw new Error('boom');
  }
}

@injectable()
export class RejectingToolHandler implements ToolHandler<NoInput> {
  readonly name = 'rejects';
  readonly description = 'Always rejects.';
  readonly inputType = NoInput;
  async handle(): Promise<never> {
    throw new Error('async boom');
  }
}

/** Never settles; records whether its signal fired. */
@injectable()
export class HangingToolHandler implements ToolHandler<NoInput> {
  static aborted = 0;
  static started = 0;
  readonly name = 'hangs';
  readonly description = 'Never returns.';
  readonly inputType = NoInput;
  readonly timeoutMs = 50;
  handle(_input: NoInput, ctx: ToolContext): Promise<never> {
    HangingToolHandler.started++;
    ctx.signal.addEventListener('abort', () => HangingToolHandler.aborted++);
    return new Promise<never>(() => undefined);
  }
}

@injectable()
export class MalformedToolHandler implements ToolHandler<NoInput> {
  readonly name = 'malformed';
  readonly description = 'Returns undefined.';
  readonly inputType = NoInput;
  // Deliberately breaks the contract (a tool must return a ToolOutput): the dispatcher's check is under test.
  handle(): never {
    return undefined as never;
  }
}

export function resetFakeTools(): void {
  EchoToolHandler.calls = [];
  AddToolHandler.calls = 0;
  HangingToolHandler.aborted = 0;
  HangingToolHandler.started = 0;
}
