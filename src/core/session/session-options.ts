import { AgentRxError } from '../errors.js';
import type { Outcome, PriorMessage, RunSetting, RunSettings } from '../model.js';
import type { ClientAnswers, SessionOptions, TurnGuard, ConfirmTool } from '../plugin/session-options.js';
import type { ToolHandler } from '../plugin/tool-handler.js';
import { compileToolInput } from '../tools/tool-input.js';
import { priorMessageProblems } from './prior-conversation.js';
import { compileOutputSchema, type CompiledOutput } from './structured-output.js';

export type { ClientAnswers, ClientToolResult, ConfirmTool, OutputSchema, SessionOptions, ToolDecision, TurnGuard } from '../plugin/session-options.js';

/** Effective, validated options. */
export interface ResolvedSessionOptions {
  readonly prompt: string | undefined;
  readonly sessionId: string | undefined;
  readonly freshPrompt: string | undefined;
  readonly threadId: string | undefined;
  readonly history: readonly PriorMessage[] | undefined;
  readonly state: Readonly<Record<string, unknown>> | undefined;
  readonly timeoutMs: number;
  readonly maxTurns: number;
  readonly signal: AbortSignal | undefined;
  readonly turnGuard: TurnGuard | undefined;
  readonly confirmTool: ConfirmTool | undefined;
  readonly outcome: Outcome | undefined;
  readonly terminalTool: string | undefined;
  readonly maxReprompts: number;
  readonly retainEvents: boolean;
  readonly tools: readonly ToolHandler[];
  readonly clientAnswers: ClientAnswers | undefined;
  /** The compiled `outputSchema`, when given. */
  readonly output: CompiledOutput | undefined;
  /** The session's model settings for the provider (`OpenOptions.settings`), when any is set. */
  readonly settings: RunSettings | undefined;
  readonly toolTimeoutMs: number;
  readonly toolConcurrency: number;
  readonly reconnectAttempts: number;
  readonly reconnectBaseMs: number;
  readonly dedupeWindow: number;
}

/** Defaults the options fall back to (from validated config). */
export interface SessionDefaults {
  readonly timeoutMs: number;
  readonly maxTurns: number;
  readonly maxReprompts: number;
  readonly retainEvents: boolean;
  readonly toolTimeoutMs: number;
  readonly toolConcurrency: number;
  readonly reconnectAttempts: number;
  readonly reconnectBaseMs: number;
  readonly dedupeWindow: number;
}

/**
 * Validates session options before anything is opened; every problem is listed in one
 * `invalid_options` error. `toolNames` are the registered tools; `supportsOutcomes` the provider's flag.
 */
