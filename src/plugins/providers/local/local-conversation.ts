import { randomUUID } from 'node:crypto';
import { AgentRxError } from '../../../core/errors.js';
import { NO_RESULT_CONTENT, type AgentSpec, type ToolResult, type ToolUse } from '../../../core/model.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds, jsonText } from '../../../core/util/json-depth.js';
import { isMap, truncate, type ChatCompletionResult, type WireMap } from './chat-stream.js';
import { LocalCallIds } from './local-call-ids.js';
import type { LocalToolCallDelta } from './local-stream-calls.js';
import { DUPLICATE_TOOL_CONTENT, FINAL_TURN_DIRECTIVE, callKey, correctiveDirective } from './loop-guards.js';

/**
 * The client-held conversation of a `local` session: its state (the conn), how an input and the
 * loop guards change the history before a model call, and how the model's answer is taken into
 * it. Guard order follows wire-protocols 3(c): 1–4 when a turn is staged, 6–7 when its answer is
 * accepted (5, the model call, is the provider's).
 */

/** Input of one `pollTurn`: messages to append (kickoff, follow-up) or tool results (resume). */
export type LocalInput =
  | { readonly kind: 'messages'; readonly messages: readonly WireMap[] }
  | { readonly kind: 'resume'; readonly toolUses: readonly ToolUse[]; readonly results: readonly ToolResult[] };

/** Raw events the `local` provider synthesizes (all under the `local.*` namespace). */
export type LocalRawEvent =
  /**
   * One streamed `chat.completion.chunk`, verbatim, as it arrived; `toolCallDeltas` names the
   * tool-call argument fragments it carries with the ToolUse ids their calls get (absent: none
   * streams), so a recorded chunk says what it streamed without the conn.
   */
  | { readonly type: 'local.chunk'; readonly chunk: WireMap; readonly toolCallDeltas?: readonly LocalToolCallDelta[] }
  /**
   * The model's answer for the poll (one per successful poll, last): `message` is the assistant
   * message with duplicate calls removed; `streamed` is true when folded from `local.chunk`s;
   * `toolUseIds` holds the ToolUse id of each call of `message`, in order (the model's id unless
   * the session already used it, see `LocalCallIds`).
   */
  | {
      readonly type: 'local.model_response';
      readonly message: WireMap;
      readonly finish_reason: unknown;
      readonly usage: unknown;
      readonly streamed: boolean;
      readonly toolUseIds?: readonly string[];
    }
  /** A loop-guard message appended to the history before the model call. */
  | { readonly type: 'local.directive'; readonly role: 'final_turn' | 'corrective'; readonly text: string }
  /** A repeated call, answered in history with a duplicate notice instead of being run (`id`: the model's). */
  | { readonly type: 'local.duplicate_tool_call'; readonly id: string; readonly toolUseId: string; readonly name: string; readonly input: unknown };

/** Per-session state of the `local` provider. Opaque to the Session. */
export interface LocalConn {
  readonly sessionId: string;
  readonly resumed: boolean;
  readonly model: string;
  /** Request fields of the session's own settings (sampling, `response_format`), sent on every model call. */
  readonly callFields: WireMap;
  /** Spec tools in OpenAI function format, read again before each model call (a ToolSource may change them). */
  tools: readonly WireMap[];
  /** The agent spec the session opened with (its `tools` are live). */
  readonly spec: AgentSpec;
  /** The session's signal: aborting it aborts every in-flight model call. */
  readonly signal: AbortSignal;
  /** The full conversation sent on every call (system, user, assistant, tool messages). */
  history: WireMap[];
  /** Model calls since the last user message. */
  polls: number;
  /** Dedupe keys of the calls made since the last user message. */
  seen: Set<string>;
  /** Consecutive error results per tool name since the last user message. */
  errorCounts: Map<string, number>;
  /** The ToolUse ids of the conversation's calls (unique in the session; see `LocalCallIds`). */
  readonly callIds: LocalCallIds;
  readonly inflight: Set<AbortController>;
  closed: boolean;
  /** Model calls per request; the call that reaches it carries the final-turn directive. */
  readonly maxTurns: number | undefined;
}

/** Staged changes of one poll; committed to the conn only when the model call succeeds. */
export interface StagedTurn {
  history: WireMap[];
  polls: number;
  seen: Set<string>;
  errorCounts: Map<string, number>;
  /** Loop-guard messages the staging appended, as events (emitted before the model call). */
  directives: LocalRawEvent[];
}

