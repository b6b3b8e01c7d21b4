import { AgentRxError } from '../../core/errors.js';
import type { JsonSchema, ToolContext, ToolHandler, ToolOutcome } from '../../core/plugin/tool-handler.js';
import type { ClientToolHandler } from '../../core/tools/client-answers.js';
import type { AgUiClientTool, AgUiToolResult } from './agui-http.input.js';

/** Server-answered tool call ids remembered per thread. */
const MAX_ANSWERED = 256;

/** A frontend tool call the model made: it waits for the client's `tool` message. */
interface PendingCall {
  readonly toolCallId: string;
  readonly resolve: (result: ToolOutcome) => void;
}

/**
 * The frontend tools of one thread (AG-UI human in the loop): the tools the client declared in
 * `RunAgentInput.tools`, as tool handlers of the thread's session. When the model calls one, its
 * handler does not run anything: the call waits until the client's next run brings the `tool`
 * message with its result (`prepare`). The thread ends the client's run once every running tool
 * waits on the client (`waiting`), and continues the session's request when the answers come.
 * A call still waiting when the session ends is aborted with it.
 */
export class ClientTools {
  /** Calls waiting for the client, by tool call id, in the order the model made them. */
  private readonly pending = new Map<string, PendingCall>();
  private readonly handlers: readonly ToolHandler[];
  /** Tool calls the session answered itself (their results come back in the client's messages), most recent last. */
  private readonly answered = new Set<string>();
  /** Frontend tool calls the client answered: the client has their results already. */
  private readonly fromClient = new Set<string>();
  /** Called when a frontend tool call starts waiting for the client. */
  onWaiting: () => void = () => undefined;

  /**
   * @param tools The client's tools, as declared on the run that opened the thread's session.
   * @param timeoutMs How long a call may wait for the client's answer (then it is an error result).
   */
  constructor(tools: readonly AgUiClientTool[], timeoutMs: number) {
    this.handlers = tools.map((t) => this.handlerOf(t, timeoutMs));
  }

  /** The session's tools (`SessionOptions.tools`). */
  get tools(): readonly ToolHandler[] {
    return this.handlers;
  }

  /** True when `name` is a frontend tool of this thread. */
  has(name: string): boolean {
    return this.handlers.some((h) => h.name === name);
  }

  /** Ids of the calls waiting for the client, in the order the model made them. */
  get waiting(): readonly string[] {
    return [...this.pending.keys()];
  }

  /**
   * Checks the client's results against the waiting calls, and returns what gives them their
   * results. Throws `invalid_options` (nothing answered) when a result names a call that does not
   * wait, or when a waiting call gets no result.
   */
  prepare(all: readonly AgUiToolResult[]): () => void {
    // The results of the server's own tools of the batch (TOOL_CALL_RESULT) come back too.
    const results = all.filter((r) => this.pending.has(r.toolCallId) || !this.answered.has(r.toolCallId));
    const unknown = results.filter((r) => !this.pending.has(r.toolCallId)).map((r) => r.toolCallId);
    if (unknown.length > 0) {
      throw new AgentRxError(
        'invalid_options',
        `tool message(s) for ${unknown.map((id) => `'${id}'`).join(', ')}: no frontend tool call of this thread waits for that result${this.pending.size > 0 ? ` (waiting: ${this.waiting.join(', ')})` : ''}`,
      );
    }
    const answered = new Set(results.map((r) => r.toolCallId));
    const missing = this.waiting.filter((id) => !answered.has(id));
    if (missing.length > 0)
      throw new AgentRxError('invalid_options', `the run must answer every waiting frontend tool call; missing a tool message for ${missing.join(', ')}`);
    return () => {
      for (const r of results) {
        this.fromClient.add(r.toolCallId);
        this.pending.get(r.toolCallId)?.resolve({ content: r.content });
      }
    };
  }

  /**
   * The client answered calls `ids` through the thread's stored session (a resume): it has their
   * results already (see `clientAnswered`).
   */
  answeredByClient(ids: readonly string[]): void {
    for (const id of ids) this.fromClient.add(id);
  }

  /**
   * True once for a frontend call the client answered, when its result comes by (the client has
   * the `tool` message already: a TOOL_CALL_RESULT would make it a second one).
   */
  clientAnswered(id: string): boolean {
    return this.fromClient.delete(id);
  }

  /** The session answered tool call `id` itself (a server tool): its result in a later run's messages is not the client's. */
  settled(id: string): void {
    this.answered.add(id);
    // Only the batch before the client's answer matters: keep the most recent ones.
    if (this.answered.size > MAX_ANSWERED) this.answered.delete(this.answered.values().next().value!);
  }

  private handlerOf(tool: AgUiClientTool, timeoutMs: number): ClientToolHandler {
    const handle = (_input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> =>
      new Promise<ToolOutcome>((resolve, reject) => {
        const id = ctx.toolUseId;
        const done = (): void => void this.pending.delete(id);
        if (ctx.signal.aborted) return reject(ctx.signal.reason);
        ctx.signal.addEventListener('abort', () => (done(), reject(ctx.signal.reason)), { once: true });
        this.pending.set(id, { toolCallId: id, resolve: (r) => (done(), resolve(r)) });
        this.onWaiting();
      });
    return {
      name: tool.name,
      description: tool.description || `A tool the client runs (${tool.name}).`,
      inputSchema: tool.parameters as JsonSchema,
      timeoutMs,
      source: 'ag-ui client',
      awaitsClient: true,
      handle,
    };
  }
}