export function resolveSessionOptions(
  opts: SessionOptions,
  defaults: SessionDefaults,
  ctx: { toolNames: readonly string[]; supportsOutcomes: boolean; providerId: string; toolsPerCall?: boolean; runSettings?: readonly RunSetting[] },
): ResolvedSessionOptions {
  const problems: string[] = [];
  const int = (name: string, v: unknown, min: number, max: number): void => {
    if (v !== undefined && !(Number.isInteger(v) && (v as number) >= min && (v as number) <= max)) {
      problems.push(`${name}: must be an integer from ${min} to ${max}; got ${JSON.stringify(v)}`);
    }
  };
  if (opts.prompt !== undefined && typeof opts.prompt !== 'string') problems.push(`prompt: must be a string; got ${typeof opts.prompt}`);
  if (opts.freshPrompt !== undefined && typeof opts.freshPrompt !== 'string') problems.push(`freshPrompt: must be a string; got ${typeof opts.freshPrompt}`);
  if (opts.sessionId !== undefined && (typeof opts.sessionId !== 'string' || opts.sessionId.length === 0))
    problems.push('sessionId: must be a non-empty string');
  if (opts.threadId !== undefined && (typeof opts.threadId !== 'string' || opts.threadId.length === 0)) problems.push('threadId: must be a non-empty string');
  if (opts.history !== undefined) {
    problems.push(...priorMessageProblems(opts.history));
  }
  if (opts.state !== undefined && (typeof opts.state !== 'object' || opts.state === null || Array.isArray(opts.state)))
    problems.push(`state: must be a JSON object; got ${Array.isArray(opts.state) ? 'an array' : opts.state === null ? 'null' : typeof opts.state}`);
  int('timeoutMs', opts.timeoutMs, 1, 2 ** 31 - 1);
  int('maxTurns', opts.maxTurns, 1, 10_000);
  int('maxReprompts', opts.maxReprompts, 0, 100);
  if (opts.turnGuard !== undefined && typeof opts.turnGuard !== 'function') problems.push('turnGuard: must be a function (usage, turns) => boolean | string');
  if (opts.confirmTool !== undefined && typeof opts.confirmTool !== 'function')
    problems.push('confirmTool: must be a function (toolUse) => boolean | { allow, denyMessage? } (or a promise of one)');
  if (opts.requireTerminalTool) {
    if (!opts.terminalTool) problems.push('terminalTool: required when requireTerminalTool is true (name the tool that ends the task)');
    else if (!ctx.toolNames.includes(opts.terminalTool))
      problems.push(`terminalTool: '${opts.terminalTool}' is not a registered tool; registered: ${ctx.toolNames.join(', ') || '(none)'}`);
  }
  if (opts.outcome !== undefined) {
    if (typeof opts.outcome?.description !== 'string' || typeof opts.outcome?.rubric !== 'string')
      problems.push('outcome: needs string `description` and `rubric`');
    int('outcome.maxIterations', opts.outcome?.maxIterations, 1, 1000);
  }
  problems.push(...sessionToolProblems(opts.tools, ctx));
  problems.push(...clientAnswersProblems(opts.clientAnswers, opts.sessionId));
  problems.push(...settingProblems(opts));
  let output: CompiledOutput | undefined;
  if (opts.outputSchema !== undefined) {
    try {
      output = compileOutputSchema(opts.outputSchema);
    } catch (e) {
      problems.push(e instanceof Error ? e.message : String(e));
    }
  }
  if (problems.length > 0) {
    throw new AgentRxError('invalid_options', `invalid session options:\n${problems.map((p) => `- ${p}`).join('\n')}`, { problems });
  }
  if (opts.outcome && !ctx.supportsOutcomes) {
    throw new AgentRxError('outcome_unsupported', `provider '${ctx.providerId}' does not support outcomes; remove \`outcome\` or use claude-managed-agents`);
  }
  const settings = runSettingsOf(opts, output, ctx);
  return {
    prompt: opts.prompt,
    sessionId: opts.sessionId,
    freshPrompt: opts.freshPrompt,
    threadId: opts.threadId,
    history: opts.history,
    state: opts.state,
    timeoutMs: opts.timeoutMs ?? defaults.timeoutMs,
    maxTurns: opts.maxTurns ?? defaults.maxTurns,
    signal: opts.signal,
    turnGuard: opts.turnGuard,
    confirmTool: opts.confirmTool,
    outcome: opts.outcome,
    terminalTool: opts.requireTerminalTool ? opts.terminalTool : undefined,
    maxReprompts: opts.maxReprompts ?? defaults.maxReprompts,
    retainEvents: opts.retainEvents ?? defaults.retainEvents,
    tools: opts.tools ?? [],
    clientAnswers: opts.clientAnswers,
    output,
    settings,
    toolTimeoutMs: defaults.toolTimeoutMs,
    toolConcurrency: defaults.toolConcurrency,
    reconnectAttempts: defaults.reconnectAttempts,
    reconnectBaseMs: defaults.reconnectBaseMs,
    dedupeWindow: defaults.dedupeWindow,
  };
}

