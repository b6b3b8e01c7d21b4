import { AgentRxError } from '../core/errors.js';
import { RUN_SETTINGS, resolveSessionOptions, type SessionOptions } from '../core/session/session-options.js';
import { ClientCalls, type ClientToolDeclaration } from '../core/tools/client-tool.js';
import { isStandardSchema } from '../core/tools/tool-input.js';

/**
 * Options of `SessionQueue.submit`: the options of `rx.start` that can travel to a worker in
 * another process as JSON. Functions and signals cannot: `confirmTool` (answer confirmations with
 * `handle.sendEvent`), `turnGuard` (use `maxTurns`/`timeoutMs`), `signal` (use `handle.cancel()`)
 * and `tools` (handlers); a client's own tools travel as their declarations (`clientTools`).
 */
export type SubmitOptions = Omit<SessionOptions, 'signal' | 'turnGuard' | 'confirmTool' | 'tools'> & {
  /**
   * Tools the session's client answers (an AG-UI client's frontend tools), as declared: the worker
   * offers them as session tools whose calls wait for the client (`handle.answerClient`). Needs a
   * provider that takes its tools with every model call (Local).
   */
  readonly clientTools?: readonly ClientToolDeclaration[];
};

/** The options a job carries. */
const SERIALIZABLE: readonly (keyof SubmitOptions)[] = [
  'prompt',
  'sessionId',
  'threadId',
  'history',
  'state',
  'provider',
  'timeoutMs',
  'maxTurns',
  'outcome',
  'requireTerminalTool',
  'terminalTool',
  'maxReprompts',
  'retainEvents',
  'clientTools',
  'clientAnswers',
  'outputSchema',
  'model',
  'instructions',
  'temperature',
  'topP',
  'maxOutputTokens',
];

/** Why each non-serializable option of `start` is refused, and what to use instead. */
const REFUSED: Readonly<Record<string, string>> = {
  confirmTool:
    'a function cannot travel to a worker in another process; answer confirmation requests with handle.sendEvent({ type: "user.tool_confirmation", … })',
  turnGuard: 'a function cannot travel to a worker in another process; bound the run with maxTurns and timeoutMs',
  signal: 'an AbortSignal cannot travel to a worker in another process; call handle.cancel() instead',
  tools: 'tool handlers cannot travel to a worker in another process; register tools with the workers, or declare client-answered tools in clientTools',
};

/** The data of a session job: version, submission id and the options. */
export interface SessionJobData {
  readonly v: 1;
  readonly submissionId: string;
  readonly options: SubmitOptions;
  /**
   * The lease of the submitting client's handles (ms): the owner closes the session once it is
   * idle and no handle renewed its lease within this long. Absent (a client of an older build):
   * only the worker's idle time closes it.
   */
  readonly clientLeaseMs?: number;
}

/**
 * Checks submit options before anything is enqueued, listing every problem in one
 * `invalid_options`: non-serializable options (with why and what to use instead), unknown keys,
 * values that are not plain JSON, and what `start` itself would refuse (types and ranges; tool
 * names and provider support are checked by the worker, which knows them). Returns a plain copy.
 */
export function checkSubmitOptions(opts: unknown): SubmitOptions {
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) throw new AgentRxError('invalid_options', 'submit(options): options must be an object');
  const problems: string[] = [];
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(opts)) {
    if (value === undefined) continue;
    if (REFUSED[key] !== undefined) problems.push(`${key}: not accepted by submit: ${REFUSED[key]}`);
    else if (!(SERIALIZABLE as readonly string[]).includes(key)) problems.push(`${key}: unknown option; submit accepts ${SERIALIZABLE.join(', ')}`);
    else if (key === 'outputSchema' && (typeof value === 'function' || isStandardSchema(value)))
      problems.push(
        'outputSchema: a class or a Standard Schema cannot travel to a worker in another process; pass its JSON Schema (zod: z.toJSONSchema(schema)), and the handle gets the output as parsed JSON',
      );
    else if (!isJson(value)) problems.push(`${key}: must be plain JSON (strings, numbers, booleans, arrays, objects) to travel to a worker`);
    else copy[key] = value;
  }
  problems.push(...declarationProblems(copy['clientTools']));
  if (problems.length > 0) throw new AgentRxError('invalid_options', `invalid submit options:\n${problems.map((p) => `- ${p}`).join('\n')}`, { problems });
  const submitted = copy as SubmitOptions;
  // Types and ranges as `start` checks them; the worker checks the rest against its registry.
  const terminal = submitted.terminalTool;
  resolveSessionOptions(sessionOptionsOf(submitted), DEFAULTS, {
    toolNames: typeof terminal === 'string' ? [terminal] : [],
    supportsOutcomes: true,
    providerId: submitted.provider ?? 'the configured provider',
    toolsPerCall: true,
    runSettings: RUN_SETTINGS,
  });
  return submitted;
}

/**
 * The options a worker starts a submitted session with: the client's tool declarations become
 * client-answered session tools (their calls wait for `answerClient`, see `ClientCalls`).
 */
export function sessionOptionsOf(options: SubmitOptions): SessionOptions {
  const { clientTools, ...rest } = options;
  if (clientTools === undefined || clientTools.length === 0) return rest;
  return { ...rest, tools: new ClientCalls().handlers(clientTools, 'client (submitted)') };
}

/** What is wrong with `clientTools` (a list of `{ name, description?, parameters?, timeoutMs? }`). */
function declarationProblems(tools: unknown): string[] {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) return ['clientTools: must be an array of { name, description?, parameters?, timeoutMs? }'];
  return tools.flatMap((t: unknown, i) => {
    if (typeof t !== 'object' || t === null || Array.isArray(t)) return [`clientTools[${i}]: must be an object`];
    const { name, description, parameters, timeoutMs } = t as Record<string, unknown>;
    const problems: string[] = [];
    if (typeof name !== 'string' || name === '') problems.push(`clientTools[${i}].name: must be a non-empty string`);
    if (description !== undefined && typeof description !== 'string') problems.push(`clientTools[${i}].description: must be a string`);
    if (parameters !== undefined && (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)))
      problems.push(`clientTools[${i}].parameters: must be a JSON Schema object`);
    if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !(timeoutMs > 0))) problems.push(`clientTools[${i}].timeoutMs: must be a positive number`);
    return problems;
  });
}

const DEFAULTS = {
  timeoutMs: 1,
  maxTurns: 1,
  maxReprompts: 0,
  retainEvents: false,
  toolTimeoutMs: 1,
  toolConcurrency: 1,
  reconnectAttempts: 0,
  reconnectBaseMs: 1,
  dedupeWindow: 1,
};

function isJson(v: unknown, depth = 0): boolean {
  if (depth > 32) return false;
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every((x) => isJson(x, depth + 1));
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v) as unknown;
    return (proto === Object.prototype || proto === null) && Object.values(v as object).every((x) => x === undefined || isJson(x, depth + 1));
  }
  return false;
}
