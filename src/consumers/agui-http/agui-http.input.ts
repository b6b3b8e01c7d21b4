import type { PriorMessage } from '../../core/model.js';

/** An AG-UI `context` entry: something the client tells the agent for this run. */
export interface AgUiContextEntry {
  readonly description: string;
  readonly value: string;
}

/** The part of an AG-UI `RunAgentInput` the endpoint reads, after validation. */
export interface AgUiRunRequest {
  /** The client's thread id: one agentrx session per thread. */
  readonly threadId: string;
  /** The client's run id: RUN_STARTED and RUN_FINISHED carry it back. */
  readonly runId: string;
  /** Text of the last user message: the prompt of a new thread, the follow-up of a known one. */
  readonly text: string;
  /** Id of that user message. */
  readonly messageId: string;
  /**
   * The conversation before that message (system/developer, user, assistant with its tool calls,
   * tool results), oldest first; activity and reasoning messages are left out. Carried into a new
   * session when the server has no session for the thread.
   */
  readonly history: readonly PriorMessage[];
  /** The run's `context` entries (they reach the model with the message). */
  readonly context: readonly AgUiContextEntry[];
  /** The client's shared state (a JSON object), when it sent one: the agent's state for the run. */
  readonly state?: Readonly<Record<string, unknown>>;
}

/** Either the request, or every problem found in the body. */
export type AgUiRunRequestResult = { readonly ok: true; readonly request: AgUiRunRequest } | { readonly ok: false; readonly problems: readonly string[] };

/** Longest accepted `threadId` / `runId`. */
export const MAX_ID_LENGTH = 256;

const ROLES = new Set(['developer', 'system', 'assistant', 'user', 'tool', 'activity', 'reasoning']);

/**
 * Validates a parsed AG-UI `RunAgentInput` body (AG-UI 1.0) and extracts what a run needs. Every
 * problem is listed, each as `<path>: <what is wrong>`:
 * - `threadId`, `runId`: non-empty strings of at most {@link MAX_ID_LENGTH} characters;
 * - `messages`: an array of objects, each with a string `id` and a known `role`; a user
 *   message's `content` is a string or an array of content parts (objects with a string `type`);
 * - the last user message must carry text (a string, or `text` parts);
 * - `tools`, `context`, `resume` (when present): arrays; `tools[i].name`: a string;
 *   `parentRunId`, `protocolVersion` (when present): strings; `forwardedProps` (when present): an object.
 * `state` (when present): a JSON object, the agent's state. Unknown top-level keys are ignored (forward compatibility). Tools
 * declared by the client (frontend tools) are not offered to the agent: agentrx runs its own.
 */
export function parseRunAgentInput(body: unknown): AgUiRunRequestResult {
  if (!isRecord(body)) return { ok: false, problems: [`body: must be a JSON object (RunAgentInput); got ${kind(body)}`] };
  const problems: string[] = [];
  const id = (key: 'threadId' | 'runId'): string => {
    const v = body[key];
    if (v === undefined) problems.push(`${key}: required, a non-empty string`);
    else if (typeof v !== 'string') problems.push(`${key}: must be a string; got ${kind(v)}`);
    else if (v.length === 0) problems.push(`${key}: must not be empty`);
    else if (v.length > MAX_ID_LENGTH) problems.push(`${key}: must be at most ${MAX_ID_LENGTH} characters; got ${v.length}`);
    else return v;
    return '';
  };
  const threadId = id('threadId');
  const runId = id('runId');

  let last: { text: string; messageId: string } | undefined;
  let lastUserIndex = -1;
  const messages = body['messages'];
  if (messages === undefined) problems.push('messages: required, an array of messages with at least one user message');
  else if (!Array.isArray(messages)) problems.push(`messages: must be an array; got ${kind(messages)}`);
  else {
    messages.forEach((m: unknown, i) => {
      const at = `messages[${i}]`;
      if (!isRecord(m)) {
        problems.push(`${at}: must be an object; got ${kind(m)}`);
        return;
      }
      if (typeof m['id'] !== 'string') problems.push(`${at}.id: required, a string`);
      const role = m['role'];
      if (typeof role !== 'string' || !ROLES.has(role)) {
        problems.push(`${at}.role: must be one of ${[...ROLES].join(', ')}; got ${typeof role === 'string' ? JSON.stringify(role) : kind(role)}`);
        return;
      }
      if (role !== 'user') return;
      lastUserIndex = i;
      const text = userText(m['content'], `${at}.content`, problems);
      last = text !== undefined && typeof m['id'] === 'string' ? { text, messageId: m['id'] } : undefined;
    });
    if (lastUserIndex < 0) problems.push('messages: no user message; the last user message is the prompt');
    else if (last === undefined || last.text.trim() === '') {
      if (!problems.some((p) => p.startsWith(`messages[${lastUserIndex}]`))) problems.push(`messages[${lastUserIndex}].content: the last user message has no text`);
    }
  }

  for (const key of ['tools', 'context', 'resume'] as const) {
    const v = body[key];
    if (v !== undefined && !Array.isArray(v)) problems.push(`${key}: must be an array; got ${kind(v)}`);
  }
  if (Array.isArray(body['tools'])) {
    (body['tools'] as unknown[]).forEach((t, i) => {
      if (!isRecord(t) || typeof t['name'] !== 'string') problems.push(`tools[${i}].name: required, a string`);
    });
  }
  for (const key of ['parentRunId', 'protocolVersion'] as const) {
    const v = body[key];
    if (v !== undefined && typeof v !== 'string') problems.push(`${key}: must be a string; got ${kind(v)}`);
  }
  if (body['forwardedProps'] !== undefined && !isRecord(body['forwardedProps'])) problems.push(`forwardedProps: must be an object; got ${kind(body['forwardedProps'])}`);

  const context = contextEntries(body['context'], problems);
  if (body['state'] !== undefined && body['state'] !== null && !isRecord(body['state'])) problems.push(`state: must be a JSON object (the shared state); got ${kind(body['state'])}`);
  const history = Array.isArray(messages) && lastUserIndex > 0 ? priorMessages(messages.slice(0, lastUserIndex), problems) : [];

  if (problems.length > 0 || last === undefined) return { ok: false, problems };
  const state = body['state'];
  return { ok: true, request: { threadId, runId, text: last.text, messageId: last.messageId, history, context, ...(isRecord(state) ? { state } : {}) } };
}

