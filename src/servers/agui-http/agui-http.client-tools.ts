import { AgentRxError } from '../../core/errors.js';
import type { ToolUse } from '../../core/model.js';
import type { ClientToolResult } from '../../core/plugin/session-options.js';
import type { JsonSchema, ToolHandler } from '../../core/plugin/tool-handler.js';
import { ClientCalls } from '../../core/tools/client-tool.js';
import type { AgUiClientTool, AgUiToolResult } from './agui-http.input.js';

/** Server-answered tool call ids remembered per thread. */
const MAX_ANSWERED = 256;

/**
 * The frontend tools of one thread (AG-UI human in the loop): the tools the client declared in
 * `RunAgentInput.tools`, as client-answered tool handlers of the thread's session (`ClientCalls`).
 * When the model calls one, its handler does not run anything: the call waits until the client's
 * next run brings the `tool` message with its result (`prepare`). A session that runs elsewhere
 * (the worker pool) got the tools as declarations: its calls are known here from its
 * `agentrx.tool_started` events (`started`), and their results go back through
 * `LiveSession.answerClient`. The thread ends the client's run once every running tool waits on
 * the client (`waiting`), and continues the session's request when the answers come. A call still
 * waiting when the session ends is aborted with it.
 */
export class ClientTools {
  /** Calls of this process's session waiting for the client (their handlers run here). */
  private readonly calls = new ClientCalls();
  /** Calls of a session running elsewhere waiting for the client, in the order they started. */
  private readonly remote = new Set<string>();
  private readonly handlers: readonly ToolHandler[];
  /** Tool calls the session answered itself (their results come back in the client's messages), most recent last. */
  private readonly answered = new Set<string>();
  /** Frontend tool calls the client answered: the client has their results already. */
  private readonly fromClient = new Set<string>();

  /**
   * @param tools The client's tools, as declared on the run that opened the thread's session.
   * @param timeoutMs How long a call may wait for the client's answer (then it is an error result).
   */
  constructor(tools: readonly AgUiClientTool[], timeoutMs: number) {
    const declared = tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters as JsonSchema }));
    this.handlers = this.calls.handlers(declared, 'ag-ui client', timeoutMs);
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
    return [...this.calls.waiting, ...this.remote];
  }

  /**
   * The session started tool use `use`: true when it is a call of a frontend tool whose handler
   * does not run here (a session elsewhere waits for the client's answer to it).
   */
  started(use: ToolUse): boolean {
    if (!this.has(use.name) || this.calls.has(use.id)) return false;
    this.remote.add(use.id);
    return true;
  }

  /** True when tool use `id` is a frontend call waiting for the client (of this process's session or of one elsewhere). */
  waitsFor(id: string): boolean {
    return this.waits(id);
  }

  private waits(id: string): boolean {
    return this.calls.has(id) || this.remote.has(id);
  }

  /**
   * Checks the client's results against the waiting calls, and returns what gives them their
   * results (those of a session elsewhere through `toSession`). Throws `invalid_options` (nothing
   * answered) when a result names a call that does not wait, or when a waiting call gets no result.
   */
  prepare(all: readonly AgUiToolResult[], toSession: (results: readonly ClientToolResult[]) => void): () => void {
    // The results of the server's own tools of the batch (TOOL_CALL_RESULT) come back too.
    const results = all.filter((r) => this.waits(r.toolCallId) || !this.answered.has(r.toolCallId));
    const unknown = results.filter((r) => !this.waits(r.toolCallId)).map((r) => r.toolCallId);
    if (unknown.length > 0) {
      throw new AgentRxError(
        'invalid_options',
        `tool message(s) for ${unknown.map((id) => `'${id}'`).join(', ')}: no frontend tool call of this thread waits for that result${this.waiting.length > 0 ? ` (waiting: ${this.waiting.join(', ')})` : ''}`,
      );
    }
    const answered = new Set(results.map((r) => r.toolCallId));
    const missing = this.waiting.filter((id) => !answered.has(id));
    if (missing.length > 0)
      throw new AgentRxError('invalid_options', `the run must answer every waiting frontend tool call; missing a tool message for ${missing.join(', ')}`);
    return () => {
      const elsewhere: ClientToolResult[] = [];
      for (const r of results) {
        this.fromClient.add(r.toolCallId);
        if (this.remote.delete(r.toolCallId)) elsewhere.push({ toolUseId: r.toolCallId, content: r.content });
        else this.calls.answer(r.toolCallId, { content: r.content });
      }
      if (elsewhere.length > 0) toSession(elsewhere);
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
    // A call elsewhere that got its result without the client (its wait timed out) waits no more.
    this.remote.delete(id);
    this.answered.add(id);
    // Only the batch before the client's answer matters: keep the most recent ones.
    if (this.answered.size > MAX_ANSWERED) this.answered.delete(this.answered.values().next().value!);
  }
}
