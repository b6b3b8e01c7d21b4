import type { PriorMessage } from '../../core/model.js';
import { stateShapeProblem } from '../../core/session/agent-state.js';
import { repairHistory } from './agui-http.history-repair.js';
import { wireVersionOf, type AgUiWireVersion } from './agui-http.wire-version.js';

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
   * session when the server has no session for the thread. Repaired for the model: every tool call
   * is answered right after its message, a call the client holds no result for by an explicit "no
   * result" tool message (`repairHistory`), except the calls the run's tool results answer.
   */
  readonly history: readonly PriorMessage[];
  /** The run's `context` entries (they reach the model with the message). */
  readonly context: readonly AgUiContextEntry[];
  /** The client's shared state (a JSON object), when it sent one: the agent's state for the run. */
  readonly state?: Readonly<Record<string, unknown>>;
  /** Tools the client runs itself (frontend tools), offered to the model next to the server's. */
  readonly clientTools: readonly AgUiClientTool[];
  /**
   * The tool messages after the last assistant message with tool calls, when no user message
   * follows them: the results of frontend tool calls a waiting run asked for (`text` is then '').
   */
  readonly toolResults: readonly AgUiToolResult[];
  /** The client's answers to the interrupts the thread's last run ended with. */
  readonly resume: readonly AgUiResumeEntry[];
  /** The request's messages as sent (each an object with an `id` and a known `role`): the run's MESSAGES_SNAPSHOT starts from them. */
  readonly messages: readonly Record<string, unknown>[];
  /** The AG-UI version the client announced (`protocolVersion`; none: `0.0`): the shape of the events it gets. */
  readonly wireVersion: AgUiWireVersion;
}

/** A tool declared in `RunAgentInput.tools`: the client runs it. */
export interface AgUiClientTool {
  readonly name: string;
  readonly description: string;
  /** Its input's JSON Schema (an object schema). */
  readonly parameters: Record<string, unknown>;
}

/** A `tool` message answering a frontend tool call. */
export interface AgUiToolResult {
  readonly toolCallId: string;
  readonly content: string;
  /** The tool message's id. */
  readonly messageId: string;
}

/** A `RunAgentInput.resume` entry (AG-UI 1.0): the answer to one interrupt. */
export interface AgUiResumeEntry {
  readonly interruptId: string;
  readonly status: 'resolved' | 'cancelled';
  readonly payload?: unknown;
}

/** Either the request, or every problem found in the body. */
export type AgUiRunRequestResult = { readonly ok: true; readonly request: AgUiRunRequest } | { readonly ok: false; readonly problems: readonly string[] };

/** Longest accepted `threadId` / `runId`. */
export const MAX_ID_LENGTH = 256;

/** AG-UI 1.0 content parts of a user message (`binary` from 0.0.x); only `text` reaches the model. */
const CONTENT_PARTS = new Set(['text', 'image', 'audio', 'video', 'document', 'binary']);

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
 * `state` (when present): a JSON object, the agent's state. Unknown top-level keys are ignored (forward compatibility).
 * `tools` are the client's frontend tools (`{ name, description, parameters }`), `resume` its
 * answers to interrupts; `protocolVersion` (e.g. `1.0.0`, what `@ag-ui/client` 1.x sends) sets
 * `wireVersion`. A request whose messages end with tool messages after an assistant
 * message's tool calls (no user message after them) answers those calls: `toolResults`, no `text`.
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
  /** Index of the first of the tool messages that end the list (after an assistant message), if any. */
  let trailingTools = -1;
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
      if (role === 'tool') {
        if (trailingTools < 0 && i > 0 && isRecord(messages[i - 1]) && (messages[i - 1] as Record<string, unknown>)['role'] === 'assistant') trailingTools = i;
        return;
      }
      if (role !== 'activity' && role !== 'reasoning') trailingTools = -1;
      if (role !== 'user') return;
      lastUserIndex = i;
      const text = userText(m['content'], `${at}.content`, problems);
      last = text !== undefined && typeof m['id'] === 'string' ? { text, messageId: m['id'] } : undefined;
    });
    if (lastUserIndex < 0) problems.push('messages: no user message; the last user message is the prompt');
    else if (trailingTools > lastUserIndex) {
      // The run answers frontend tool calls: no new prompt.
    } else if (last === undefined || last.text.trim() === '') {
      if (!problems.some((p) => p.startsWith(`messages[${lastUserIndex}]`)))
        problems.push(`messages[${lastUserIndex}].content: the last user message has no text`);
    }
  }

  for (const key of ['tools', 'context', 'resume'] as const) {
    const v = body[key];
    if (v !== undefined && !Array.isArray(v)) problems.push(`${key}: must be an array; got ${kind(v)}`);
  }
  const clientTools = toolsOf(body['tools'], problems);
  const resume = resumeEntries(body['resume'], problems);
  for (const key of ['parentRunId', 'protocolVersion'] as const) {
    const v = body[key];
    if (v !== undefined && typeof v !== 'string') problems.push(`${key}: must be a string; got ${kind(v)}`);
  }
  if (body['forwardedProps'] !== undefined && !isRecord(body['forwardedProps']))
    problems.push(`forwardedProps: must be an object; got ${kind(body['forwardedProps'])}`);

  const context = contextEntries(body['context'], problems);
  if (body['state'] !== undefined && body['state'] !== null && !isRecord(body['state']))
    problems.push(`state: must be a JSON object (the shared state); got ${kind(body['state'])}`);
  else if (body['state'] !== undefined && body['state'] !== null) {
    const shape = stateShapeProblem(body['state']);
    if (shape !== undefined) problems.push(`state: ${shape}`);
  }
  const answering = Array.isArray(messages) && trailingTools > lastUserIndex && lastUserIndex >= 0;
  const historyEnd = answering ? trailingTools : lastUserIndex;
  const history = Array.isArray(messages) && historyEnd > 0 ? repairHistory(priorMessages(messages.slice(0, historyEnd), problems), answering) : [];
  const toolResults = answering ? toolResultsOf(messages as unknown[], trailingTools, problems) : [];

  if (problems.length > 0 || last === undefined) return { ok: false, problems };
  const state = body['state'];
  const prompt = answering ? { text: '', messageId: '' } : last;
  return {
    ok: true,
    request: {
      threadId,
      runId,
      text: prompt.text,
      messageId: prompt.messageId,
      history,
      context,
      ...(isRecord(state) ? { state } : {}),
      clientTools,
      toolResults,
      resume,
      messages: (messages as unknown[]).filter(isRecord),
      wireVersion: wireVersionOf(typeof body['protocolVersion'] === 'string' ? body['protocolVersion'] : undefined),
    },
  };
}