/**
 * Applies `input` to a staged copy of the conn's conversation (guards 1–4): a user message starts
 * a new request (fresh turn budget, duplicate memory and error counts); tool results are appended
 * in use order, with a corrective directive after a tool's second consecutive error; the call that
 * reaches `maxTurns` gets the final-turn directive. The conn itself is not changed. Throws
 * `invalid_options` on an unknown input kind.
 */
export function stageTurn(conn: LocalConn, input: LocalInput): StagedTurn {
  const s: StagedTurn = {
    history: [...conn.history],
    polls: conn.polls,
    seen: new Set(conn.seen),
    errorCounts: new Map(conn.errorCounts),
    directives: [],
  };
  if (input.kind === 'messages') {
    s.history.push(...input.messages.map((m) => ({ ...m })));
    s.polls = 0;
    s.seen.clear();
    s.errorCounts.clear();
  } else if (input.kind === 'resume') {
    applyResume(s, input.toolUses, input.results, (id) => conn.callIds.wireId(id));
  } else {
    throw new AgentRxError('invalid_options', `Unknown local input kind: ${String((input as { kind?: unknown }).kind)}`);
  }
  const max = conn.maxTurns;
  if (max !== undefined && s.polls + 1 >= max) {
    s.history.push({ role: 'user', content: FINAL_TURN_DIRECTIVE });
    s.directives.push({ type: 'local.directive', role: 'final_turn', text: FINAL_TURN_DIRECTIVE });
  }
  s.polls += 1;
  return s;
}

/** Appends the tool messages of a resume; `wireId` gives the model's `tool_call_id` of a ToolUse id. */
function applyResume(s: StagedTurn, toolUses: readonly ToolUse[], results: readonly ToolResult[], wireId: (toolUseId: string) => string): void {
  const byId = new Map(results.map((r) => [r.toolUseId, r]));
  for (const use of toolUses) {
    const r = byId.get(use.id);
    const content = r ? (r.isError ? JSON.stringify({ error: r.content, isError: true }) : r.content) : NO_RESULT_CONTENT;
    s.history.push({ role: 'tool', tool_call_id: wireId(use.id), content });
  }
  for (const use of toolUses) {
    const r = byId.get(use.id);
    s.errorCounts.set(use.name, r && !r.isError ? 0 : (s.errorCounts.get(use.name) ?? 0) + 1);
    // A call that failed has no result to repeat: the same call again (a retry) must run.
    if (!r || r.isError) s.seen.delete(callKey(use.name, use.input));
  }
  const emitted = new Set<string>();
  for (const use of toolUses) {
    const r = byId.get(use.id);
    if (!r || !r.isError || (s.errorCounts.get(use.name) ?? 0) < 2) continue;
    const text = correctiveDirective(use.name, r.content);
    if (emitted.has(text)) continue;
    emitted.add(text);
    s.history.push({ role: 'user', content: text });
    s.directives.push({ type: 'local.directive', role: 'corrective', text });
  }
}

/**
 * Takes the model's answer into the staged conversation (guards 6–7) and commits it to the conn:
 * each call gets its ToolUse id (`LocalCallIds`); a call repeating one made since the last user
 * message is answered in history with the duplicate notice instead of being handed to the
 * Session. Returns the poll's closing events: one `local.duplicate_tool_call` per repeated call,
 * then the `local.model_response`.
 */
export function acceptResponse(conn: LocalConn, s: StagedTurn, result: ChatCompletionResult): LocalRawEvent[] {
  const message = normalizeAssistantMessage(result.message);
  s.history.push(message);
  const ids = conn.callIds.sync(s.history);
  const duplicates: LocalRawEvent[] = [];
  const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as WireMap[]) : undefined;
  const surviving: WireMap[] = [];
  const survivingIds: string[] = [];
  calls?.forEach((call, i) => {
    const fn = isMap(call['function']) ? call['function'] : {};
    const name = typeof fn['name'] === 'string' ? fn['name'] : '';
    const key = callKey(name, fn['arguments']);
    if (s.seen.has(key)) {
      const id = String(call['id']);
      s.history.push({ role: 'tool', tool_call_id: id, content: DUPLICATE_TOOL_CONTENT });
      duplicates.push({ type: 'local.duplicate_tool_call', id, toolUseId: ids[i]!, name, input: toToolUse(call).input });
    } else {
      s.seen.add(key);
      surviving.push(call);
      survivingIds.push(ids[i]!);
    }
  });
  conn.history = s.history;
  conn.polls = s.polls;
  conn.seen = s.seen;
  conn.errorCounts = s.errorCounts;
  const eventMessage = calls === undefined ? message : { ...message, tool_calls: surviving };
  return [
    ...duplicates,
    {
      type: 'local.model_response',
      message: eventMessage,
      finish_reason: result.finish_reason,
      usage: result.usage,
      streamed: result.streamed,
      ...(calls === undefined ? {} : { toolUseIds: survivingIds }),
    },
  ];
}

