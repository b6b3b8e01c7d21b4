import { IsString } from 'class-validator';
import { injectable } from '../../src/core/util/inversify.js';
import type { ToolHandler } from '../../src/core/plugin/tool-handler.js';

export class GateInput {
  @IsString()
  text!: string;
}

/**
 * A tool that holds its run until the test opens the gate (`GateToolHandler.open()`): tells the
 * test when it started (`started`), counts its executions (`runs`), and stops waiting when the
 * session aborts it. Call `reset()` before each test.
 */
@injectable()
export class GateToolHandler implements ToolHandler<GateInput> {
  static started: Promise<void>;
  static open: () => void;
  static runs = 0;
  private static markStarted: () => void;
  private static opened: Promise<void>;
  static reset(): void {
    GateToolHandler.runs = 0;
    GateToolHandler.started = new Promise((resolve) => (GateToolHandler.markStarted = resolve));
    GateToolHandler.opened = new Promise<void>((resolve) => (GateToolHandler.open = resolve));
  }
  readonly name = 'gate';
  readonly description = 'Waits for the test.';
  readonly inputType = GateInput;
  readonly timeoutMs = 30_000;
  async handle(input: GateInput, ctx: { signal: AbortSignal }): Promise<string> {
    GateToolHandler.runs++;
    GateToolHandler.markStarted();
    await Promise.race([
      GateToolHandler.opened,
      new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
    ]);
    return `passed ${input.text}`;
  }
}