/** Problems of the session's own tools: a list of handlers with names of their own, on a provider that takes tools per call. */
function sessionToolProblems(tools: SessionOptions['tools'], ctx: { toolNames: readonly string[]; providerId: string; toolsPerCall?: boolean }): string[] {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) return ['tools: must be an array of tool handlers'];
  if (tools.length === 0) return [];
  const problems: string[] = [];
  if (ctx.toolsPerCall !== true)
    problems.push(
      `tools: provider '${ctx.providerId}' takes its tools when the agent is provisioned, not per session; session tools need a provider that sends them with every model call (local)`,
    );
  const seen = new Set<string>();
  tools.forEach((t: ToolHandler, i) => {
    if (typeof t?.name !== 'string' || t.name.length === 0 || typeof t.handle !== 'function')
      return void problems.push(`tools[${i}]: must be a tool handler with a name and a handle function`);
    if (ctx.toolNames.includes(t.name)) problems.push(`tools[${i}]: '${t.name}' is the name of an agent tool; give the session's tool another name`);
    else if (seen.has(t.name)) problems.push(`tools[${i}]: '${t.name}' is given twice`);
    seen.add(t.name);
    try {
      compileToolInput(t);
    } catch (e) {
      problems.push(`tools[${i}]: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
  return problems;
}

/** Problems of the client's answers: given with `sessionId`, as lists of well-formed answers. */
function clientAnswersProblems(answers: SessionOptions['clientAnswers'], sessionId: string | undefined): string[] {
  if (answers === undefined) return [];
  if (typeof answers !== 'object' || answers === null) return ['clientAnswers: must be an object { toolResults?, confirmations? }'];
  const problems: string[] = [];
  if (sessionId === undefined) problems.push('clientAnswers: needs sessionId (they answer what a stored session waits on)');
  const list = <T>(name: string, v: readonly T[] | undefined, ok: (item: T) => boolean, shape: string): void => {
    if (v === undefined) return;
    if (!Array.isArray(v)) return void problems.push(`clientAnswers.${name}: must be an array`);
    v.forEach((item, i) => {
      if (!ok(item)) problems.push(`clientAnswers.${name}[${i}]: must be ${shape}`);
    });
  };
  const text = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
  list('toolResults', answers.toolResults, (r) => text(r?.toolUseId) && typeof r.content === 'string', '{ toolUseId, content, isError? } with strings');
  list('confirmations', answers.confirmations, (c) => text(c?.toolUseId) && typeof c.allow === 'boolean', '{ toolUseId, allow, denyMessage? }');
  return problems;
}

/** The per-session model settings a session may set, in the order they are named. */
export const RUN_SETTINGS: readonly RunSetting[] = ['model', 'instructions', 'temperature', 'topP', 'maxOutputTokens'];

/** Problems of the per-session model settings' values. */
function settingProblems(opts: SessionOptions): string[] {
  const problems: string[] = [];
  const num = (name: string, v: unknown, ok: (n: number) => boolean, range: string): void => {
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && ok(v)))
      problems.push(`${name}: must be a number ${range}; got ${JSON.stringify(v)}`);
  };
  if (opts.model !== undefined && (typeof opts.model !== 'string' || opts.model.trim() === ''))
    problems.push('model: must be a non-empty string (a model id of the host)');
  if (opts.instructions !== undefined && typeof opts.instructions !== 'string')
    problems.push(`instructions: must be a string; got ${typeof opts.instructions}`);
  num('temperature', opts.temperature, (n) => n >= 0 && n <= 2, 'from 0 to 2');
  num('topP', opts.topP, (n) => n > 0 && n <= 1, 'above 0 and at most 1');
  num('maxOutputTokens', opts.maxOutputTokens, (n) => Number.isInteger(n) && n >= 1 && n <= 2 ** 31 - 1, 'that is a whole number of at least 1');
  return problems;
}

/**
 * The settings the provider is given; `unsupported` naming the provider when the session sets one
 * it does not take per session (its host fixes it when the agent is provisioned).
 */
function runSettingsOf(
  opts: SessionOptions,
  output: CompiledOutput | undefined,
  ctx: { providerId: string; runSettings?: readonly RunSetting[] },
): RunSettings | undefined {
  const set = RUN_SETTINGS.filter((k) => opts[k] !== undefined);
  const refused = set.filter((k) => !(ctx.runSettings ?? []).includes(k));
  if (refused.length > 0) {
    throw new AgentRxError(
      'unsupported',
      `provider '${ctx.providerId}' does not take ${refused.join(', ')} per session: its host fixes ${refused.length > 1 ? 'them' : 'it'} when the agent is provisioned. ` +
        `Set ${refused.length > 1 ? 'them' : 'it'} on the agent (config agent.model, agent.systemPrompt) and provision again, or use a provider that takes ${refused.length > 1 ? 'them' : 'it'} per session` +
        (ctx.runSettings && ctx.runSettings.length > 0 ? ` (this one takes: ${ctx.runSettings.join(', ')})` : ''),
      { provider: ctx.providerId, settings: refused },
    );
  }
  if (set.length === 0 && output === undefined) return undefined;
  return {
    ...Object.fromEntries(set.map((k) => [k, opts[k]])),
    ...(output ? { outputSchema: output.schema } : {}),
  } as RunSettings;
}