/**
 * The messages before the prompt as PriorMessages; records a problem for an assistant tool call or
 * a tool message that is malformed, and for a tool message answering a call no earlier assistant
 * message made.
 */
function priorMessages(messages: readonly unknown[], problems: string[]): PriorMessage[] {
  const calls = new Set<string>();
  const out: PriorMessage[] = [];
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    // A message that is not an object or has an unknown role was reported already.
    if (!isRecord(m) || typeof m['role'] !== 'string' || !ROLES.has(m['role'])) return;
    const role = m['role'];
    if (role === 'activity' || role === 'reasoning') return;
    if (role === 'user') {
      // Its content was checked with the other messages: problems are not listed twice.
      const text = userText(m['content'], `${at}.content`, []);
      if (text !== undefined) out.push({ role: 'user', content: text });
      return;
    }
    const content = m['content'] ?? '';
    if (typeof content !== 'string') return void problems.push(`${at}.content: must be a string; got ${kind(content)}`);
    if (role === 'system' || role === 'developer') return void out.push({ role: 'system', content });
    if (role === 'tool') {
      const id = m['toolCallId'];
      if (typeof id !== 'string') return void problems.push(`${at}.toolCallId: required on a tool message, a string`);
      if (!calls.has(id)) return void problems.push(`${at}.toolCallId: ${JSON.stringify(id.slice(0, 100))} answers no tool call of an earlier assistant message`);
      return void out.push({ role: 'tool', content, toolCallId: id });
    }
    const raw = m['toolCalls'];
    if (raw !== undefined && !Array.isArray(raw)) return void problems.push(`${at}.toolCalls: must be an array; got ${kind(raw)}`);
    const toolCalls = ((raw ?? []) as unknown[]).flatMap((c, j) => {
      const fn = isRecord(c) && isRecord(c['function']) ? c['function'] : undefined;
      if (!isRecord(c) || typeof c['id'] !== 'string' || !fn || typeof fn['name'] !== 'string' || typeof fn['arguments'] !== 'string') {
        problems.push(`${at}.toolCalls[${j}]: must be { id, type: 'function', function: { name, arguments } } with strings`);
        return [];
      }
      calls.add(c['id']);
      return [{ id: c['id'], name: fn['name'], arguments: fn['arguments'] }];
    });
    out.push(toolCalls.length > 0 ? { role: 'assistant', content, toolCalls } : { role: 'assistant', content });
  });
  return out;
}

/** The `context` entries (validated: objects with string `description` and `value`). */
function contextEntries(raw: unknown, problems: string[]): AgUiContextEntry[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((c: unknown, i) => {
    if (isRecord(c) && typeof c['description'] === 'string' && typeof c['value'] === 'string') return [{ description: c['description'], value: c['value'] }];
    problems.push(`context[${i}]: must be { description, value } with strings`);
    return [];
  });
}

/** The message text a run sends: the user's text, then the run's context entries as a delimited block. */
export function withContext(text: string, context: readonly AgUiContextEntry[]): string {
  if (context.length === 0) return text;
  const lines = context.map((c) => `- ${c.description}: ${c.value}`);
  return `${text}\n\n<context>\nContext the client provides for this message:\n${lines.join('\n')}\n</context>`;
}

/** The text of a user message's content, or undefined after recording why there is none. */
function userText(content: unknown, at: string, problems: string[]): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) {
    problems.push(`${at}: must be a string or an array of content parts; got ${kind(content)}`);
    return undefined;
  }
  const texts: string[] = [];
  let valid = true;
  content.forEach((part: unknown, j) => {
    if (!isRecord(part) || typeof part['type'] !== 'string') {
      problems.push(`${at}[${j}].type: required, a string`);
      valid = false;
    } else if (part['type'] === 'text') {
      if (typeof part['text'] === 'string') texts.push(part['text']);
      else {
        problems.push(`${at}[${j}].text: required, a string`);
        valid = false;
      }
    }
  });
  return valid ? texts.join('\n') : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : typeof v;
}
