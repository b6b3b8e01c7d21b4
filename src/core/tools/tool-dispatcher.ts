import { AgentRxError } from '../errors.js';
import type { Artifacts } from '../artifacts/artifacts.js';
import type { ToolResult, ToolUse } from '../model.js';
import { isToolOutcome, type ToolHandler } from '../plugin/tool-handler.js';
import { awaitsClient } from './client-answers.js';
import type { LedgerEntry, ToolLedger } from './tool-ledger.js';
import type { ToolLookup } from './tool-registry.js';
import { compileToolInput } from './tool-input.js';
import { abortReason, messageOf } from '../util/async.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../util/json-depth.js';

/** Per-batch settings and hooks of a dispatch. */
export interface DispatchOptions {
  readonly sessionId: string | undefined;
  /** Session-wide signal: cancel/timeout aborts every running tool. */
  readonly signal: AbortSignal;
  readonly toolTimeoutMs: number;
  readonly concurrency: number;
  readonly ledger: ToolLedger;
  /** Awaited after every ledger change that must survive a crash (before run, after result). */
  persist(): Promise<void>;
  onStarted?(toolUse: ToolUse): void;
  onResult?(toolUse: ToolUse, result: ToolResult, replayed: boolean, durationMs: number): void;
  /** The session's shared state, handed to each tool as `ctx.state` (undefined: none). */
  state?(): Record<string, unknown> | undefined;
  /** The session's artifacts, handed to each tool as `ctx.artifacts` (undefined: none). */
  artifacts?(): Artifacts | undefined;
  /** The client's result of a use the ledger holds as `awaiting_client` (a resume brought it), once. */
  clientResult?(toolUseId: string): ToolResult | undefined;
  /**
   * Called when a use starts waiting on its client (a frontend tool); returns what is called once
   * the wait is over (the session holds its run timeout meanwhile: the wait has its own).
   */
  onClientWait?(toolUse: ToolUse): () => void;
}

/**
 * Runs custom tool uses locally, at most once per tool-use id: bounded concurrency, results in
 * call order, every failure (unknown tool, undecodable, too deeply nested or invalid input,
 * throw, rejection, timeout, malformed return) an `is_error` result. Throws only `cancelled` when
 * the session signal fires. Tools are looked up when each call runs, so a tool a `ToolSource`
 * added since the session started is found, and one it removed is an unknown tool.
 *
 * A use of a tool its client answers ({@link ClientToolHandler}) is recorded `awaiting_client`
 * with a deadline (the handler's `timeoutMs`) before the client is asked; the session ending
 * meanwhile leaves it so. A resumed session answers such a use with the client's result
 * (`clientResult`), or waits for it again through the client's handler until the same deadline;
 * a wait past its deadline gets an `is_error` result; with neither an answer nor the client's
 * tool, the dispatch fails with `unresolved_requires_action` (the wait stays for a later resume).
 */
export class ToolDispatcher {
  private readonly lookup: ToolLookup;

  /** @param tools a fixed list, or the live registry (looked up at every call). */
  constructor(tools: readonly ToolHandler[] | ToolLookup) {
    if (Array.isArray(tools)) {
      const byName = new Map((tools as readonly ToolHandler[]).map((h) => [h.name, h]));
      this.lookup = {
        get: (name) => byName.get(name),
        get ids() {
          return [...byName.keys()];
        },
      };
    } else {
      this.lookup = tools as ToolLookup;
    }
  }

  /** Names of the available tools (now). */
  get names(): string[] {
    return this.lookup.ids;
  }

  /** The tool named `name` now, if any (e.g. to read its `requireApproval`). */
  get(name: string): ToolHandler | undefined {
    return this.lookup.get(name);
  }

  /** True when `name` is a tool declared idempotent (running it twice is harmless). */
  isIdempotent(name: string): boolean {
    return this.lookup.get(name)?.idempotent === true;
  }

  /**
   * True when `name` is a tool whose calls must be allowed by the caller first (`requireApproval`):
   * the session's ToolAnswerer asks before it dispatches such a use (the dispatcher runs what it
   * is given).
   */
  requiresApproval(name: string): boolean {
    return this.lookup.get(name)?.requireApproval === true;
  }

