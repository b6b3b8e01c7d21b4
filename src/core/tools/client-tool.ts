import { AgentRxError } from '../errors.js';
import type { RawEvent, ToolConfirmation } from '../model.js';
import type { ClientAnswers, ClientToolResult } from '../plugin/session-options.js';
import type { JsonSchema, ToolContext, ToolHandler, ToolOutcome } from '../plugin/tool-handler.js';
import { awaitsClient, type ClientToolHandler } from './client-answers.js';
import { isStandardSchema } from './tool-input.js';

/**
 * A tool its client runs (an AG-UI page's frontend tool), as the client declares it: data only,
 * so that it travels to where the session runs (a worker of the pool).
 */
export interface ClientToolDeclaration {
  readonly name: string;
  readonly description?: string;
  /** The input's JSON Schema (AG-UI `Tool.parameters`). */
  readonly parameters?: JsonSchema;
  /** How long (ms) a call waits for the client's answer before it is an error result. */
  readonly timeoutMs?: number;
}

/**
 * The calls of one session's client-answered tools that wait for the client's answer. Its
 * handlers (`handlers`) run nothing: a call registers here, then waits until `answer` hands it
 * the client's result (or the session aborts it). Used by the AG-UI endpoint for a session of
 * its process and by a worker for one it runs; synchronous, no I/O.
 */
export class ClientCalls {
  /** Calls waiting for the client, by tool use id, in the order the model made them. */
  private readonly pending = new Map<string, (outcome: ToolOutcome) => void>();

  /** Ids of the calls waiting for the client, in the order the model made them. */
  get waiting(): readonly string[] {
    return [...this.pending.keys()];
  }

  /** True when tool use `id` waits here. */
  has(id: string): boolean {
    return this.pending.has(id);
  }

  /** Client-answered handlers of `tools` whose calls wait here (`source`: what the handlers say they come from). */
  handlers(tools: readonly ClientToolDeclaration[], source: string, defaultTimeoutMs?: number): ClientToolHandler[] {
    return tools.map((tool) => {
      const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs;
      return {
        name: tool.name,
        description: tool.description || `A tool the client runs (${tool.name}).`,
        inputSchema: tool.parameters ?? { type: 'object' },
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        source,
        awaitsClient: true,
        isWaiting: (id: string) => this.has(id),
        giveAnswer: (id: string, outcome: ToolOutcome) => this.answer(id, outcome),
        handle: (_input: Record<string, unknown>, ctx: ToolContext) => this.wait(ctx),
      };
    });
  }

  /** Gives waiting call `id` its outcome: false when no such call waits. */
  answer(id: string, outcome: ToolOutcome): boolean {
    const resolve = this.pending.get(id);
    resolve?.(outcome);
    return resolve !== undefined;
  }

  private wait(ctx: ToolContext): Promise<ToolOutcome> {
    return new Promise<ToolOutcome>((resolve, reject) => {
      const id = ctx.toolUseId;
      const done = (): void => void this.pending.delete(id);
      if (ctx.signal.aborted) return reject(ctx.signal.reason);
      ctx.signal.addEventListener('abort', () => (done(), reject(ctx.signal.reason)), { once: true });
      this.pending.set(id, (outcome) => (done(), resolve(outcome)));
    });
  }
}

/** A client-answered tool's declaration, from its handler (what travels to a worker in its place). */
export function clientToolDeclaration(handler: ClientToolHandler): ClientToolDeclaration {
  const schema = handler.inputSchema;
  return {
    name: handler.name,
    ...(handler.description !== undefined ? { description: handler.description } : {}),
    ...(schema !== undefined && !isStandardSchema(schema) ? { parameters: schema } : {}),
    ...(handler.timeoutMs !== undefined ? { timeoutMs: handler.timeoutMs } : {}),
  };
}

/**
 * Hands the client's tool results to the calls of `tools` (a session's own tools) that wait for
 * them. Checked first: a result that no call waits for (or an id given twice) throws
 * `invalid_options` naming the calls that do wait, and nothing is handed.
 */
export function handClientResults(tools: readonly ToolHandler[], results: readonly ClientToolResult[]): void {
  const answering = tools.filter(awaitsClient).filter((h) => h.giveAnswer !== undefined && h.isWaiting !== undefined);
  const holder = (id: string): ClientToolHandler | undefined => answering.find((h) => h.isWaiting!(id));
  const ids = results.map((r) => r.toolUseId);
  const problems = ids.filter((id, i) => holder(id) === undefined || ids.indexOf(id) !== i);
  if (problems.length > 0) {
    throw new AgentRxError(
      'invalid_options',
      `answerClient: no client-answered tool call waits for a result with id ${problems.map((id) => `'${id}'`).join(', ')}`,
      { toolUseIds: problems },
    );
  }
  for (const r of results) holder(r.toolUseId)!.giveAnswer!(r.toolUseId, { content: r.content, ...(r.isError === true ? { isError: true } : {}) });
}

/** The `user.tool_confirmation` event of a client's decision (what `sendEvent` takes). */
export function confirmationEvent(c: ToolConfirmation): RawEvent {
  return {
    type: 'user.tool_confirmation',
    tool_use_id: c.toolUseId,
    result: c.allow ? 'allow' : 'deny',
    ...(c.denyMessage !== undefined ? { deny_message: c.denyMessage } : {}),
  };
}

/** The tool results of `answers` handed to `tools`, then its decisions posted with `post` (a session's `answerClient`). */
export async function answerClientWith(tools: readonly ToolHandler[], answers: ClientAnswers, post: (event: RawEvent) => Promise<void>): Promise<void> {
  handClientResults(tools, answers.toolResults ?? []);
  for (const c of answers.confirmations ?? []) await post(confirmationEvent(c));
}