/**
 * Ensures every tool call has an id and string arguments, so `tool` answers can reference it.
 * Decoded (object) arguments are written back as text iteratively, whatever their depth.
 */
function normalizeAssistantMessage(raw: WireMap): WireMap {
  const message: WireMap = { ...raw, role: 'assistant' };
  if (message['content'] === undefined) message['content'] = null;
  if (Array.isArray(raw['tool_calls'])) {
    const calls = raw['tool_calls'].filter(isMap).map((c) => {
      const fn = isMap(c['function']) ? c['function'] : {};
      const args = fn['arguments'];
      return {
        ...c,
        id: typeof c['id'] === 'string' && c['id'] !== '' ? c['id'] : newCallId(),
        type: 'function',
        function: {
          ...fn,
          name: typeof fn['name'] === 'string' ? fn['name'] : '',
          arguments: typeof args === 'string' ? args : args == null ? '' : jsonText(args),
        },
      };
    });
    if (calls.length > 0) message['tool_calls'] = calls;
    else delete message['tool_calls'];
  }
  return message;
}

/**
 * A wire tool call → ToolUse, with `toolUseId` as its id (default: the call's own id). Arguments
 * that are not a JSON object, or that nest deeper than `MAX_JSON_DEPTH`, set `inputError` (input
 * `{}`): such input never reaches a recursive walk (validation, serialization of events).
 */
export function toToolUse(call: WireMap, toolUseId?: string): ToolUse {
  const fn = isMap(call['function']) ? call['function'] : {};
  const id = toolUseId ?? (typeof call['id'] === 'string' ? call['id'] : '');
  const name = typeof fn['name'] === 'string' ? fn['name'] : '';
  const args = fn['arguments'];
  const tooDeep = (v: unknown): ToolUse | undefined =>
    jsonDepthExceeds(v, MAX_JSON_DEPTH) ? { id, name, input: {}, inputError: `Tool arguments are nested deeper than ${MAX_JSON_DEPTH} levels.` } : undefined;
  if (isMap(args)) return tooDeep(args) ?? { id, name, input: args };
  if (args === undefined || args === null || (typeof args === 'string' && args.trim() === '')) return { id, name, input: {} };
  if (typeof args !== 'string') return { id, name, input: {}, inputError: `Tool arguments must be a JSON object, got ${typeof args}.` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { id, name, input: {}, inputError: `Tool arguments are not valid JSON (${why}): ${truncate(args, 200)}` };
  }
  if (isMap(parsed)) return tooDeep(parsed) ?? { id, name, input: parsed };
  return {
    id,
    name,
    input: {},
    inputError: `Tool arguments must be a JSON object, got ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed}.`,
  };
}

/** A fresh tool-call id, for calls the model (or a server) sent without one. */
export function newCallId(): string {
  return `call_local_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/**
 * The tool calls of the last assistant message in `history` that no later `tool` message answers,
 * in call order, with the ToolUse ids the live session gave them (`LocalCallIds`): what a
 * conversation restored after a crash still owes the model. When the model used one id for
 * several calls of the message, each `tool` message with that id answers one of them, in order.
 */
export function unansweredCalls(history: readonly WireMap[]): ToolUse[] {
  let last = history.length - 1;
  while (last >= 0 && history[last]!['role'] !== 'assistant') last--;
  if (last < 0 || !Array.isArray(history[last]!['tool_calls'])) return [];
  const ids = new LocalCallIds().sync(history.slice(0, last + 1));
  const answers = new Map<string, number>();
  for (const m of history.slice(last + 1)) {
    if (m['role'] === 'tool') answers.set(String(m['tool_call_id']), (answers.get(String(m['tool_call_id'])) ?? 0) + 1);
  }
  const owed: ToolUse[] = [];
  (history[last]!['tool_calls'] as unknown[]).forEach((c, i) => {
    if (!isMap(c)) return;
    const wire = String(c['id']);
    const left = answers.get(wire) ?? 0;
    if (left > 0) answers.set(wire, left - 1);
    else owed.push(toToolUse(c, ids[i]));
  });
  return owed;
}
