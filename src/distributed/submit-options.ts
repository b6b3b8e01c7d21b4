import { AgentRxError } from '../core/errors.js';
import { resolveSessionOptions, type SessionOptions } from '../core/session/session-options.js';

/**
 * Options of `SessionQueue.submit`: the options of `rx.start` that can travel to a worker in
 * another process as JSON. Functions and signals cannot: `confirmTool` (answer confirmations with
 * `handle.sendEvent`), `turnGuard` (use `maxTurns`/`timeoutMs`) and `signal` (use `handle.cancel()`).
 */
export type SubmitOptions = Omit<SessionOptions, 'signal' | 'turnGuard' | 'confirmTool'>;

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
];

/** Why each non-serializable option of `start` is refused, and what to use instead. */
const REFUSED: Readonly<Record<string, string>> = {
  confirmTool:
    'a function cannot travel to a worker in another process; answer confirmation requests with handle.sendEvent({ type: "user.tool_confirmation", … })',
  turnGuard: 'a function cannot travel to a worker in another process; bound the run with maxTurns and timeoutMs',
  signal: 'an AbortSignal cannot travel to a worker in another process; call handle.cancel() instead',
};

/** The data of a session job: version, submission id and the options. */
export interface SessionJobData {
  readonly v: 1;
  readonly submissionId: string;
  readonly options: SubmitOptions;
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
    else if (!isJson(value)) problems.push(`${key}: must be plain JSON (strings, numbers, booleans, arrays, objects) to travel to a worker`);
    else copy[key] = value;
  }
  if (problems.length > 0) throw new AgentRxError('invalid_options', `invalid submit options:\n${problems.map((p) => `- ${p}`).join('\n')}`, { problems });
  const submitted = copy as SubmitOptions;
  // Types and ranges as `start` checks them; the worker checks the rest against its registry.
  const terminal = submitted.terminalTool;
  resolveSessionOptions(submitted, DEFAULTS, {
    toolNames: typeof terminal === 'string' ? [terminal] : [],
    supportsOutcomes: true,
    providerId: submitted.provider ?? 'the configured provider',
  });
  return submitted;
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
