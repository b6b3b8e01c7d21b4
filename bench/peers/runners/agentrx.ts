/**
 * agentrx: one AgentRx instance per process (Local provider, streaming), no terminal consumer,
 * the JSON-lines consumer writing to a null stream, `rx.run()` per session.
 */
import 'reflect-metadata';
import { Writable } from 'node:stream';
import { IsInt, IsString } from 'class-validator';
import { AgentRx } from '../../../src/agentrx.js';
import { JsonlConsumer } from '../../../src/consumers/jsonl/jsonl.consumer.js';
import { injectable } from '../../../src/core/di/inversify.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { SYSTEM_PROMPT, USER_PROMPT } from '../shared.js';
import { add, echo, type Setup } from './types.js';

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

/** A Writable that drops everything. */
export function nullStream(): Writable {
  return new Writable({
    write(_chunk, _enc, cb) {
      cb();
    },
  });
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

/** agentrx with a store config (default: the library's memory store); `idempotent`: the tools say so. */
export async function setupWith(baseUrl: string, store?: { type: 'file'; dir: string }, opts: { idempotent?: boolean } = {}): Promise<() => Promise<{ text: string; toolCalls: number }>> {
  const rx = await AgentRx.create({
    config: {
      provider: 'local',
      retainEvents: false,
      ...(store ? { store } : {}),
      consumers: { terminal: false, queueLimit: 100_000 },
      agent: { systemPrompt: SYSTEM_PROMPT },
      providers: { local: { baseUrl, model: 'scripted' } },
    },
    tools: opts.idempotent ? [IdempotentEchoTool, IdempotentAddTool] : [EchoTool, AddTool],
    consumers: [new JsonlConsumer(nullStream())],
  });
  return async () => {
    const r = await rx.run({ prompt: USER_PROMPT });
    return { text: r.text, toolCalls: ((r.transcript ?? []) as { role: string }[]).filter((m) => m.role === 'tool').length };
  };
}

export const setup: Setup = (baseUrl) => setupWith(baseUrl);