  async dispatch(toolUses: readonly ToolUse[], opts: DispatchOptions): Promise<ToolResult[]> {
    const results = new Array<ToolResult>(toolUses.length);
    // The same id twice in one batch runs once; later copies reuse the first result.
    const firstIndex = new Map<string, number>();
    const work: number[] = [];
    toolUses.forEach((u, i) => {
      if (!firstIndex.has(u.id)) {
        firstIndex.set(u.id, i);
        work.push(i);
      }
    });
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < work.length) {
        const i = work[next++]!;
        results[i] = await this.runOne(toolUses[i]!, opts);
      }
    };
    const width = Math.max(1, Math.min(opts.concurrency, work.length));
    await Promise.all(Array.from({ length: width }, worker));
    if (opts.signal.aborted) throw abortReason(opts.signal);
    return toolUses.map((u, i) => results[i] ?? { ...results[firstIndex.get(u.id)!]!, toolUseId: u.id });
  }

  private async runOne(use: ToolUse, opts: DispatchOptions): Promise<ToolResult> {
    const started = Date.now();
    const entry = opts.ledger.get(use.id);
    const handler = this.lookup.get(use.name);
    if (entry?.result) {
      opts.onResult?.(use, entry.result, true, 0);
      return entry.result;
    }
    if (entry?.state === 'awaiting_client' && entry.awaits !== 'confirmation') return this.resumeWait(use, entry, handler, opts);
    if (entry?.state === 'executing' && !handler?.idempotent) {
      // Started before a restart with no recorded result: running it again could repeat a side effect.
      const result = errorResult(
        use,
        `outcome unknown: tool '${use.name}' (${use.id}) started before a restart and recorded no result; it was not re-run because it is not declared idempotent`,
      );
      return this.settle(use, result, opts, 0);
    }
    if (opts.signal.aborted) throw abortReason(opts.signal);
    if (awaitsClient(handler)) {
      // The wait is durable before the client is asked: a restart finds it, and its deadline.
      const deadline = started + (handler.timeoutMs ?? opts.toolTimeoutMs);
      opts.ledger.awaitClient(use.id, use.name, 'tool', deadline);
      await opts.persist();
      return this.waitForClient(use, handler, opts, deadline);
    }
    // A use the client allowed to run (it waited for that decision) starts now.
    if (!entry || entry.state === 'awaiting_client') opts.ledger.begin(use.id, use.name);
    await opts.persist();
    const result = await this.execute(use, handler, opts);
    return this.settle(use, result, opts, Date.now() - started);
  }

  /** Records `result` (durably), reports it, and returns it. */
  private async settle(use: ToolUse, result: ToolResult, opts: DispatchOptions, durationMs: number): Promise<ToolResult> {
    opts.ledger.record(use.id, use.name, result);
    await opts.persist();
    opts.onResult?.(use, result, false, durationMs);
    return result;
  }

  /**
   * A use that waited on its client when the session last ran: the client's answer (brought by
   * the resume) settles it; past its deadline it times out; else the client's tool waits for it
   * again, for what is left of the wait. Nobody here to answer: fail, leaving the wait as it is.
   */
  private async resumeWait(use: ToolUse, entry: LedgerEntry, handler: ToolHandler | undefined, opts: DispatchOptions): Promise<ToolResult> {
    const answer = opts.clientResult?.(use.id);
    if (answer) return this.settle(use, { ...answer, toolUseId: use.id }, opts, 0);
    const deadline = entry.deadline ?? 0;
    if (deadline <= Date.now())
      return this.settle(use, errorResult(use, `the client did not answer tool '${use.name}' (${use.id}) before its wait timed out`), opts, 0);
    if (opts.signal.aborted) throw abortReason(opts.signal);
    if (awaitsClient(handler)) return this.waitForClient(use, handler, opts, deadline);
    throw new AgentRxError(
      'unresolved_requires_action',
      `tool use ${use.id} ('${use.name}') waits for its client's answer until ${new Date(deadline).toISOString()}; resume the session with the client's result (clientAnswers), or with the client's tool '${use.name}' among the session's tools to wait for it`,
      { toolUseId: use.id, deadline },
    );
  }

  /**
   * Asks the client (its tool's handler) and waits until `deadline` (epoch ms) for its answer. A
   * session that ends meanwhile records nothing: the use stays `awaiting_client` for a resume.
   */
  private async waitForClient(use: ToolUse, handler: ToolHandler, opts: DispatchOptions, deadline: number): Promise<ToolResult> {
    const started = Date.now();
    const release = opts.onClientWait?.(use);
    let result: ToolResult;
    try {
      result = await this.execute(use, handler, opts, Math.max(0, deadline - started));
    } finally {
      release?.();
    }
    if (opts.signal.aborted) return result;
    return this.settle(use, result, opts, Date.now() - started);
  }

  private async execute(use: ToolUse, handler: ToolHandler | undefined, opts: DispatchOptions, timeoutMs?: number): Promise<ToolResult> {
    if (!handler) {
      return errorResult(use, `unknown tool '${use.name}'; available tools: ${this.names.join(', ') || '(none)'}`);
    }
    if (use.inputError !== undefined) {
      return errorResult(use, `invalid arguments for tool '${use.name}': ${use.inputError}`);
    }
    // Transformation and validation walk the input recursively: a host's input nested thousands
    // of levels deep would overflow the stack there (and wherever it is serialized).
    if (jsonDepthExceeds(use.input, MAX_JSON_DEPTH)) {
      return errorResult(use, `invalid arguments for tool '${use.name}': the input is nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    let input: object;
    try {
      // A validator (a Standard Schema's `validate` is the user's code) is bounded like the handler.
      const limit = timeoutMs ?? handler.timeoutMs ?? opts.toolTimeoutMs;
      const checked = await bounded(compileToolInput(handler).check(use.input ?? {}), limit, opts.signal);
      if (!checked.ok) return errorResult(use, `invalid input for tool '${use.name}': ${checked.problems.join('; ')}`);
      input = checked.value;
    } catch (e) {
      if (e instanceof ToolAborted) return errorResult(use, `tool '${use.name}' was cancelled`);
      if (e instanceof ToolTimeout) return errorResult(use, `validating the input of tool '${use.name}' did not finish within ${e.ms} ms; it did not run`);
      return errorResult(use, `invalid input for tool '${use.name}': ${messageOf(e)}`);
    }
    // Validation is async: the session may have been cancelled meanwhile.
    if (opts.signal.aborted) return errorResult(use, `tool '${use.name}' was cancelled`);
    const limitMs = timeoutMs ?? handler.timeoutMs ?? opts.toolTimeoutMs;
    const cancel = new ToolCancel();
    let stop: ((e: Error) => void) | undefined;
    const onSessionAbort = (): void => {
      cancel.abort(opts.signal.reason);
      stop?.(new ToolAborted());
    };
    opts.signal.addEventListener('abort', onSessionAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const deadline = Date.now() + limitMs;
    let running: Promise<unknown>;
    try {
      running = Promise.resolve(
        handler.handle(input, {
          toolUseId: use.id,
          sessionId: opts.sessionId,
          idempotencyKey: `${opts.sessionId ?? 'local'}:${use.id}`,
          get signal() {
            return cancel.signal;
          },
          deadline,
          ...stateOf(opts),
          ...artifactsOf(opts),
        }),
      );
    } catch (e) {
      running = Promise.reject(e);
    }
    running.catch(() => undefined);
    opts.onStarted?.(use);
    try {
      const outcome = await Promise.race([
        running,
        new Promise<never>((_, reject) => {
          stop = reject;
          timer = setTimeout(() => reject(new ToolTimeout(limitMs)), limitMs);
          if (opts.signal.aborted) reject(new ToolAborted());
        }),
      ]);
      return toResult(use, outcome);
    } catch (e) {
      if (e instanceof ToolTimeout) {
        cancel.abort(new AgentRxError('timeout', e.message));
        return errorResult(
          use,
          awaitsClient(handler)
            ? `the client did not answer tool '${use.name}' (${use.id}) within ${limitMs} ms`
            : `tool '${use.name}' timed out after ${limitMs} ms`,
        );
      }
      if (e instanceof ToolAborted || opts.signal.aborted) return errorResult(use, `tool '${use.name}' was cancelled`);
      return errorResult(use, `tool '${use.name}' failed: ${messageOf(e)}`);
    } finally {
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onSessionAbort);
    }
  }
}

/**
 * A running tool's cancellation: its `AbortSignal` is made only when the handler reads
 * `ctx.signal` (most handlers never do, and a controller with its signal costs more than the rest
 * of a small tool's dispatch); one made after the abort is already aborted, with its reason.
 */
class ToolCancel {
  private ctrl: AbortController | undefined;
  private reason: { readonly value: unknown } | undefined;

  get signal(): AbortSignal {
    if (!this.ctrl) {
      this.ctrl = new AbortController();
      if (this.reason) this.ctrl.abort(this.reason.value);
    }
    return this.ctrl.signal;
  }

  /** Aborts the signal (now, or as it is made); the first reason stays. */
  abort(reason: unknown): void {
    if (this.reason) return;
    this.reason = { value: reason };
    this.ctrl?.abort(reason);
  }
}

class ToolTimeout extends Error {
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
  }
}
class ToolAborted extends Error {}

/** `work`, or a ToolTimeout after `ms`, or a ToolAborted when `signal` aborts first (work that never settles is left behind). */
async function bounded<T>(work: Promise<T>, ms: number, signal: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  work.catch(() => undefined);
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ToolTimeout(ms)), ms);
        onAbort = () => reject(new ToolAborted());
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

function errorResult(use: ToolUse, content: string): ToolResult {
  return { toolUseId: use.id, content, isError: true };
}

function toResult(use: ToolUse, out: unknown): ToolResult {
  if (typeof out === 'string') return { toolUseId: use.id, content: out, isError: false };
  if (isToolOutcome(out)) return { toolUseId: use.id, content: out.content, isError: out.isError === true };
  if (typeof out === 'number' || typeof out === 'boolean' || (typeof out === 'object' && out !== null)) {
    try {
      const content = JSON.stringify(out);
      // `json`: consumers get the value back (`onToolResult`), not only the text the model reads.
      if (typeof content === 'string') return { toolUseId: use.id, content, isError: false, json: true };
    } catch (e) {
      return errorResult(use, `tool '${use.name}' returned a value that is not JSON-serializable: ${messageOf(e)}`);
    }
  }
  return errorResult(
    use,
    `tool '${use.name}' returned a malformed result (${out === null ? 'null' : typeof out}); expected a string, a JSON value or { content, isError }`,
  );
}

/** `{ state }` when the session has a shared state, else nothing (the field stays absent). */
function artifactsOf(opts: DispatchOptions): { artifacts?: Artifacts } {
  const artifacts = opts.artifacts?.();
  return artifacts !== undefined ? { artifacts } : {};
}

function stateOf(opts: DispatchOptions): { state?: Record<string, unknown> } {
  const state = opts.state?.();
  return state !== undefined ? { state } : {};
}