/** The tool messages from `from` to the end, answering calls of the assistant message before them. */
function toolResultsOf(messages: readonly unknown[], from: number, problems: string[]): AgUiToolResult[] {
  const asker = messages[from - 1] as Record<string, unknown>;
  const calls = new Set(
    Array.isArray(asker['toolCalls']) ? (asker['toolCalls'] as unknown[]).flatMap((c) => (isRecord(c) && typeof c['id'] === 'string' ? [c['id']] : [])) : [],
  );
  const out: AgUiToolResult[] = [];
  for (let i = from; i < messages.length; i++) {
    const m = messages[i] as Record<string, unknown>;
    if (m['role'] !== 'tool') continue;
    const at = `messages[${i}]`;
    const id = m['toolCallId'];
    const content = m['content'] ?? '';
    if (typeof id !== 'string') problems.push(`${at}.toolCallId: required on a tool message, a string`);
    else if (!calls.has(id)) problems.push(`${at}.toolCallId: ${JSON.stringify(id.slice(0, 100))} answers no tool call of the assistant message before it`);
    else if (typeof content !== 'string') problems.push(`${at}.content: must be a string; got ${kind(content)}`);
    else out.push({ toolCallId: id, content, messageId: typeof m['id'] === 'string' ? m['id'] : '' });
  }
  return out;
}

/** Longest accepted tool name (what model APIs accept). */
const MAX_TOOL_NAME = 64;

/** The client's tools: `{ name, description, parameters }` with a JSON Schema object as parameters. */
function toolsOf(raw: unknown, problems: string[]): AgUiClientTool[] {
  if (!Array.isArray(raw)) return [];
  const names = new Set<string>();
  return raw.flatMap((t: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isRecord(t) || typeof t['name'] !== 'string') return (void problems.push(`${at}.name: required, a string`), []);
    const name = t['name'];
    if (!/^[a-zA-Z0-9_-]+$/.test(name) || name.length > MAX_TOOL_NAME)
      return (void problems.push(`${at}.name: must be 1–${MAX_TOOL_NAME} letters, digits, '_' or '-'; got ${JSON.stringify(name.slice(0, 80))}`), []);
    if (names.has(name)) return (void problems.push(`${at}.name: '${name}' is declared twice`), []);
    names.add(name);
    const description = t['description'] ?? '';
    if (typeof description !== 'string') return (void problems.push(`${at}.description: must be a string; got ${kind(description)}`), []);
    const parameters = t['parameters'] ?? { type: 'object', properties: {} };
    if (!isRecord(parameters)) return (void problems.push(`${at}.parameters: must be a JSON Schema object; got ${kind(parameters)}`), []);
    return [{ name, description, parameters }];
  });
}

/** The `resume` entries: `{ interruptId, status: 'resolved' | 'cancelled', payload? }`. */
function resumeEntries(raw: unknown, problems: string[]): AgUiResumeEntry[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((r: unknown, i) => {
    const at = `resume[${i}]`;
    if (!isRecord(r) || typeof r['interruptId'] !== 'string') return (void problems.push(`${at}.interruptId: required, a string`), []);
    const status = r['status'];
    if (status !== 'resolved' && status !== 'cancelled')
      return (void problems.push(`${at}.status: must be 'resolved' or 'cancelled'; got ${JSON.stringify(status)}`), []);
    return [{ interruptId: r['interruptId'], status, ...(r['payload'] !== undefined ? { payload: r['payload'] } : {}) }];
  });
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
      if (!calls.has(id))
        return void problems.push(`${at}.toolCallId: ${JSON.stringify(id.slice(0, 100))} answers no tool call of an earlier assistant message`);
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
    } else if (!CONTENT_PARTS.has(part['type'])) {
      problems.push(`${at}[${j}].type: unknown content part ${JSON.stringify(part['type'].slice(0, 40))}; one of ${[...CONTENT_PARTS].join(', ')}`);
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
